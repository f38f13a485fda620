"""A minimal, readable reference implementation of the Lance table format.

One module per topic of the specification; each cites the section it
implements. See README.md for the map.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dataset import Dataset

from ._version import __version__

__all__ = ["Dataset", "__version__"]


def __getattr__(name: str):
    # Dataset is the package's entry point, but it needs pyarrow; loading it
    # on first use keeps ``import reference_impl.naming`` (and the other
    # submodules that do not need Arrow) light.
    if name == "Dataset":
        from .dataset import Dataset  # lazy: see above

        return Dataset
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
