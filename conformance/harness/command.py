"""``lance-conformance harness run|check|faulty``: the command line of the
harness (``conformance/cli.py`` adds these sub-commands)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..spark_session import DEFAULT_MASTER
from .spec import FAULTS, RunSpec

# The rest of the harness (writers, executors, Spark, pyarrow under them) is
# imported by the sub-command that runs: every other command of the CLI builds
# this parser, and must not pay for those imports (issue 17, start-up).
if TYPE_CHECKING:
    from .executors import Executor
    from .runner import RunResult

EXIT_CLEAN = 0
EXIT_ANOMALIES = 1
EXIT_USAGE = 2
#: ``--master`` values that run the writers as local processes.
LOCAL_PROCESSES = "local-processes"


class UnknownMasterError(ValueError):
    """A ``--master`` this build cannot run on."""


#: The Spark master ``harness run`` uses without ``--master``.


def executor_for(master: str | None) -> Executor:
    """The executor ``--master`` names: ``local-processes``, one process per
    writer on this machine; any Spark master URL (``local[*]``, the default,
    ``local[N]``, ``spark://HOST:PORT``), the writers as Spark tasks."""
    from .executors import ProcessExecutor
    from .spark import SparkExecutor, unreachable_masters

    if master == LOCAL_PROCESSES:
        return ProcessExecutor()
    master = master or DEFAULT_MASTER
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
        "harness", help="race writers on one dataset and check that no committed work was lost"
    )
    group = harness.add_subparsers(dest="harness_command", required=True)

    run_parser = group.add_parser("run", help="run writers against one dataset, save the history, check it")
    run_parser.add_argument(
        "--writer",
        required=True,
        help="any driver that writes: reference, pylance, lancedb, pylance-distributed, lance-ray, daft, "
        "worker:MODULE, cmd:COMMAND or a module path; or faulty:NAME",
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
        help=f"a Spark master URL (default: {DEFAULT_MASTER}; spark://HOST:PORT for a cluster) or {LOCAL_PROCESSES}",
    )
    run_parser.add_argument("--seed", type=int, default=0)
    run_parser.add_argument(
        "--out", required=True, type=Path, help="directory for history.jsonl, run.json, report.json"
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
        help="the data file version the dataset is created with, e.g. 2.0 or 2.1 (default: the writer's own)",
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

    check_parser = group.add_parser("check", help="check a saved run again")
    check_parser.add_argument("dir", type=Path)
    check_parser.add_argument("--format", choices=("text", "json"), default="text")
    check_parser.set_defaults(run=_check)

    faulty = group.add_parser("faulty", help="list the shipped faulty writers")
    faulty.add_argument("--format", choices=("text", "json"), default="text")
    faulty.set_defaults(run=_faulty)


def _print(result: RunResult, output_format: str) -> int:
    from .report import report_document, summary_text

    if output_format == "json":
        print(json.dumps(report_document(result), indent=2))
    else:
        print(summary_text(result))
    return EXIT_CLEAN if result.report.clean else EXIT_ANOMALIES


def _usage(message: str) -> int:
    print(f"lance-conformance harness: {message}", file=sys.stderr)
    return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    from .runner import RunSpecError, run
    from .spark import SparkError
    from .workloads import WorkloadError, parse_workload, workload_to_json
    from .writers import WriterLoadError

    workloads = args.workload or ["mixed"]
    try:
        spec = RunSpec(
            uri=args.uri or str(args.out / "dataset.lance"),
            storage_options=dict(args.storage_options),
            writer=args.writer,
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
        if spec.writers < 1 or spec.operations < 0:
            return _usage("--writers must be at least 1 and --operations at least 0")
        executor = executor_for(args.master)
        try:
            result = run(spec, executor, args.out)
        finally:
            stop = getattr(executor, "stop", None)  # a Spark session this run started
            if stop is not None:
                stop()
    except (WorkloadError, WriterLoadError, RunSpecError, UnknownMasterError, SparkError) as exc:
        return _usage(str(exc))
    return _print(result, args.format)


def _check(args: argparse.Namespace) -> int:
    from .runner import recheck

    if not (args.dir / "run.json").is_file() or not (args.dir / "history.jsonl").is_file():
        return _usage(f"{args.dir} holds no saved run (run.json and history.jsonl)")
    return _print(recheck(args.dir), args.format)


def _faulty(args: argparse.Namespace) -> int:
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
    return EXIT_CLEAN
