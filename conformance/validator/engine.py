"""Running rules over a dataset.

The engine calls each selected rule on the dataset (dataset-scoped rules) and
on each selected version (version-scoped rules), collects what they yield as
:class:`~conformance.validator.registry.Finding` objects, and guarantees that
no exception escapes: a rule that fails unexpectedly is reported as an
``validator.internal-error`` finding naming the rule, so that a bug in one rule
never hides the findings of the others. A file or directory a rule cannot read
(permission denied, an I/O error, a named pipe where a file belongs) is a
``validator.unreadable`` finding naming the path: the dataset cannot be vouched
for, but nothing is wrong with the rule. The report is produced even when the
dataset cannot be listed at all.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Protocol

from reference_impl.commit.external_store import ExternalManifestStore
from reference_impl.dataset import uri_manifest_store
from reference_impl.errors import NotADatasetError, UnreadablePathError
from reference_impl.naming import LEGACY_LATEST, version_not_found
from reference_impl.storage import DatasetUri, open_storage, parse_dataset_uri

from ..requirements import requirement
from ..spec_revisions import NEWEST, REVISIONS, SpecRevision, revision
from .context import DatasetView, default_io_threads
from .registry import Finding, Rule, Scope, Severity
from .ruleset import iter_rules
from .writer_defects import explain

if TYPE_CHECKING:
    from .baseline import BaselineOutcome

INTERNAL_ERROR_RULE = "validator.internal-error"
UNREADABLE_RULE = "validator.unreadable"


#: The version of the validation report's shape (JSON ``report_format``, the JUnit
#: ``report_format`` property, SARIF ``runs[].properties.reportFormat``); bump it
#: when a field changes meaning or goes away (CHANGELOG.md).
REPORT_FORMAT = 1


@dataclass
class Report:
    dataset: str
    versions: list[int]
    rules: list[str]
    findings: list[Finding] = dc_field(default_factory=list)
    #: What a baseline took out of ``findings`` (conformance/validator/baseline.py); None without one.
    baseline: BaselineOutcome | None = None
    #: The format revision the dataset was checked against.
    spec_revision: SpecRevision = NEWEST
    #: Whether data pages were decoded (``validate --deep``).
    deep: bool = False

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def has_errors(self) -> bool:
        return self.count(Severity.ERROR) > 0

    def summary(self) -> dict:
        return {
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
            "infos": self.count(Severity.INFO),
            "versions_checked": len(self.versions),
            "rules_run": len(self.rules),
            "suppressed": len(self.baseline.suppressed) if self.baseline else 0,
        }

    def to_json(self) -> dict:
        document = {
            "report_format": REPORT_FORMAT,
            "dataset": self.dataset,
            "spec_revision": self.spec_revision.name,
            "deep": self.deep,
            "versions": self.versions,
            "findings": [f.to_json() for f in self.findings],
            "summary": self.summary(),
        }
        if self.baseline is not None:
            document["baseline"] = self.baseline.to_json()
        return document


class Distribution(Protocol):
    """Where a run sends work beyond this process (:mod:`.spark`): it may
    give the view a :attr:`~.context.DatasetView.loader` for the per-file
    reads, and may run the versions' rules elsewhere. Either way the report
    is the one a local run gives."""

    def attach(self, view: DatasetView) -> None:
        """Prepare ``view`` before any rule runs (set its loader)."""

    def run_versions(self, view: DatasetView, selected: list[Rule], versions: list[int]) -> list[list[Finding]] | None:
        """Each version's :func:`version_findings`, in the order of
        ``versions``; None to let the engine run them here."""


def open_dataset_view(
    path: str | os.PathLike | DatasetUri,
    storage_options: Mapping[str, str] | None = None,
    manifest_store: ExternalManifestStore | None = None,
) -> DatasetView:
    """A view of ``path`` (a local path, an ``s3://`` or ``s3+ddb://`` URI,
    reached with ``storage_options``), read-only, committed through
    ``manifest_store`` (or the store an ``s3+ddb`` URI names) when there is
    one; :class:`NotADatasetError` when it holds no dataset."""
    storage = open_storage(parse_dataset_uri(path), storage_options, writable=False)
    root = storage.location
    if not storage.root_is_dir():
        raise NotADatasetError(root, "not a directory" if storage.is_local else "no object under this prefix")
    store = manifest_store or uri_manifest_store(path, storage_options)
    view = DatasetView(storage, manifest_store=store)
    listing = view.listing
    if not listing.manifests() and not listing.staged and not storage.exists(LEGACY_LATEST):
        raise NotADatasetError(root, "no manifest under _versions/ and no _latest.manifest")
    return view


def unreadable_finding(
    root: str | os.PathLike, error: UnreadablePathError, requirements: tuple[str, ...], version: int | None, doing: str
) -> Finding:
    """The finding for a path that could not be read while ``doing``
    something; located relative to ``root`` when the path lies under it."""
    root_text = os.fspath(root)
    location = error.path
    if location == root_text or location.startswith(root_text.rstrip(os.sep) + os.sep):
        location = os.path.relpath(location, root_text)
    return Finding(UNREADABLE_RULE, Severity.ERROR, requirements, f"{doing}: {error}", version, location)


def _run(rule: Rule, subject, version: int | None) -> list[Finding]:
    findings = []
    try:
        for item in rule.check(subject) or ():
            if isinstance(item, Finding):
                findings.append(item)
            else:
                message, location, *symptom = item
                findings.append(
                    rule.finding(message, version=version, location=location, symptom=next(iter(symptom), None))
                )
    except UnreadablePathError as exc:
        storage = subject.storage if isinstance(subject, DatasetView) else subject.dataset.storage
        findings.append(
            unreadable_finding(storage.root, exc, rule.requirements, version, f"rule {rule.id} could not complete")
        )
    except Exception as exc:  # the engine's promise: one failing rule never stops validation
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        findings.append(
            Finding(
                INTERNAL_ERROR_RULE,
                Severity.ERROR,
                rule.requirements,
                f"rule {rule.id} could not complete: {detail}",
                version,
                None,
            )
        )
    return findings


def validate(
    path: str | os.PathLike,
    *,
    version: int | None = None,
    all_versions: bool = False,
    rules: list[str] | None = None,
    spec_revision: SpecRevision | str = NEWEST,
    storage_options: Mapping[str, str] | None = None,
    manifest_store: ExternalManifestStore | None = None,
    io_threads: int | None = None,
    distribution: Distribution | None = None,
    deep: bool = False,
) -> Report:
    """Validate ``path``: the latest version by default, one ``version``, or
    ``all_versions``. A ``version`` with no manifest (never committed, or
    removed by a cleanup) raises
    :class:`~reference_impl.errors.VersionNotFoundError`: there is nothing to
    validate. ``rules`` selects rules by id or id prefix.
    ``spec_revision`` is the format revision to check conformance to (the
    newest the project knows by default); rules whose requirements all came
    with a later revision do not run. A revision may be given by name; an
    unknown name raises :class:`~conformance.spec_revisions.UnknownRevisionError`.
    ``path`` may be an ``s3://`` URI, reached with pylance-style
    ``storage_options``; nothing is ever written. ``manifest_store`` is the
    external manifest store the dataset is committed through (an
    ``s3+ddb://`` URI names its own): it is read (the latest version is the
    store's, a staged manifest it records is read where it is) and never
    written. ``io_threads`` is how many data file footers and deletion files
    are read at once (1: one after another); by default one on a local
    disk and 32 on an object store (:func:`~.context.default_io_threads`).
    The report is the same whatever it is, and with a ``distribution``
    (:func:`conformance.validator.spark.validate` runs on Spark). ``deep``
    decodes every page of every data file with the reference reader and
    runs the rules that check them (:attr:`~.registry.Rule.deep`); each
    data file is decoded once per run, whatever versions list it."""
    if isinstance(spec_revision, str):
        spec_revision = revision(spec_revision)
    if io_threads is not None and io_threads < 1:
        raise ValueError(f"io_threads must be at least 1, not {io_threads}")
    return _validate(
        path,
        version,
        all_versions,
        rules,
        spec_revision,
        storage_options,
        manifest_store,
        io_threads,
        distribution,
        deep,
    )


def selected_rules(selection: list[str] | None, revision: SpecRevision, deep: bool) -> list[Rule]:
    """The rules a run with this ``--rules`` selection, revision and depth
    runs: those that apply under ``revision``, the deep ones only when
    ``deep``."""
    return [rule for rule in iter_rules(selection) if applies_under(rule, revision) and (deep or not rule.deep)]


def applies_under(rule: Rule, revision: SpecRevision) -> bool:
    """Whether ``rule`` checks something ``revision`` requires: at least one
    of its requirements is in force under that revision (introduced at or
    before it and not superseded at or before it; see
    :meth:`~conformance.requirements.Requirement.in_force_under`)."""
    return any(requirement(rid).in_force_under(revision) for rid in rule.requirements)


def newest_revision_of(rule: Rule) -> SpecRevision | None:
    """The newest revision ``rule`` applies under (None: under none), the
    one its mutations are validated under."""
    return next((item for item in reversed(REVISIONS) if applies_under(rule, item)), None)


def _validate(
    path,
    version: int | None,
    all_versions: bool,
    rules: list[str] | None,
    spec_revision: SpecRevision,
    storage_options: Mapping[str, str] | None,
    manifest_store: ExternalManifestStore | None,
    io_threads: int | None,
    distribution: Distribution | None = None,
    deep: bool = False,
) -> Report:
    try:
        view = open_dataset_view(path, storage_options, manifest_store)
    except UnreadablePathError as exc:  # not even listable: the report says why
        root = open_storage(parse_dataset_uri(path), storage_options, writable=False).location
        return Report(
            root,
            [],
            [],
            [unreadable_finding(root, exc, (), None, "the dataset cannot be listed")],
            spec_revision=spec_revision,
            deep=deep,
        )
    view.spec_revision = spec_revision
    view.io_threads = io_threads or default_io_threads(view.storage)
    view.deep = deep
    selected = selected_rules(rules, spec_revision, deep)
    available = sorted(view.manifest_paths())
    if all_versions:
        versions = available
    elif version is not None:
        if version not in available:  # a usage error, as a missing tag is: nothing to validate
            raise version_not_found(str(view.storage.root), version, available)
        versions = [version]
    else:
        versions = available[-1:]

    report = Report(str(view.storage.root), versions, [r.id for r in selected], spec_revision=spec_revision, deep=deep)
    if view.store_error is not None:
        report.findings.append(
            Finding(
                UNREADABLE_RULE,
                Severity.ERROR,
                (),
                f"the external manifest store cannot be read: {view.store_error}",
                None,
                None,
            )
        )
    view.selected_versions = versions
    view.selected_rules = frozenset(rule.id for rule in selected)
    if distribution is not None:
        distribution.attach(view)
    for rule in selected:
        if rule.scope is Scope.DATASET:
            report.findings.extend(_run(rule, view, None))
    per_version = distribution.run_versions(view, selected, versions) if distribution is not None else None
    if per_version is None:
        per_version = [version_findings(view, selected, number) for number in versions]
    for found in per_version:
        report.findings.extend(found)
    report.findings.sort(key=lambda f: (f.version or 0, f.rule, f.location or "", f.message))
    return report


def version_findings(view: DatasetView, selected: list[Rule], number: int) -> list[Finding]:
    """What the version-scoped rules of ``selected`` find in version
    ``number``, a known defect of its writer applied (nothing when its
    manifest does not load: the manifest rules report why)."""
    version_view = view.version_view(number)
    if version_view is None:
        return []
    found = [f for rule in selected if rule.scope is Scope.VERSION for f in _run(rule, version_view, number)]
    # A finding a known defect of this version's writer explains becomes a warning naming it.
    return explain(found, version_view.manifest.writer_version)
