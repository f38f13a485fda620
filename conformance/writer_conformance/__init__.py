"""Writer conformance: a writer run through a script of operations, every
version it commits checked.

What it holds:

* :mod:`.script`: the steps (create, append, delete, update, upsert, add,
  alter and drop columns, create an index, set config, compact, tag, restore,
  overwrite), each an operation of :mod:`conformance.drivers.writes` with the
  requirement ids it exercises and the description facts it must leave;
* :mod:`.model`: the rows each operation leaves, computed on Arrow tables;
* :mod:`.checks`: the checks of one version (validator, each reader's rows
  compared by meaning, each reader's description against the reference's);
* :mod:`.run`: :func:`run_writer_conformance`, which runs a writing driver
  through the script in a scratch directory and checks every version;
* :mod:`.report`: the per-step report, its JSON
  (``conformance/schemas/writer-conformance-report.schema.json``) and text.

The command line: ``lance-conformance writer-check --driver NAME [--format
json] [--expectations FILE]``.
"""

from .report import REPORT_FORMAT, StepResult, StepStatus, WriterReport, to_text
from .run import SUITE, WriterCheckError, installed_readers, run_writer_conformance
from .script import DEFAULT_DATA_STORAGE_VERSION, SCRIPT, Step

__all__ = [
    "DEFAULT_DATA_STORAGE_VERSION",
    "REPORT_FORMAT",
    "SCRIPT",
    "SUITE",
    "Step",
    "StepResult",
    "StepStatus",
    "WriterCheckError",
    "WriterReport",
    "installed_readers",
    "run_writer_conformance",
    "to_text",
]
