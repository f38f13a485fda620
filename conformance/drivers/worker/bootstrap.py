"""Start the worker server from a foreign environment: ``python -I bootstrap.py --driver NAME``.

An old pylance release's venv has its own pyarrow and none of the project's
dependencies, so the project is not installed there. This script loads the
``conformance`` package from the directory it lives in without putting that
directory's parent on ``sys.path`` (which may be another Python's
site-packages), then runs :func:`conformance.drivers.worker.server.main`.
Everything the server imports there is the standard library, the driver
(``conformance.describe`` and the release's ``lance``) and pyarrow.
"""

import importlib
import importlib.util
import sys
from pathlib import Path


def load_conformance_package() -> None:
    package_dir = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "conformance", package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    assert spec is not None and spec.loader is not None  # a file location always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance"] = module
    spec.loader.exec_module(module)


if __name__ == "__main__":
    load_conformance_package()
    sys.exit(importlib.import_module("conformance.drivers.worker.server").main(sys.argv[1:]))
