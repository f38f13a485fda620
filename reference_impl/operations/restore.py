"""Restoring an old version (transaction specification: ``Restore``; older
table format page, "Committing Datasets").

A restore never rewrites history: it commits a *new* version, on top of the
version read, whose content (schema, fragments, indices, config, metadata)
is that of the version restored. The manifest of that version is read and
handed to the commit (``restore_source``), which copies its content and
keeps the high-water marks: ``max_fragment_id`` and ``next_row_id`` never go
back, so ids handed out after the restored version are never handed out
again (older table format page, "Assigning Row IDs"; pylance 14 does the same).

Like every other operation, the restore goes through the commit loop: a
version committed since ``dataset`` was read is resolved as the transaction
page's "Restore Compatibility" says (only an UpdateMemWalState conflicts;
``conflict.restore-otherwise-compatible``). pylance's
``lance.dataset(uri, version=n).restore()`` opens the latest version first;
here that is ``Dataset.open(uri).restore(n)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CorruptFileError, InvalidOperationError
from ..manifest_file import ManifestFile, read_manifest_file
from ..naming import resolve_version
from ..transactions import Restore

if TYPE_CHECKING:
    from ..dataset import Dataset


def restore(dataset: Dataset, version: int) -> Dataset:
    """Commit a new version whose content is that of ``version`` (which must
    exist on the dataset's branch); returns the new version."""
    source = version_manifest_file(dataset, version)
    return dataset.commit(Restore(version=version), restore_source=source)


def version_manifest_file(dataset: Dataset, version: int) -> ManifestFile:
    """The manifest file of ``version`` in the same directory as ``dataset``
    (its branch). Raises :class:`~reference_impl.errors.VersionNotFoundError`
    when that version has no manifest."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidOperationError(f"a version is a positive integer, not {version!r}")
    _, relpath, _ = resolve_version(dataset.storage, version)
    source = read_manifest_file(dataset.storage, relpath)
    if source.manifest.version != version:
        raise CorruptFileError(relpath, f"named as version {version} but holds version {source.manifest.version}")
    return source
