"""Rules on index metadata (table format: IndexMetadata, IndexSection; layout:
index directories).

Index payloads are opaque to the table format: these rules check what the
manifest says about each index, and that the files it lists are where and as
large as it says. Fragment bitmaps are looked at as Roaring bitmaps (count and
largest id), never expanded into lists.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError
from pyroaring import BitMap

from reference_impl.errors import LanceFormatError
from reference_impl.index_metadata import INDICES_DIR, IndexMetadata
from reference_impl.storage import Storage
from reference_impl.wire import table_pb2

from ..context import VersionView
from ..facts.text import listed
from ..registry import Severity, rule

#: What counts as small enough to keep in the manifest: table.proto keeps
#: fragment-reuse content inline "under 200 KB" (and row id sequences under
#: about 200 KB); index details are held to the same size.
INLINE_LIMIT = 200 * 1024
FRAGMENT_REUSE_TYPE_NAME = "lance.table.fragmentreuseindexdetails"


def _indices(view: VersionView) -> list[IndexMetadata]:
    return view.manifest_file.indices or []


def _at(view: VersionView, position: int, detail: str = "") -> str:
    return view.at(f"index_section.indices[{position}]{'.' + detail if detail else ''}")


def _bitmap(index: IndexMetadata) -> BitMap | None:
    """The fragment bitmap (None when absent or undecodable: manifest/decodes
    reports the latter)."""
    if index.fragment_bitmap is None:
        return None
    try:
        return BitMap.deserialize(bytes(index.fragment_bitmap))
    except Exception:  # pyroaring raises several types on bad input
        return None


def _delta_compatible(a: IndexMetadata, b: IndexMetadata) -> bool:
    """Two entries that can be delta segments of one index: same columns and type."""
    return a.fields == b.fields and (a.type_url or "").lower() == (b.type_url or "").lower()


@rule(
    "index/name-unique",
    severity=Severity.ERROR,
    requirements=("index.name-unique",),
    summary="Index entries sharing a name are delta segments of one index (same fields, same type)",
)
def name_unique(view: VersionView):
    first: dict[str, int] = {}
    indices = _indices(view)
    for position, index in enumerate(indices):
        if index.name in first:
            other = indices[first[index.name]]
            if not _delta_compatible(other, index):
                yield (
                    f"indices {other.uuid} and {index.uuid} share the name '{index.name}' but cover fields "
                    f"{other.fields} / {index.fields} with types {other.type_url} / {index.type_url}",
                    _at(view, position, "name"),
                )
        else:
            first[index.name] = position


@rule(
    "index/delta-segments",
    severity=Severity.INFO,
    requirements=("index.name-unique",),
    summary="Index names are unique in a version as table.proto says (delta indices share one; "
    "see docs/spec-discrepancies.md)",
)
def delta_segments(view: VersionView):
    counts: dict[str, int] = {}
    for index in _indices(view):
        counts[index.name] = counts.get(index.name, 0) + 1
    for name, count in sorted(counts.items()):
        if count > 1:
            yield (
                f"{count} index entries share the name '{name}': delta indices, which upstream index.md allows "
                "and table.proto does not",
                view.at("index_section"),
            )


#: Symptom of index/segments-disjoint: a later segment covers every fragment
#: of an earlier one besides its own, as a delta segment of old pylance
#: releases does (conformance/data/writer_defects.json).
DELTA_REPEATS_EARLIER = "delta-repeats-earlier-fragments"


@rule(
    "index/segments-disjoint",
    severity=Severity.ERROR,
    requirements=("index.segments-disjoint",),
    summary="The segments of one index (entries sharing a name, fields and type) cover disjoint fragments",
    symptoms={
        DELTA_REPEATS_EARLIER: "a later segment covers all of an earlier segment's fragments as well as fragments "
        "of its own",
    },
)
def segments_disjoint(view: VersionView):
    """Upstream's index overview (Basic Concepts): each segment of an index
    covers its own fragments. Entries that share a name but not fields or
    type are not segments of one index; index/name-unique reports them."""
    covered: dict[tuple, list[tuple[IndexMetadata, BitMap]]] = {}
    for position, index in enumerate(_indices(view)):
        bitmap = _bitmap(index)
        if not bitmap:
            continue  # no bitmap: the coverage is unknown, nothing to compare
        key = (index.name, tuple(index.fields), (index.type_url or "").lower())
        earlier = covered.setdefault(key, [])
        for other, other_bitmap in earlier:
            shared = bitmap & other_bitmap
            if shared:
                repeats_earlier = len(shared) == len(other_bitmap) and len(bitmap) > len(other_bitmap)
                yield (
                    f"segments {other.uuid} and {index.uuid} of index '{index.name}' both cover fragments "
                    f"{listed(shared)}: "
                    "a fragment belongs to at most one segment of an index",
                    _at(view, position, "fragment_bitmap"),
                    DELTA_REPEATS_EARLIER if repeats_earlier else None,
                )
                break  # one finding per segment, naming the first it overlaps
        earlier.append((index, bitmap))


@rule(
    "index/uuid-unique",
    severity=Severity.ERROR,
    requirements=("index.uuid-unique",),
    summary="No two index entries of a version share a uuid, and a uuid kept from the previous version "
    "is the same index",
)
def uuid_unique(view: VersionView):
    seen: dict[str, int] = {}
    for position, index in enumerate(_indices(view)):
        if index.uuid in seen:
            yield f"index entries {seen[index.uuid]} and {position} share the uuid {index.uuid}", _at(view, position)
        else:
            seen[index.uuid] = position
    previous = _previous_indices(view)
    for position, index in enumerate(_indices(view)):
        before = previous.get(index.uuid)
        if before is None:
            continue
        changed = [
            what
            for what, a, b in (
                ("name", before.name, index.name),
                ("fields", before.fields, index.fields),
                ("details message", _details_message(before.type_url), _details_message(index.type_url)),
            )
            if a != b
        ]
        if changed:
            yield (
                f"index {index.uuid} has another {', '.join(changed)} than in the previous version: one uuid must "
                "name one index",
                _at(view, position),
            )


def _details_message(type_url: str | None) -> str | None:
    """The message an index's details are, without its protobuf package.

    pylance moved the index details messages from the package ``lance.table``
    to ``lance.index.pb`` (pylance 14 rewrites ``/lance.table.VectorIndexDetails``
    of an index written by 0.20 as ``/lance.index.pb.VectorIndexDetails`` under
    the same uuid); the index is the same one, so only the message name counts.
    """
    return type_url.rsplit(".", 1)[-1] if type_url else type_url


def _previous_indices(view: VersionView) -> dict[str, IndexMetadata]:
    """Index entries of the nearest earlier retained version, by uuid."""
    earlier = [v for v in view.dataset.manifest_paths() if v < view.version]
    if not earlier:
        return {}
    loaded = view.dataset.manifest_file(max(earlier))
    if not loaded.ok:
        return {}
    found: dict[str, IndexMetadata] = {}
    for index in loaded.value.indices or []:
        found.setdefault(index.uuid, index)
    return found


@rule(
    "index/fields-exist",
    severity=Severity.ERROR,
    requirements=("index.fields-exist",),
    summary="Every field id an index covers is a field of the version's schema",
)
def fields_exist(view: VersionView):
    known = set(view.manifest.schema.field_ids())
    for position, index in enumerate(_indices(view)):
        missing = [field_id for field_id in index.fields if field_id not in known]
        if missing:
            yield (
                f"index '{index.name}' ({index.uuid}) covers field ids {missing}, which the schema does not have",
                _at(view, position, "fields"),
            )


@rule(
    "index/dataset-version-not-later",
    severity=Severity.ERROR,
    requirements=("index.dataset-version-not-later",),
    summary="An index's dataset_version is not later than the version listing it",
)
def dataset_version_not_later(view: VersionView):
    for position, index in enumerate(_indices(view)):
        if index.dataset_version > view.version:
            yield (
                f"index '{index.name}' ({index.uuid}) was built from version {index.dataset_version}, later than "
                f"this version {view.version}",
                _at(view, position, "dataset_version"),
            )


def _fragment_high_water(view: VersionView) -> int:
    """The highest fragment id this version can have assigned."""
    manifest = view.manifest
    present = max((f.id for f in manifest.fragments), default=0)
    if manifest.max_fragment_id is None:
        return present
    return max(manifest.max_fragment_id, present)


@rule(
    "index/fragment-bitmap-bounded",
    severity=Severity.ERROR,
    requirements=("index.fragment-bitmap-from-dataset-version",),
    summary="An index's fragment bitmap names only fragment ids assigned by this version (at most max_fragment_id)",
)
def fragment_bitmap_bounded(view: VersionView):
    high = _fragment_high_water(view)
    for position, index in enumerate(_indices(view)):
        bitmap = _bitmap(index)
        if bitmap and bitmap.max() > high:
            beyond = len(bitmap) - bitmap.rank(high)
            yield (
                f"index '{index.name}' ({index.uuid}) covers {beyond} fragment ids above {high}, the highest id "
                f"assigned so far (the largest is {bitmap.max()})",
                _at(view, position, "fragment_bitmap"),
            )


@rule(
    "index/fragment-bitmap-from-dataset-version",
    severity=Severity.INFO,
    requirements=("index.fragment-bitmap-from-dataset-version",),
    summary="An index's fragments were fragments at its dataset_version (pylance remaps bitmaps on compaction; "
    "see docs/spec-discrepancies.md)",
)
def fragment_bitmap_from_dataset_version(view: VersionView):
    for position, index in enumerate(_indices(view)):
        bitmap = _bitmap(index)
        if not bitmap or index.dataset_version > view.version:
            continue
        if index.dataset_version == view.version:
            existing = BitMap(f.id for f in view.manifest.fragments if 0 <= f.id < 2**32)
        else:
            loaded = view.dataset.manifest_file(index.dataset_version)
            if not loaded.ok:
                continue  # that version is gone: the bitmap is all there is
            existing = BitMap(f.id for f in loaded.value.manifest.fragments if 0 <= f.id < 2**32)
        foreign = bitmap - existing
        if foreign:
            yield (
                f"index '{index.name}' ({index.uuid}) covers fragments {listed(foreign)} that version "
                f"{index.dataset_version} "
                f"did not have (a compaction remapped the index without moving its dataset_version, as {view.writer} "
                "does)",
                _at(view, position, "fragment_bitmap"),
            )


@rule(
    "index/type-url-unique-ignoring-case",
    severity=Severity.ERROR,
    requirements=("index.type-url-unique-ignoring-case",),
    summary="No two index type URLs of a version differ only in case",
)
def type_url_unique_ignoring_case(view: VersionView):
    spellings: dict[str, str] = {}
    for position, index in enumerate(_indices(view)):
        if not index.type_url:
            continue
        folded = index.type_url.lower()
        known = spellings.setdefault(folded, index.type_url)
        if known != index.type_url:
            yield (
                f"index '{index.name}' ({index.uuid}) has the type URL '{index.type_url}', which differs from "
                f"'{known}' only in case: type URLs are compared ignoring case",
                _at(view, position, "index_details"),
            )


def _index_directory(view: VersionView, index: IndexMetadata) -> tuple[Storage, str] | None:
    """The storage and relative path of the index's directory; None when its
    base_id is not declared (the base-path rules report that)."""
    if index.base_id is None:
        return view.dataset.storage, f"{INDICES_DIR}/{index.uuid}"
    base = view.manifest.base_path(index.base_id)
    if base is None:
        return None
    try:
        storage = view.dataset.storage.for_base(base.path)
    except LanceFormatError:
        return None  # not a usable path: nothing here can be checked
    return storage, f"{INDICES_DIR}/{index.uuid}" if base.is_dataset_root else index.uuid


def _file_location(view: VersionView, storage: Storage, relpath: str) -> str:
    if storage.root == view.dataset.storage.root:
        return relpath
    return f"{storage.root}/{relpath}"


def _index_file_size(view: VersionView, storage: Storage, relpath: str) -> int | LanceFormatError | None:
    """The size of an index file (None when it is not there; the error when
    its size cannot be read), once per run however many versions list it."""
    return view.dataset.memo(("index-file-size", str(storage.root), relpath), _read_size, storage, relpath)


def _read_size(storage: Storage, relpath: str) -> int | LanceFormatError | None:
    if not storage.exists(relpath):
        return None
    try:
        return storage.size(relpath)
    except LanceFormatError as exc:
        return exc


def _prefetch_size(view: VersionView, storage: Storage, relpath: str) -> None:
    """:func:`_index_file_size` ahead of the rule's walk. An error it does not
    report in its result is left for the walk to meet where the serial order
    meets it (the findings yielded before it are kept)."""
    try:
        _index_file_size(view, storage, relpath)
    except Exception:  # re-raised by the walk, in order
        pass


@rule(
    "index/file-sizes-match",
    severity=Severity.ERROR,
    requirements=("index.file-sizes-match", "index.directory-per-uuid"),
    summary="Each file an index lists is in its directory with the listed size",
)
def file_sizes_match(view: VersionView):
    listed = []
    for position, index in enumerate(_indices(view)):
        if not index.files:
            continue
        located = _index_directory(view, index)
        if located is None:
            continue
        storage, directory = located
        if not storage.is_dir(directory):
            continue  # index/directory-present
        listed.append((position, index, storage, directory))
    # On an object store each file's size is a request or two: they are made concurrently, once per run.
    view.dataset.map_remote(
        lambda item: _prefetch_size(view, item[0], item[1]),
        [(storage, f"{directory}/{entry.path}") for _, index, storage, directory in listed for entry in index.files],
    )
    for position, index, storage, directory in listed:
        for number, entry in enumerate(index.files):
            relpath = f"{directory}/{entry.path}"
            where = _file_location(view, storage, relpath)
            found = _index_file_size(view, storage, relpath)
            if found is None:
                yield f"index '{index.name}' lists '{entry.path}', which is not in its directory", where
                continue
            if isinstance(found, LanceFormatError):
                yield f"index '{index.name}': cannot read the size of '{entry.path}': {found.problem}", where
                continue
            size = found
            if size != entry.size_bytes:
                yield (
                    f"index '{index.name}' lists '{entry.path}' as {entry.size_bytes} bytes; the file has {size}",
                    _at(view, position, f"files[{number}].size_bytes"),
                )


@rule(
    "index/directory-present",
    severity=Severity.WARNING,
    requirements=("index.directory-per-uuid",),
    summary="An index that lists files has its directory _indices/{uuid}/",
)
def directory_present(view: VersionView):
    for index in _indices(view):
        if not index.files:
            continue
        located = _index_directory(view, index)
        if located is None:
            continue
        storage, directory = located
        if not storage.is_dir(directory):
            yield (
                f"index '{index.name}' lists {len(index.files)} files but its directory does not exist: readers "
                "cannot use the index",
                _file_location(view, storage, directory),
            )


@rule(
    "index/details-compact",
    severity=Severity.WARNING,
    requirements=("index.details-compact",),
    summary=f"Index details stay small: under {INLINE_LIMIT // 1024} KB, the size the seeds keep inline",
)
def details_compact(view: VersionView):
    for position, index in enumerate(_indices(view)):
        size = len(index.details or b"")
        if size >= INLINE_LIMIT:
            yield (
                f"index '{index.name}' ({index.uuid}) has {size} bytes of details, which every reader of the "
                f"manifest loads; details of {INLINE_LIMIT // 1024} KB and more belong in the index's own files",
                _at(view, position, "index_details"),
            )


def _fragment_reuse(index: IndexMetadata) -> table_pb2.FragmentReuseIndexDetails | None:
    if (index.type_url or "").rsplit("/", 1)[-1].lower() != FRAGMENT_REUSE_TYPE_NAME:
        return None
    try:
        return table_pb2.FragmentReuseIndexDetails.FromString(bytes(index.details or b""))
    except (DecodeError, RecursionError, ValueError):
        return None  # payloads are opaque to the table format; nothing to judge


@rule(
    "index/fragment-reuse-inline-when-small",
    severity=Severity.WARNING,
    requirements=("index.fragment-reuse-inline-when-small",),
    summary=f"Fragment-reuse index content under {INLINE_LIMIT // 1024} KB is inline, larger content external",
)
def fragment_reuse_inline_when_small(view: VersionView):
    for position, index in enumerate(_indices(view)):
        details = _fragment_reuse(index)
        if details is None:
            continue
        kind = details.WhichOneof("content")
        if kind == "external" and details.external.size < INLINE_LIMIT:
            yield (
                f"fragment-reuse index '{index.name}' keeps its content in '{details.external.path}' though it is "
                f"only {details.external.size} bytes; content under {INLINE_LIMIT // 1024} KB belongs inline",
                _at(view, position, "index_details"),
            )
        elif kind == "inline":
            size = details.inline.ByteSize()
            if size >= INLINE_LIMIT:
                yield (
                    f"fragment-reuse index '{index.name}' keeps {size} bytes of content inline; content of "
                    f"{INLINE_LIMIT // 1024} KB and more belongs in an external file",
                    _at(view, position, "index_details"),
                )
