"""``python -m conformance.conflict_matrix measure|render``.

``measure`` runs every cell (or the ``--cells`` given)
in the chosen modes and writes the matrix as JSON; cells and modes not run keep the
outcome stored in ``--previous`` (default: the packaged data), or become
``pending``. ``render`` prints the stored matrix as Markdown
(``docs/conflicts.md``).
"""

from __future__ import annotations

import argparse
import os
import sys

from .build import assemble
from .cells import all_cells
from .measure import run_cells, workspace
from .model import Mode, dumps, load_file, stored_matrix
from .render import to_markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.conflict_matrix")
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("measure", help="race every cell and write the matrix as JSON")
    measure.add_argument("--output", default="-", help="file to write (default: standard output)")
    measure.add_argument(
        "--modes", nargs="+", choices=[m.value for m in Mode], default=[m.value for m in Mode], help="modes to run"
    )
    measure.add_argument("--previous", help="matrix whose outcomes modes not run keep (default: the packaged one)")
    measure.add_argument(
        "--cells",
        nargs="+",
        metavar="ID",
        help="race only these cells (ids as in the data); the others keep --previous",
    )
    commands.add_parser("render", help="print the stored matrix as Markdown")
    args = parser.parse_args(argv)
    if args.command == "render":
        sys.stdout.write(to_markdown(stored_matrix()))
        return 0
    # pylance warns on every DataReplacement it builds ("not stable yet"); the
    # matrix says what matters.
    os.environ.setdefault("LANCE_LOG", "error")
    try:
        previous = load_file(args.previous) if args.previous else stored_matrix()
    except FileNotFoundError:
        previous = None
    cells = all_cells()
    if args.cells:
        unknown = sorted(set(args.cells) - {cell.id for cell in cells})
        if unknown:
            parser.error(f"unknown cells: {', '.join(unknown)}")
    chosen = [cell for cell in cells if not args.cells or cell.id in args.cells]
    with workspace() as space:
        raced = dict((cell.id, observed) for cell, observed in run_cells(chosen, [Mode(m) for m in args.modes], space))
        matrix = assemble(((cell, raced.get(cell.id, {})) for cell in cells), previous=previous)
    text = dumps(matrix)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
