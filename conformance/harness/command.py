"""``lance-conformance harness run|check|faulty``: the command line of the
harness (``conformance/cli/`` adds these sub-commands)."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from ..exit_codes import ExitCode
from .errors import error_text
from .spark import HARNESS_MASTER, SparkError, SparkExecutor, unreachable_masters
from .spec import FAULTS, RunSpec

# The rest of the harness (writers, executors, pyspark, pyarrow under them) is
# imported by the sub-command that runs: every other command of the CLI builds
# this parser, and must not pay for those imports (issue 17, start-up).
if TYPE_CHECKING:
    from .executors import Executor
    from .runner import RunResult

#: Where ``harness run`` leaves the traceback of an internal error (the terminal gets one line).
TRACEBACK_FILE = "traceback.txt"
#: The characters of an error's text a one-line message keeps (head and tail, :func:`.errors.error_text`).
MESSAGE_CHARS = 600
#: The exit statuses of ``harness run`` and ``harness check`` (conformance/exit_codes.py), for ``--help``.
EPILOG = f"""exit status:
  {ExitCode.OK:d}  clean: the checker found no anomaly
  {ExitCode.ANOMALIES:d}  anomalies (listed in the summary, report.json and report.html)
  {ExitCode.USAGE:d}  usage: a bad option, an --out that already holds a run or a dataset, a saved run that
     cannot be read back
  {ExitCode.INTERNAL:d}  the run could not be made: a writer that cannot load, an internal error (one line on
     the terminal; run writes the traceback to OUT/{TRACEBACK_FILE})"""
#: ``--master`` values that run the writers as local processes.
LOCAL_PROCESSES = "local-processes"


class UnknownMasterError(ValueError):
    """A ``--master`` this build cannot run on."""


def executor_for(master: str | None) -> Executor:
    """The executor ``--master`` names: ``local-processes``, one process per
    writer on this machine; any Spark master URL (``local[N]``, by default
    :data:`~.spark.HARNESS_MASTER`; ``local[*]``, ``spark://HOST:PORT``), the
    writers as Spark tasks."""
    from .executors import ProcessExecutor  # lazy: pulls pyarrow; every CLI command builds this parser (note above)

    if master == LOCAL_PROCESSES:
        return ProcessExecutor()
    master = master or HARNESS_MASTER
    if not master.startswith(("local", "spark://", "yarn", "k8s://")):
        raise UnknownMasterError(f"--master {master!r}: not a Spark master URL nor {LOCAL_PROCESSES!r}")
    unreachable = unreachable_masters(master)
    if unreachable:
        raise UnknownMasterError(f"--master {master!r}: no Spark master answers at {', '.join(unreachable)}")
    return SparkExecutor(master)


def _storage_option(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value


def add_harness_parser(commands) -> None:
    harness = commands.add_parser(
        "harness",
        help="race writers on one dataset and check that no committed work was lost",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = harness.add_subparsers(dest="harness_command", required=True)

    run_parser = group.add_parser(
        "run",
        help="run writers against one dataset, save the history, check it",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run_parser.add_argument(
        "--writer",
        required=True,
        action="append",
        help="any driver that writes: reference, pylance, lancedb, pylance-distributed, lance-ray, daft, "
        "worker:MODULE, cmd:COMMAND or a module path; or faulty:NAME; given more than once, one per writer "
        "(writer i runs the i-th, in turn: an engine's writes racing another implementation's)",
    )
    run_parser.add_argument("--writers", type=int, default=4, help="writers racing at once (default 4)")
    run_parser.add_argument("--operations", type=int, default=10, help="operations per writer (default 10)")
    run_parser.add_argument(
        "--workload",
        action="append",
        default=None,
        help="mixed, rows, schema, or write kinds with optional weights: append:3,delete:1 "
        "(upsert/shared-keys: upserts of keys other writers upsert too); given more than once, one per writer "
        "(writer i takes the i-th, in turn)",
    )
    run_parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds each writer waits between its operations (default 0)"
    )
    run_parser.add_argument(
        "--master",
        default=None,
        help=f"a Spark master URL (default: {HARNESS_MASTER}; spark://HOST:PORT for a cluster) or {LOCAL_PROCESSES}",
    )
    run_parser.add_argument("--seed", type=int, default=0)
    run_parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="a new directory for history.jsonl, run.json, writer.json, report.json, report.html",
    )
    run_parser.add_argument("--uri", default=None, help="the dataset (default: OUT/dataset.lance); s3:// works too")
    run_parser.add_argument(
        "--storage-option",
        dest="storage_options",
        action="append",
        type=_storage_option,
        default=[],
        metavar="KEY=VALUE",
        help="a storage option as pylance names them (repeatable)",
    )
    run_parser.add_argument("--naming", choices=("v1", "v2"), default="v2", help="manifest naming scheme")
    run_parser.add_argument(
        "--data-storage-version",
        default=None,
        help="the data file version the dataset is created with, e.g. 2.0, 2.1 or 2.2 (default: the writer's own)",
    )
    run_parser.add_argument(
        "--stable-row-ids", action=argparse.BooleanOptionalAction, default=True, help="stable row ids (default on)"
    )
    run_parser.add_argument(
        "--primary-key",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="declare id the unenforced primary key (pylance's upserts then refuse racing inserts of one key)",
    )
    run_parser.add_argument("--fault", choices=FAULTS, default=None, help="inject a fault into correct writers")
    run_parser.add_argument("--format", choices=("text", "json"), default="text")
    run_parser.set_defaults(run=_run)

    check_parser = group.add_parser(
        "check",
        help="check a saved run again (its writer is not loaded)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check_parser.add_argument("dir", type=Path)
    check_parser.add_argument("--format", choices=("text", "json"), default="text")
    check_parser.set_defaults(run=_check)

    faulty = group.add_parser("faulty", help="list the shipped faulty writers")
    faulty.add_argument("--format", choices=("text", "json"), default="text")
    faulty.set_defaults(run=_faulty)


def _print(result: RunResult, output_format: str) -> int:
    # lazy: the rest of the harness pulls pyarrow; every CLI command builds this parser (note above)
    from .report import report_document, summary_text

    if output_format == "json":
        print(json.dumps(report_document(result), indent=2))
    else:
        print(summary_text(result))
    return ExitCode.OK if result.report.clean else ExitCode.ANOMALIES


def _say(message: str) -> None:
    """One line on stderr (an error's text with its head and tail, on one line)."""
    text = " ".join(error_text(message, MESSAGE_CHARS).split())
    print(f"lance-conformance harness: {text}", file=sys.stderr)


def _usage(message: str) -> int:
    _say(message)
    return ExitCode.USAGE


def _cannot_run(message: str) -> int:
    _say(message)
    return ExitCode.INTERNAL


def _internal(exc: Exception, out: Path | None) -> int:
    """An error nothing else expected: one line here, the traceback in
    ``OUT/traceback.txt`` when the run's directory exists."""
    where = ""
    if out is not None and out.is_dir():
        path = out / TRACEBACK_FILE
        try:
            path.write_text("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
            where = f" (traceback in {path})"
        except OSError:
            pass
    return _cannot_run(f"internal error: {type(exc).__name__}: {exc}{where}")


def _existing_run(out: Path, uri: str | None) -> str | None:
    """Why ``--out`` (or ``--uri``) cannot take a new run, if it cannot: a
    run is never written over another, nor a dataset created over one."""
    # lazy: the rest of the harness pulls pyarrow; every CLI command builds this parser (note above)
    from .runner import HISTORY_FILE, RUN_FILE

    for name in (RUN_FILE, HISTORY_FILE):
        if (out / name).exists():
            return f"--out {out} already holds a run ({name}): choose a new directory, or check it with harness check"
    if uri is None:
        dataset: Path | None = out / "dataset.lance"
    elif "://" in uri:
        dataset = None  # on an object store: the writer's create refuses an existing dataset itself
    else:
        dataset = Path(uri)
    if dataset is not None and dataset.exists():
        return f"{dataset} already exists: a run creates its dataset (choose a new --out or --uri)"
    return None


def _run(args: argparse.Namespace) -> int:
    # lazy: the rest of the harness pulls pyarrow; every CLI command builds this parser (note above)
    from .executors import TaskFailedError
    from .faulty import UnknownFaultyWriterError
    from .runner import RunSpecError, run
    from .workloads import WorkloadError, parse_workload, workload_to_json
    from .writers import WriterLoadError

    if args.writers < 1 or args.operations < 0:
        return _usage("--writers must be at least 1 and --operations at least 0")
    existing = _existing_run(args.out, args.uri)
    if existing is not None:
        return _usage(existing)
    workloads = args.workload or ["mixed"]
    try:
        spec = RunSpec(
            uri=args.uri or str(args.out / "dataset.lance"),
            storage_options=dict(args.storage_options),
            writer=args.writer[0],
            writer_names=tuple(args.writer) if len(args.writer) > 1 else (),
            writers=args.writers,
            operations=args.operations,
            workloads=workload_to_json(parse_workload(workloads[0])),
            writer_workloads=tuple(workload_to_json(parse_workload(w)) for w in workloads)
            if len(workloads) > 1
            else (),
            pace_seconds=args.pace,
            seed=args.seed,
            stable_row_ids=args.stable_row_ids,
            naming=args.naming,
            data_storage_version=args.data_storage_version,
            fault=args.fault,
            primary_key=args.primary_key,
        )
        executor = executor_for(args.master)
        try:
            result = run(spec, executor, args.out)
        finally:
            stop = getattr(executor, "stop", None)  # a Spark session this run started
            if stop is not None:
                stop()
    except (WorkloadError, RunSpecError, UnknownMasterError, SparkError) as exc:
        return _usage(str(exc))
    except (WriterLoadError, UnknownFaultyWriterError) as exc:
        return _cannot_run(f"the writer cannot be loaded: {exc}")
    except TaskFailedError as exc:
        return _cannot_run(str(exc))
    except Exception as exc:  # anything else is ours: one line, the traceback saved (exit 3)
        return _internal(exc, args.out)
    return _print(result, args.format)


def _check(args: argparse.Namespace) -> int:
    # lazy: the rest of the harness pulls pyarrow; every CLI command builds this parser (note above)
    from .history import HistoryError
    from .runner import HISTORY_FILE, RUN_FILE, SavedRunError, recheck

    if not (args.dir / RUN_FILE).is_file() or not (args.dir / HISTORY_FILE).is_file():
        return _usage(f"{args.dir} holds no saved run ({RUN_FILE} and {HISTORY_FILE})")
    try:
        result = recheck(args.dir)
    except (SavedRunError, HistoryError) as exc:
        return _usage(str(exc))
    except Exception as exc:  # anything else is ours: one line (exit 3); a check writes nothing
        return _internal(exc, None)
    return _print(result, args.format)


def _faulty(args: argparse.Namespace) -> int:
    # lazy: the rest of the harness pulls pyarrow; every CLI command builds this parser (note above)
    from .faulty import FAULTY_WRITERS

    rows = [
        {
            "writer": f"faulty:{info.name}",
            "bug_class": info.bug_class,
            "anomaly": info.anomaly,
            "workload": info.workload,
        }
        for info in FAULTY_WRITERS.values()
    ]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['writer']:<32} {row['bug_class']} -> {row['anomaly']} (workload {row['workload']})")
    return ExitCode.OK
