"""Count the machine instructions one ``validate`` executes
(``python -m benchmarks.instructions PATH [RULE_OR_PREFIX ...]``).

Timings on a shared 2-core VM move by 10 to 50% from minute to minute, far
more than the change a few per cent of Python makes; an instruction count
does not move at all. This runs the validation under valgrind's cachegrind
(``valgrind`` from the distribution; not a project dependency), once with one
``validate`` after a warm-up and once with two, and prints the difference:
the instructions of one validation, imports and first-use caches excluded.
Hash randomization is fixed, so two runs of the same tree give the same
count. Instructions are not time (system calls cost time and few
instructions; protobuf's C decoder runs more instructions a cycle than the
interpreter), so a change is judged by both (benchmarks/README.md, "Fifth
round").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: The script cachegrind runs (``python -c``: ``sys.argv`` is ``["-c", COUNT,
#: PATH, RULE...]``): a warm-up validation, then COUNT measured ones.
_RUN = """
import sys
from conformance.validator import validate
count, path, rules = int(sys.argv[1]), sys.argv[2], sys.argv[3:] or None
for _ in range(1 + count):
    validate(path, rules=rules)
"""
_TOTAL = re.compile(r"I\s+refs:\s+([\d,]+)")


def _instructions(path: str, rules: list[str], count: int) -> int:
    """Instructions of a process that validates ``path`` ``1 + count`` times."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    command += [sys.executable, "-c", _RUN, str(count), path, *rules]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = _TOTAL.search(done.stderr)
    if done.returncode or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    path, rules = str(Path(argv[0]).resolve()), argv[1:]
    one, two = _instructions(path, rules, 1), _instructions(path, rules, 2)
    selected = f" ({', '.join(rules)})" if rules else ""
    print(f"{(two - one) / 1e6:.1f} M instructions a validation of {path}{selected}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
