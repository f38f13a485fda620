"""Generate the Python modules for the protos in this directory.

Run through ``tox -e protos``; the generated modules and their type stubs
(``.pyi``, which mypy reads) are committed under ``reference_impl/wire``.
``tests/project/test_protos.py`` calls :func:`generate` into a temporary
directory and fails when the committed modules are stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = PROTO_DIR.parent / "reference_impl" / "wire"

# protoc writes `import table_pb2 as table__pb2` for sibling protos (and
# `import table_pb2 as _table_pb2` in stubs); inside a package that must be a
# relative import.
_SIBLING_IMPORT = re.compile(r"^import (\w+_pb2) as (\w+)$", re.MULTILINE)


def proto_files() -> list[Path]:
    return sorted(PROTO_DIR.glob("*.proto"))


def generate(out_dir: Path = DEFAULT_OUT) -> list[Path]:
    """Compile every proto into ``out_dir`` and return the modules and stubs written."""
    import grpc_tools
    from grpc_tools import protoc  # only needed by whoever regenerates

    out_dir.mkdir(parents=True, exist_ok=True)
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_DIR}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        *(str(p) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {' '.join(args)}")
    written = []
    for proto in proto_files():
        for module in (out_dir / f"{proto.stem}_pb2.py", out_dir / f"{proto.stem}_pb2.pyi"):
            text = _SIBLING_IMPORT.sub(r"from . import \1 as \2", module.read_text())
            module.write_text(text)
            written.append(module)
    init = out_dir / "__init__.py"
    if not init.exists():
        init.write_text('"""Generated protobuf modules (see protos/generate.py)."""\n')
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    for path in generate(out):
        print(f"wrote {path}")
