"""``lance-conformance describe``, ``validate`` and ``rules``: one dataset
(a version, a tag or a branch of it) described or checked against the
specification, and the validator's rules listed."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from reference_impl.errors import NotADatasetError

from ..spec_revisions import NEWEST, REVISIONS, argparse_type
from .common import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:
    from ..validator import Report


def _selected(args: argparse.Namespace) -> tuple[str, int | None]:
    """The directory (or object store prefix) and version that --tag, or
    --branch and --version, select (a branch keeps its versions under
    tree/{name}/)."""
    if args.tag is None and args.branch is None:
        return args.path, args.version
    # lazy: the refs and the storage layer (botocore's exceptions under it) load only for --tag and --branch
    from reference_impl.refs import resolve_ref
    from reference_impl.storage import open_storage, parse_dataset_uri

    root = open_storage(parse_dataset_uri(args.path), args.storage_options, writable=False)
    if not root.root_is_dir():
        raise NotADatasetError(root.location, "not a directory")
    target = resolve_ref(root, tag=args.tag, branch=args.branch, version=args.version)
    return (root if target.root is None else root.subtree(target.root)).location, target.version


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return number


def _storage_option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value


def _add_storage_option(parser: argparse.ArgumentParser) -> None:
    """--storage-option KEY=VALUE (repeatable): pylance's storage option keys,
    for s3:// datasets (aws_endpoint, aws_region, allow_http, credentials)."""
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        type=_storage_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a storage option, as pylance names it (repeatable), e.g. aws_endpoint=http://127.0.0.1:5000",
    )


def _describe(args: argparse.Namespace) -> int:
    # lazy: the reference driver and the document are this command's work, not the parser's
    from ..describe import to_json, to_text
    from ..drivers import reference

    path, version = _selected(args)
    document = reference.describe(
        path, version, storage_options=dict(args.storage_options), manifest_store=args.manifest_store
    )
    print(to_json(document) if args.format == "json" else to_text(document))
    return EXIT_OK


def _add_spec_revision_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spec-revision",
        type=argparse_type,
        default=NEWEST,
        metavar="REVISION",
        help=f"format revision to check conformance to, one of: {', '.join(r.name for r in REVISIONS)} "
        f"(oldest first; default: the newest, {NEWEST.name})",
    )


def _manifest_store(text: str):
    """``--manifest-store sqlite:PATH``: the SQLite external manifest store a
    dataset is committed through, opened read only."""
    kind, _, where = text.partition(":")
    if kind != "sqlite" or not where:
        raise argparse.ArgumentTypeError(f"expected sqlite:PATH, not {text!r}")
    # lazy: the commit machinery (SQLite included) loads only when the option is given
    from reference_impl.commit.external_store import SqliteManifestStore

    return SqliteManifestStore(where, read_only=True)


def _add_manifest_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest-store",
        type=_manifest_store,
        default=None,
        metavar="sqlite:PATH",
        help="the external manifest store the dataset is committed through (read, never written)",
    )


def _validate(args: argparse.Namespace) -> int:
    # lazy: the validator and its report formats load when a dataset is validated, not for --help
    from ..validator import Severity, validate
    from ..validator.baseline import gates, load_baseline, settle
    from ..validator.report import FORMATS

    if args.master is not None and not args.spark:
        args.parser.error("--master names the Spark master of --spark; add --spark")
    fail_on = Severity(args.fail_on)
    baseline = load_baseline(args.baseline) if args.baseline else None  # a bad file fails before the run
    path, version = _selected(args)
    run: Callable[..., Report] = validate
    if args.spark:
        # Deliberately lazy: only --spark needs the Spark job (and pyspark under it).
        from ..spark_session import DEFAULT_MASTER
        from ..validator.spark import validate as validate_on_spark

        # Spark that cannot start raises SparkError: a usage error (main), nothing was validated.
        run = partial(validate_on_spark, master=args.master or DEFAULT_MASTER)
    report = run(
        path,
        version=version,
        all_versions=args.all_versions,
        rules=args.rules,
        spec_revision=args.spec_revision,
        storage_options=dict(args.storage_options),
        manifest_store=args.manifest_store,
        io_threads=args.io_threads,
        deep=args.deep,
    )
    if baseline is not None or args.write_baseline:
        settle(report, baseline, write_to=args.write_baseline, fail_on=fail_on)
    print(FORMATS[args.format](report))
    return EXIT_FINDINGS if any(gates(f, fail_on) for f in report.findings) else EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    # lazy: the rule catalog loads the requirements; only this command lists them
    from ..validator.catalog import uncovered_requirements
    from ..validator.ruleset import all_rules

    if args.uncovered:
        for requirement in uncovered_requirements():
            why = requirement.uncheckable or "checkable at rest; no rule yet"
            print(f"{requirement.id} [{requirement.level}] {why}")
        return EXIT_OK
    for rule in all_rules():
        deep = " [--deep]" if rule.deep else ""
        print(f"{rule.id} [{rule.severity.value}]{deep} {rule.summary} ({', '.join(rule.requirements)})")
    return EXIT_OK


def add_describe(commands) -> None:
    describe = commands.add_parser("describe", help="print one version of a dataset as the canonical document")
    describe.add_argument("path", help="dataset root directory, or s3://bucket/path")
    which = describe.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, default=None, help="version to describe (default: latest)")
    which.add_argument("--tag", default=None, metavar="NAME", help="the version tag NAME points at")
    describe.add_argument(
        "--branch", default=None, metavar="NAME", help="a version of branch NAME (its latest, or --version)"
    )
    describe.add_argument("--format", choices=("json", "text"), default="json")
    _add_storage_option(describe)
    _add_manifest_store_option(describe)
    describe.set_defaults(run=_describe)


def add_validate(commands) -> None:
    validate = commands.add_parser("validate", help="check a dataset against the specification")
    validate.add_argument("path", help="dataset root directory, or s3://bucket/path")
    which = validate.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, default=None, help="version to validate (default: latest)")
    which.add_argument("--all-versions", action="store_true", help="validate every version")
    which.add_argument("--tag", default=None, metavar="NAME", help="validate the version tag NAME points at")
    validate.add_argument(
        "--branch",
        default=None,
        metavar="NAME",
        help="validate branch NAME (its latest version, --version N of it, or --all-versions)",
    )
    validate.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    validate.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        default="error",
        help="exit 1 when a finding this serious or worse remains (default: error)",
    )
    validate.add_argument(
        "--baseline",
        default=None,
        metavar="FILE",
        help="accepted findings (JSON): they are reported apart and never fail the run",
    )
    validate.add_argument(
        "--write-baseline",
        default=None,
        metavar="FILE",
        help="write a baseline accepting every finding that fails the run, then apply it",
    )
    validate.add_argument(
        "--rules", nargs="+", default=None, metavar="RULE", help="only these rules (ids, or topics such as 'naming')"
    )
    validate.add_argument(
        "--io-threads",
        type=_positive,
        default=None,
        metavar="N",
        help="data file footers and deletion files read at once (default: 1 on a local disk, 32 on an object store); "
        "the report is the same",
    )
    validate.add_argument(
        "--deep",
        action="store_true",
        help="also decode every page of every data file with the reference reader and check what its structure "
        "promises (the data-page rules; docs/validating.md, 'Deep validation'): slower, reads every byte",
    )
    validate.add_argument(
        "--spark",
        action="store_true",
        help="run as a Spark job: per-file reads and (for several versions) per-version checks on executors; "
        "the report is the same (exit 2 when Spark cannot start)",
    )
    validate.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="the Spark master for --spark (default: local[*]; spark://HOST:PORT for a cluster)",
    )
    _add_spec_revision_option(validate)
    _add_storage_option(validate)
    _add_manifest_store_option(validate)
    validate.set_defaults(run=_validate, parser=validate)


def add_rules(commands) -> None:
    rules = commands.add_parser("rules", help="list the validator's rules")
    rules.add_argument(
        "--uncovered", action="store_true", help="list the requirements no rule or test checks, with the reason"
    )
    rules.set_defaults(run=_rules)
