"""The errors the reference implementation raises.

Every reader failure caused by the bytes or files of a dataset is a
:class:`LanceFormatError` (or a subclass) whose message names the file and the
problem, so that a malformed dataset never surfaces as a traceback from
``struct``, ``protobuf`` or ``pyarrow``.
"""

from __future__ import annotations


def _rebuilt(cls: type, args: tuple, state: dict) -> BaseException:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class LanceFormatError(Exception):
    """Base class: something about a dataset is not as the format requires."""

    def __init__(self, path: str, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):
        # Pickled as it is (class, message, attributes): __init__ takes the
        # path and the problem, not the message in ``args``, so the default
        # pickling of exceptions could not rebuild it in another process.
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


class NotADatasetError(LanceFormatError):
    """The path holds no Lance dataset (no manifests at all)."""


class CorruptFileError(LanceFormatError):
    """A file is truncated, has a wrong magic, an out-of-range length or
    offset, or bytes that do not decode as the message they should hold."""


class VersionNotFoundError(LanceFormatError):
    """The requested version has no manifest."""


class NamingSchemeError(LanceFormatError):
    """Manifest names mix the V1 and V2 naming schemes (layout: naming
    schemes), a name fits neither, or the version a manifest's name encodes
    is not the version the manifest holds."""


class UnsupportedFeatureError(LanceFormatError):
    """The dataset needs a feature this implementation does not know, such as
    an unknown reader feature flag or a data file encoding it cannot decode."""


class PathEscapeError(LanceFormatError):
    """A path recorded in the dataset leads outside the dataset root and its
    declared base paths."""


class CommitConflictError(LanceFormatError):
    """A commit could not be made because of another writer: a file it must
    create already exists (a manifest, a tag, a dataset at the target), or a
    version committed since the read version conflicts with the transaction
    (conflict resolution, ``reference_impl.commit.conflicts``).

    ``version`` is the committed version the transaction conflicts with and
    ``operation`` that version's operation (its proto oneof name, such as
    ``"delete"``), both None when unknown; ``retryable`` says whether running
    the whole operation again on the latest version could succeed.
    """

    RETRYABLE = False

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        version: int | None = None,
        operation: str | None = None,
        retryable: bool | None = None,
    ):
        super().__init__(path, problem)
        self.version = version
        self.operation = operation
        self.retryable = type(self).RETRYABLE if retryable is None else retryable


class RetryableConflictError(CommitConflictError):
    """A concurrent version conflicts, but running the whole operation again
    on the latest version may succeed (the same rows deleted twice, a
    fragment rewritten under a Delete, ...)."""

    RETRYABLE = True


class IncompatibleConflictError(CommitConflictError):
    """A concurrent version invalidates the operation: running it again would
    change what it means (an Append after an Overwrite, a Delete after a
    Restore), or the concurrent version cannot be judged (its transaction is
    missing or its operation unknown)."""


class CommitAttemptsExhaustedError(RetryableConflictError):
    """Every attempt lost the put-if-not-exists race of the next manifest to
    another writer; nothing conflicted, and trying again later may succeed."""


class UnreadablePathError(LanceFormatError):
    """A file or directory of the dataset cannot be read: the operating
    system refuses or fails (permission denied, an I/O error, a loop of
    symbolic links), or the entry is not what the format keeps there (a named
    pipe, socket or device where a file belongs, a file where a directory
    belongs). Such an entry is never opened: opening a named pipe would wait
    for a writer forever."""


class InvalidOperationError(ValueError):
    """The caller asked for something that cannot be done: an operation that
    does not apply to the version it is committed on (a field, fragment,
    index or region it names is not there, a base path is declared twice),
    or arguments that make no sense. The dataset is not at fault, unlike the
    :class:`LanceFormatError` family; no version was committed. A
    :class:`ValueError`, as argument errors are in Python."""


class ManifestStoreError(LanceFormatError):
    """The external manifest store cannot be used: it cannot be reached or
    opened, it refuses a request, or a row it holds is malformed (a path that
    lies outside the dataset, a version or size that is not a number).
    ``path`` names the store (its database file, or its table)."""


class ManifestStoreOutOfSyncError(LanceFormatError):
    """The external manifest store and the object store disagree about a
    version and a reader cannot synchronise them (external store reader:
    "if the reattempt at synchronization fails, the reader will refuse to
    load"): the store names a manifest that is not there, or one whose size
    or bytes differ from the manifest already at the final name. ``version``
    is the version concerned; the message names the paths."""

    def __init__(self, path: str, problem: str, *, version: int):
        super().__init__(path, problem)
        self.version = version
