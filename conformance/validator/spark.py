"""The validator as a Spark job (``validate --spark [--master URL]``).

The report is the one a local run gives (same findings, same order); only
where the reading and the per-version work happen changes. The driver lists
the versions and each version's files, as locally; then:

* **Per-file reads go to executors.** :meth:`DatasetView.prefetch
  <conformance.validator.context.DatasetView.prefetch>` hands its loads (data
  file footers, deletion files: the reads the local pool runs) to
  :class:`SparkDistribution` as the view's ``loader``. They are pickled in
  contiguous chunks (:func:`dumps`: the C pickler, cloudpickle for what only
  it can carry, as Spark ships functions), each chunk one Spark task; an
  executor runs :func:`~conformance.validator.context.load` on each and
  sends back the loaded value or the format error, which the driver
  keeps in the view's cache under the key the rules look up. The rules then
  run on the driver exactly as locally, finding every read done.
* **Data pages are decoded on executors** (``--deep``): the decoding of each
  data file is one more per-file load (conformance/validator/facts/data_pages.py),
  shipped as the footer reads are; the driver keeps what each decoding
  found (the problems, never the values).
* **Per-version checks go to executors** when more than one version is
  validated (``--all-versions``), except in a deep run, whose versions stay
  on the driver (a run of versions on an executor would decode again every
  file the versions of another run share with it): contiguous runs of versions, one Spark task
  each. An executor opens the dataset itself (the same path, storage options
  and manifest store: on a cluster it reads the object store), runs the
  version-scoped rules of its versions with
  :func:`~conformance.validator.engine.version_findings` (its row id, index
  and data files read there, once per task) and returns the findings; the
  driver runs the dataset-scoped rules and puts each version's findings
  where the local loop would, and the engine's final sort does the rest.

Nothing an executor meets becomes a traceback or a different finding. A
load that fails with a format error comes back as that error (the finding is
the one a local read gives). Anything else an executor cannot do (a load
that raises another exception, a chunk it cannot unpickle, a task Spark
loses, a dataset it cannot open, a manifest store that cannot be shipped)
comes back as "not done", and the driver does that piece itself when the
rules reach it, meeting whatever a local run meets; :attr:`SparkDistribution.
redone_locally` counts those pieces.

pyspark is imported only when a session is started or a job runs; the module
itself imports none of it.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from reference_impl.commit.external_store import ExternalManifestStore
from reference_impl.storage import absolute_uri

from ..spark_session import DEFAULT_MASTER, SparkError, start_session
from ..spec_revisions import NEWEST, SpecRevision, revision
from .context import DatasetView, Loaded, load
from .engine import Report, open_dataset_view, selected_rules, version_findings
from .engine import validate as validate_locally
from .registry import Finding, Rule

__all__ = ["DEFAULT_MASTER", "SparkDistribution", "SparkError", "validate"]

#: Chunks of per-file loads per task slot: one. Each task costs tens of
#: milliseconds of scheduling and Python worker traffic in local mode (128
#: chunks of 10,000 footer loads took 10 s, 8 took 1 s: benchmarks/README.md).
LOAD_CHUNKS_PER_SLOT = 1
#: Runs of versions per task slot, for the same reason.
VERSION_CHUNKS_PER_SLOT = 2


# -- what crosses between driver and executors ----------------------------------------


def dumps(value: Any) -> bytes:
    """``value`` as bytes an executor or the driver can :func:`pickle.loads`:
    through the C pickler when it can (footer loads are module functions and
    tuples: ten times faster), else through cloudpickle, which carries
    functions and closures by value as Spark ships them (a deletion file's
    read is a closure). Format errors, S3 storages and SQLite manifest
    stores say themselves how they cross (``__reduce__``)."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # something only cloudpickle can carry: the slower road
        from pyspark import cloudpickle  # deliberately lazy: only a Spark run needs it

        return cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _chunks(items: Sequence, count: int) -> list[Sequence]:
    """``items`` cut into at most ``count`` contiguous runs of near-equal size."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    runs, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        runs.append(items[start:end])
        start = end
    return runs


# -- on the executors ---------------------------------------------------------------------


def _load_quietly(job: tuple[Callable, tuple]) -> Loaded | None:
    action, args = job
    try:
        return load(action, *args)
    except Exception:  # not a format error: the driver meets it where a local run does
        return None


def run_loads(payload: bytes) -> bytes:
    """Runs on an executor: ``(threads, jobs)`` unpickled, each ``(action,
    args)`` of ``jobs`` loaded (:func:`~conformance.validator.context.load`),
    ``threads`` at a time (the run's ``io_threads``: one on a local disk,
    more on an object store, where each read waits on the network); back, a
    pickled list with the :data:`Loaded` of each, or None where it raised
    another exception or cannot be pickled (the driver does that one). None
    for the whole chunk when it cannot be unpickled here."""
    try:
        threads, jobs = pickle.loads(payload)
    except Exception:  # the driver reads this chunk itself (module docstring)
        return pickle.dumps(None)
    if threads <= 1 or len(jobs) < 2:
        return _dump_results([_load_quietly(job) for job in jobs])
    with ThreadPoolExecutor(min(threads, len(jobs)), thread_name_prefix="validator-io") as pool:
        return _dump_results(list(pool.map(_load_quietly, jobs)))


def _dump_results(results: list) -> bytes:
    try:
        return dumps(results)
    except Exception:  # one value that does not pickle: send the others
        kept = []
        for result in results:
            try:
                dumps(result)
                kept.append(result)
            except Exception:
                kept.append(None)
        return dumps(kept)


@dataclass(frozen=True)
class VersionsJob:
    """What an executor needs to validate some versions as the driver would."""

    #: The dataset: an absolute local path or the URI the user gave.
    path: str
    storage_options: dict[str, str]
    manifest_store: ExternalManifestStore | None
    #: The user's rule selection, and the rule ids it gave on the driver.
    rules: list[str] | None
    rule_ids: tuple[str, ...]
    spec_revision: str
    io_threads: int
    #: Every version the run validates (rules may look at them all).
    selected_versions: tuple[int, ...]
    #: Whether data pages are decoded (``--deep``).
    deep: bool = False


def run_versions(payload: bytes) -> bytes:
    """Runs on an executor: ``(VersionsJob, versions)`` unpickled, the
    dataset opened here, and each version's findings; back, a pickled list
    of ``(version, findings)``, or None when this task cannot do it (the
    driver then runs those versions itself)."""
    try:
        job, versions = pickle.loads(payload)
        spec_revision = revision(job.spec_revision)
        selected = selected_rules(job.rules, spec_revision, job.deep)
        if tuple(rule.id for rule in selected) != job.rule_ids:
            return pickle.dumps(None)  # another installation of the project: the driver's rules decide
        view = open_dataset_view(job.path, job.storage_options, job.manifest_store)
        view.spec_revision = spec_revision
        view.io_threads = job.io_threads
        view.deep = job.deep
        view.selected_versions = list(job.selected_versions)
        view.selected_rules = frozenset(job.rule_ids)
        found = [(number, version_findings(view, selected, number)) for number in versions]
        return dumps(found)
    except Exception:  # the driver runs these versions itself (module docstring)
        return pickle.dumps(None)


# -- on the driver ------------------------------------------------------------------------


class SparkDistribution:
    """The engine's :class:`~conformance.validator.engine.Distribution` on a
    Spark context: per-file loads and (for more than one version) the
    versions' rules run as Spark tasks. ``versions_on_executors`` forces
    (True) or forbids (False) sending versions out; by default they go when
    there are at least two. ``parallelism`` is the task slots the work is cut
    for (by default the context's ``defaultParallelism``)."""

    def __init__(
        self,
        spark_context: Any,
        *,
        path: str | os.PathLike,
        storage_options: Mapping[str, str] | None = None,
        manifest_store: ExternalManifestStore | None = None,
        rules: list[str] | None = None,
        versions_on_executors: bool | None = None,
        parallelism: int | None = None,
    ):
        self.spark_context = spark_context
        self.parallelism = parallelism
        self.path = absolute_uri(path)
        self.storage_options = dict(storage_options or {})
        self.manifest_store = manifest_store
        self.rules = rules
        self.versions_on_executors = versions_on_executors
        #: Loads and versions done by executors, and pieces the driver redid.
        self.loads_on_executors = 0
        self.versions_done_on_executors = 0
        self.redone_locally = 0
        #: Reads at once within an executor's chunk: the run's io_threads (set by attach).
        self.io_threads = 1

    @property
    def slots(self) -> int:
        return max(1, self.parallelism or int(self.spark_context.defaultParallelism))

    def attach(self, view: DatasetView) -> None:
        view.loader = self.load_all
        self.io_threads = view.io_threads

    def load_all(self, jobs: list[tuple[Callable, tuple]]) -> list[Loaded | None]:
        """Each ``(action, args)`` loaded on an executor, in order (None: not
        done there). :meth:`DatasetView.prefetch` hands over batches of two
        loads or more: a single one is read on the driver."""
        chunks = _chunks(jobs, self.slots * LOAD_CHUNKS_PER_SLOT)
        payloads: list[bytes | None] = []
        for chunk in chunks:
            try:
                payloads.append(dumps((self.io_threads, list(chunk))))
            except Exception:  # something in it does not pickle: the driver loads this chunk
                payloads.append(None)
        answers = self._collect(run_loads, payloads)
        results: list[Loaded | None] = []
        for chunk, answer in zip(chunks, answers, strict=True):
            values = answer if isinstance(answer, list) and len(answer) == len(chunk) else [None] * len(chunk)
            done = sum(value is not None for value in values)
            self.loads_on_executors += done
            self.redone_locally += len(chunk) - done
            results.extend(values)
        return results

    def run_versions(self, view: DatasetView, selected: list[Rule], versions: list[int]) -> list[list[Finding]] | None:
        wanted = self.versions_on_executors
        # A deep run keeps the versions here by default: its cost is decoding
        # data files, which the loads ship to executors file by file, each
        # once; versions sent out in runs would decode a file again in every
        # run of versions that lists it.
        if wanted is False or (wanted is None and (len(versions) < 2 or view.deep)) or not versions:
            return None
        job = VersionsJob(
            self.path,
            self.storage_options,
            self.manifest_store,
            self.rules,
            tuple(rule.id for rule in selected),
            view.spec_revision.name,
            view.io_threads,
            tuple(view.selected_versions),
            view.deep,
        )
        runs = _chunks(versions, self.slots * VERSION_CHUNKS_PER_SLOT)
        payloads: list[bytes | None] = []
        for run in runs:
            try:
                payloads.append(dumps((job, list(run))))
            except Exception:  # e.g. a manifest store holding a connection: the driver runs them
                payloads.append(None)
        answers = self._collect(run_versions, payloads)
        by_version: dict[int, list[Finding]] = {}
        for run, answer in zip(runs, answers, strict=True):
            if isinstance(answer, list) and [number for number, _ in answer] == list(run):
                by_version.update(answer)
                self.versions_done_on_executors += len(run)
        results = []
        for number in versions:
            if number in by_version:
                results.append(by_version[number])
            else:
                self.redone_locally += 1
                results.append(version_findings(view, selected, number))
        return results

    def _collect(self, task: Callable[[bytes], bytes], payloads: list[bytes | None]) -> list[Any]:
        """``task`` on each payload as its own Spark task; each answer
        unpickled, None where there was no payload or no usable answer."""
        indexed = [(index, payload) for index, payload in enumerate(payloads) if payload is not None]
        answers: list[Any] = [None] * len(payloads)
        if not indexed:
            return answers
        try:
            collected = (
                self.spark_context.parallelize(indexed, len(indexed))
                .map(lambda item: (item[0], task(item[1])))
                .collect()
            )
        except Exception:  # a lost task or executor: the driver does the work (module docstring)
            return answers
        for index, answer in collected:
            try:
                answers[index] = pickle.loads(answer)
            except Exception:
                answers[index] = None
        return answers


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
    master: str = DEFAULT_MASTER,
    session: Any = None,
    conf: Mapping[str, str] | None = None,
    versions_on_executors: bool | None = None,
    deep: bool = False,
) -> Report:
    """:func:`conformance.validator.validate` as a Spark job on ``master``
    (``local[*]`` by default, ``spark://HOST:PORT`` a cluster): the same
    arguments and the same report. ``session`` is a running SparkSession to
    use (left running); otherwise one is started with the project's settings
    (:func:`conformance.spark_session.spark_conf`, plus ``conf``) and stopped
    before returning. :class:`~conformance.spark_session.SparkError` when
    Spark cannot start."""
    owned = False
    if session is None:
        session, owned = start_session(master, "lance-conformance validate", dict(conf or {}))
    try:
        distribution = SparkDistribution(
            session.sparkContext,
            path=path,
            storage_options=storage_options,
            manifest_store=manifest_store,
            rules=rules,
            versions_on_executors=versions_on_executors,
        )
        return validate_locally(
            path,
            version=version,
            all_versions=all_versions,
            rules=rules,
            spec_revision=spec_revision,
            storage_options=storage_options,
            manifest_store=manifest_store,
            io_threads=io_threads,
            distribution=distribution,
            deep=deep,
        )
    finally:
        if owned:
            session.stop()
