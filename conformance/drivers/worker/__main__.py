"""``python -m conformance.drivers.worker --driver NAME``: serve a Python driver
over the worker protocol (:mod:`.server`).

``python -m conformance.drivers.worker --check "COMMAND LINE" --dataset PATH``:
check any worker command against the protocol (:mod:`.protocol_check`);
prints its problems and exits 1 when there are any.
"""

import sys

if "--check" in sys.argv[1:]:
    import argparse
    import shlex

    from .protocol_check import check_worker

    parser = argparse.ArgumentParser(prog="python -m conformance.drivers.worker")
    parser.add_argument("--check", required=True, metavar="COMMAND LINE", help="the worker's command line")
    parser.add_argument("--dataset", required=True, help="a dataset the worker can read")
    args = parser.parse_args()
    problems = check_worker(shlex.split(args.check), args.dataset)
    for problem in problems:
        print(problem)
    print("speaks the worker protocol" if not problems else f"{len(problems)} problem(s)")
    sys.exit(1 if problems else 0)

from .server import main  # noqa: E402 - the check above needs none of the server

sys.exit(main())
