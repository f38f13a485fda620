"""A minimal, readable reference implementation of the Lance table format.

One module per topic of the specification; each cites the section it
implements; docs/reference-implementation.md maps the modules to the topics.

Layers, top down (docs/layout.md, "Layers"; enforced by the import-linter
contracts in pyproject.toml): the dataset API (``dataset``), the operations
(``operations/``), the commit (``commit``), reading and writing rows
(``scan``, ``fragment_writer``), the data file format (``file_format/``), the
format core (manifests, schema and types, fragments, deletions, row ids,
indices, transactions, refs, naming, storage) and the foundation (``wire/``,
``errors``, ``entropy``, ``feature_flags``). A module imports only from its
own layer and those below; nothing here imports ``conformance``.

Conflict resolution lives in ``commit/conflicts.py``, the commit loop in
``commit/loop.py``, the external manifest store in ``commit/external_store/``.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dataset import Dataset

from ._version import __version__

__all__ = ["Dataset", "__version__"]


def __getattr__(name: str):
    # Dataset is the package's entry point; it is loaded on first use to
    # keep imports light: importing any submodule (``reference_impl.naming``)
    # first imports this package.
    if name == "Dataset":
        from .dataset import Dataset  # lazy: see above

        return Dataset
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
