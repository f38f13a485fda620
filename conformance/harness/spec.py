"""What a harness run needs, as plain data that pickles and saves as JSON
(``DIR/run.json``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Faults the harness can inject into correct writers (``RunSpec.fault``).
FAULT_KILL_MID_COMMIT = "kill-mid-commit"
FAULT_SLOW_STORE = "slow-store"
FAULTS = (FAULT_KILL_MID_COMMIT, FAULT_SLOW_STORE)


#: The version of ``run.json``'s shape (bump it when a field changes meaning or
#: goes away; CHANGELOG.md).
RUN_FORMAT = 2


@dataclass(frozen=True)
class RunSpec:
    """Everything a run needs. ``writer`` is ``"pylance"``, ``"reference"``,
    ``"faulty:NAME"`` or any driver that writes (``conformance.harness.writers``).
    ``workloads`` maps workload terms (``conformance.harness.workloads``: a
    write kind such as ``append``, or ``upsert/shared-keys``) to weights;
    ``writer_workloads``, when given, one such map per writer (taken in turn);
    ``pace_seconds`` a pause each writer takes between its operations;
    ``naming`` is ``"v1"`` or ``"v2"``; ``fault`` injects one fault into
    correct writers (:data:`FAULTS`)."""

    uri: str
    storage_options: dict[str, str]
    writer: str
    writers: int
    operations: int
    workloads: dict[str, float]
    seed: int
    stable_row_ids: bool
    naming: str
    #: The data file version the dataset is created with; None leaves the
    #: writer implementation's default (pylance 14 writes 2.2, the reference
    #: 2.0). The checker reads every version the reference reader decodes.
    data_storage_version: str | None = None
    fault: str | None = None
    #: Rows the dataset starts with (version 1), ids 0 .. initial_rows - 1.
    initial_rows: int = field(default=64)
    #: Declare ``id`` the table's unenforced primary key (table overview
    #: page, "Unenforced Primary Key"): what pylance's upserts need to refuse
    #: a concurrent insert of the same new key (docs/spec-discrepancies.md).
    primary_key: bool = False
    writer_workloads: tuple[dict[str, float], ...] = ()
    pace_seconds: float = 0.0
    #: One writer name per writer, taken in turn (``writer`` is the first):
    #: an engine's column backfill racing an application's deletes.
    writer_names: tuple[str, ...] = ()

    def writer_of(self, index: int) -> str:
        """The writer writer ``index`` runs (``writer_names`` in turn, else ``writer``)."""
        return self.writer_names[index % len(self.writer_names)] if self.writer_names else self.writer

    def distinct_writers(self) -> list[str]:
        """Every writer name the run uses, in order of first use."""
        return list(dict.fromkeys(self.writer_of(index) for index in range(self.writers)))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, document: dict) -> RunSpec:
        fields = dict(document)
        fields["writer_workloads"] = tuple(fields.get("writer_workloads", ()))
        fields["writer_names"] = tuple(fields.get("writer_names", ()))
        return cls(**fields)

    def save(self, path: Path) -> None:
        document = {"format": RUN_FORMAT, **self.to_json()}
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> RunSpec:
        document = json.loads(path.read_text())
        document.pop("format", None)  # run.json files written before it was versioned have none
        return cls.from_json(document)


@dataclass(frozen=True)
class TaskSpec:
    """One writer's share of a run: what one Spark task or one process
    receives. ``journal`` (optional) is a file the task appends each attempt
    to as it goes, so that a task killed mid-operation leaves its history."""

    run: RunSpec
    writer_index: int
    journal: str | None = None
