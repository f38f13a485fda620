"""Rules on blob v2 columns (upstream ``docs/src/format/table/blob.md``).

For every top-level blob v2 field of a version and every data file storing
it, the descriptors are read (:func:`reference_impl.blobs.read_descriptors`,
every physical row) and each one is followed to its object without reading
the object's bytes: only its existence and size are asked for. What each
descriptor gives is worked out once per version (:func:`_blob_checks`) and
each rule reports its own kind of problem:

* ``blob/descriptor-well-formed``: the descriptors can be read, each has a
  known kind and the children that kind uses;
* ``blob/base-declared``: external (nonzero ``blob_id``) and managed
  descriptors name a declared base path;
* ``blob/sidecar-exists``: the packed and dedicated sidecars named exist;
* ``blob/range-inside-object``: each recorded range lies inside the data
  file or sidecar (a dedicated value is its whole sidecar);
* ``blob/external-available``: an external object inside the dataset root or
  a declared base path exists and holds the recorded range (a warning: the
  table does not own it);
* ``blob/external-outside``: an absolute external URI outside the root and
  every declared base is reported, never fetched (info);
* ``blob/nested-unchecked``: a blob v2 field beneath a struct or a list is
  reported: the reference does not read such descriptors, so its blobs go
  unchecked (info, never silence).

A data file that cannot be located is left to the data file rules; its
blobs are not followed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from reference_impl.blob_descriptors import (
    BlobKind,
    BlobLocation,
    Descriptor,
    ExternalBlobOutsideError,
    blob_data_file,
    is_blob_v2,
    locate,
    nested_blob_v2_fields,
)
from reference_impl.dataset import Dataset, FileLocation
from reference_impl.errors import LanceFormatError, PathEscapeError
from reference_impl.fragments import DataFile
from reference_impl.schema import Field

from ..context import VersionView
from ..facts.data_files import locate as locate_data_file
from ..facts.text import listed
from ..registry import Severity, rule

# The descriptor model (reference_impl.blob_descriptors) needs no Arrow; the
# descriptor column is read through the file reader and pyarrow, imported
# inside _read_descriptors: a version without blob v2 fields (most datasets)
# never needs them, and importing them is most of the validator's start-up.

#: Rows named in one finding; the rest are counted.
MAX_ROWS_NAMED = 5


class BlobProblem(enum.Enum):
    """What a descriptor (or a data file's descriptor column) gives; one rule each."""

    MALFORMED = "malformed"
    BASE_UNDECLARED = "base-undeclared"
    SIDECAR_MISSING = "sidecar-missing"
    OUT_OF_RANGE = "out-of-range"
    EXTERNAL_UNAVAILABLE = "external-unavailable"
    EXTERNAL_OUTSIDE = "external-outside"


@dataclass(frozen=True)
class BlobCheck:
    """One problem, with the rows of the data file it concerns."""

    problem: BlobProblem
    message: str
    location: str
    rows: tuple[int, ...] = ()

    def text(self) -> str:
        if not self.rows:
            return self.message
        word = "row" if len(self.rows) == 1 else "rows"
        return f"{self.message} ({word} {listed(self.rows, MAX_ROWS_NAMED)})"


def _blob_fields(view: VersionView) -> list[Field]:
    return [f for f in view.manifest.schema.top_level() if is_blob_v2(f)]


def _blob_checks(view: VersionView) -> list[BlobCheck]:
    """Every blob problem of the version, worked out once per version."""
    return view.memo("blobs.checks", lambda: list(_each_check(view)))


def _each_check(view: VersionView) -> Iterator[BlobCheck]:
    fields = _blob_fields(view)
    if not fields:
        return
    for fragment in view.manifest.fragments:
        for field in fields:
            data_file = blob_data_file(fragment, field)
            if data_file is None or not locate_data_file(view, data_file).ok:
                continue
            yield from _data_file_checks(view, fragment.id, data_file, field)


def _data_file_checks(view: VersionView, fragment_id: int, data_file: DataFile, field: Field) -> list[BlobCheck]:
    where = f"fragment {fragment_id}, blob field {field.name!r}"
    try:
        location = view.reader.data_file_location(data_file)
    except LanceFormatError:
        return []  # the data file rules report where it is not
    # The descriptors of a data file many versions list are read once a run.
    key = ("blob-descriptors", str(location), field.id)
    loaded = view.dataset.cached(key, _read_descriptors, view.reader, data_file, field)
    if not loaded.ok:
        message = f"{where}: the descriptors cannot be read: {loaded.error}"
        return [BlobCheck(BlobProblem.MALFORMED, message, view.at(where))]
    descriptors = loaded.value
    grouped: dict[tuple[BlobProblem, str, str], list[int]] = {}
    sizes: dict[str, int | LanceFormatError] = {}
    for row, descriptor in enumerate(descriptors):
        if descriptor is None:
            continue
        found = _descriptor_check(view, location, descriptor, sizes)
        if found is not None:
            problem, message, at = found
            grouped.setdefault((problem, f"{where}: {message}", at), []).append(row)
    return [BlobCheck(problem, message, at, tuple(rows)) for (problem, message, at), rows in grouped.items()]


def _read_descriptors(dataset: Dataset, data_file: DataFile, field: Field) -> list[Descriptor | None]:
    """The descriptors of ``field`` in ``data_file``, every physical row."""
    from reference_impl.blobs import read_descriptors  # lazy: pyarrow and the reader (the note under the imports)

    return read_descriptors(dataset, data_file, field)


def _descriptor_check(
    view: VersionView, data_file: FileLocation, descriptor: Descriptor, sizes: dict[str, int | LanceFormatError]
) -> tuple[BlobProblem, str, str] | None:
    """The problem of one descriptor, or None; ``sizes`` keeps the size (or
    the error) of each object already asked about."""
    try:
        target = locate(view.reader, data_file, descriptor)
    except ExternalBlobOutsideError:
        return (
            BlobProblem.EXTERNAL_OUTSIDE,
            f"external blob {descriptor.blob_uri!r} is outside the dataset root and its declared base paths: "
            "not checked",
            _shown(view, data_file),
        )
    except PathEscapeError as exc:
        return BlobProblem.BASE_UNDECLARED, exc.problem, _shown(view, data_file)
    except LanceFormatError as exc:
        return BlobProblem.MALFORMED, exc.problem, _shown(view, data_file)
    kind = BlobKind(descriptor.kind)
    if target.size == 0 and kind is not BlobKind.DEDICATED:
        return None  # an empty value: nothing to find (blob.md: empty regardless of position)
    key = str(target)
    if key not in sizes:
        sizes[key] = _object_size(target)
    size = sizes[key]
    if isinstance(size, LanceFormatError):
        if kind in (BlobKind.PACKED, BlobKind.DEDICATED):
            return BlobProblem.SIDECAR_MISSING, f"the {kind.name.lower()} sidecar is missing: {size.problem}", key
        if kind is BlobKind.EXTERNAL:
            return BlobProblem.EXTERNAL_UNAVAILABLE, f"the external object cannot be read: {size.problem}", key
        return BlobProblem.OUT_OF_RANGE, f"the {kind.name.lower()} object cannot be read: {size.problem}", key
    length = size - target.position if target.size is None else target.size
    end = target.position + length
    if kind is BlobKind.DEDICATED and (target.position, target.size) != (0, size):
        return (
            BlobProblem.OUT_OF_RANGE,
            f"a dedicated value of {descriptor.size} bytes, but its sidecar holds {size} bytes",
            key,
        )
    if length < 0 or end > size:
        problem = BlobProblem.EXTERNAL_UNAVAILABLE if kind is BlobKind.EXTERNAL else BlobProblem.OUT_OF_RANGE
        what = "data file" if kind is BlobKind.INLINE else "object"
        return problem, f"range [{target.position}, {end}) runs past the {what} ({size} bytes)", key
    return None


def _shown(view: VersionView, data_file: FileLocation) -> str:
    """A data file as a finding locates it: relative to the dataset root when
    it lies in the dataset's own storage (Finding.location), else in full
    (a file under another base path)."""
    if data_file.storage.join("") == view.dataset.storage.join(""):
        return data_file.relpath
    return str(data_file)


def _object_size(target: BlobLocation) -> int | LanceFormatError:
    try:
        return target.storage.size(target.relpath)
    except LanceFormatError as exc:
        return exc
    except OSError as exc:  # not a file the storage can size (a directory...)
        return LanceFormatError(str(target), f"cannot be read ({exc.strerror or exc})")


def _report(view: VersionView, problem: BlobProblem):
    for check in _blob_checks(view):
        if check.problem is problem:
            yield check.text(), check.location


# -- rules ---------------------------------------------------------------------------


@rule(
    "blob/descriptor-well-formed",
    severity=Severity.ERROR,
    requirements=("blob.descriptor-kind-known", "blob.descriptor-fields-per-kind"),
    summary="A blob v2 column's descriptors can be read, and each has a known kind and the children its kind uses",
)
def descriptor_well_formed(view: VersionView):
    yield from _report(view, BlobProblem.MALFORMED)


@rule(
    "blob/base-declared",
    severity=Severity.ERROR,
    requirements=("blob.base-declared",),
    summary="An external blob with a nonzero blob_id, and a managed blob, name a base path the manifest declares",
)
def base_declared(view: VersionView):
    yield from _report(view, BlobProblem.BASE_UNDECLARED)


@rule(
    "blob/sidecar-exists",
    severity=Severity.ERROR,
    requirements=("blob.sidecar-exists",),
    summary="The packed and dedicated sidecars blob descriptors name exist beside their data file",
)
def sidecar_exists(view: VersionView):
    yield from _report(view, BlobProblem.SIDECAR_MISSING)


@rule(
    "blob/range-inside-object",
    severity=Severity.ERROR,
    requirements=("blob.range-inside-object",),
    summary="A blob's recorded range lies inside its data file or sidecar; a dedicated blob is its whole sidecar",
)
def range_inside_object(view: VersionView):
    yield from _report(view, BlobProblem.OUT_OF_RANGE)


@rule(
    "blob/external-available",
    severity=Severity.WARNING,
    requirements=("blob.external-object-available",),
    summary="An external blob inside the dataset root or a declared base path exists and holds its recorded range",
)
def external_available(view: VersionView):
    yield from _report(view, BlobProblem.EXTERNAL_UNAVAILABLE)


@rule(
    "blob/external-outside",
    severity=Severity.INFO,
    requirements=("blob.external-outside-bases",),
    summary="An external blob URI outside the dataset root and every declared base path is reported, never fetched",
)
def external_outside(view: VersionView):
    yield from _report(view, BlobProblem.EXTERNAL_OUTSIDE)


@rule(
    "blob/nested-unchecked",
    severity=Severity.INFO,
    requirements=("blob.nested-fields",),
    summary="A blob v2 field beneath a struct or a list is reported: its blobs are not followed",
)
def nested_unchecked(view: VersionView):
    schema = view.manifest.schema
    by_id = {f.id: f for f in schema.fields}
    for field in nested_blob_v2_fields(schema.fields):
        path, parent = [field.name], by_id.get(field.parent_id)
        while parent is not None:
            path.insert(0, parent.name)
            parent = by_id.get(parent.parent_id)
        yield (
            f"blob v2 field {'.'.join(path)!r} (id {field.id}) is nested below the top level: "
            "its descriptors, sidecars and external objects are not checked",
            view.at("schema"),
        )
