"""The IVF clustering of a vector index and the segment reader
(format/index/vector/index.md, "Storage Layout (V3)": ``index.idx`` schema
metadata ``lance:index`` and ``lance:ivf``, the ``IVF`` message in a global
buffer; ``auxiliary.idx`` with its own ``lance:ivf``, ``distance_type`` and
``storage_metadata``).

The partitions of both files are contiguous row ranges written in partition
order; the auxiliary file's ranges say which rows (``_rowid``) each
partition holds. Global buffer numbers in the metadata count the file
descriptor's buffer as 0, as :attr:`IndexFileContents.global_buffers` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from google.protobuf.message import DecodeError

from ...file_format.footer import LAYOUT_LEGACY, layout_of, read_footer_version
from ...index_metadata import IndexMetadata
from ...wire import index_pb2
from ..files import IndexFileContents, IndexFormatError, read_index_file
from .distance import DistanceType
from .flat import FlatStorage, FlatSubIndex, read_flat_storage
from .hnsw import HnswSubIndex, read_hnsw
from .pq import PqStorage, read_pq_storage
from .rq import RqStorage, read_rq_storage
from .sq import SqStorage, read_sq_storage
from .tensor import buffer_of, tensor_array

if TYPE_CHECKING:
    from ...dataset import Dataset

INDEX_FILE = "index.idx"
AUXILIARY_FILE = "auxiliary.idx"
ROW_ID_COLUMN = "_rowid"
#: The most partitions or elements of a tensor believed before allocating.
MAX_PARTITIONS = 1 << 24


@dataclass(frozen=True)
class Ivf:
    """One file's ``IVF`` message: partition ranges, and centroids (the
    auxiliary file's has none)."""

    #: Shape ``[num_partitions, dimension]``, or ``[0, 0]`` when absent.
    centroids: np.ndarray
    #: First row of each partition in its file.
    offsets: np.ndarray
    #: Rows of each partition.
    lengths: np.ndarray
    loss: float | None

    @property
    def num_partitions(self) -> int:
        return len(self.lengths)


def read_ivf(contents: IndexFileContents) -> Ivf:
    """The ``IVF`` message ``lance:ivf`` points at."""
    buffer = buffer_of(contents, contents.text("lance:ivf"), "lance:ivf")
    try:
        message = index_pb2.IVF.FromString(buffer)
    except DecodeError as exc:
        raise IndexFormatError(contents.path, f"the lance:ivf buffer is not an IVF message: {exc}") from None
    if len(message.lengths) > MAX_PARTITIONS or len(message.offsets) != len(message.lengths):
        raise IndexFormatError(
            contents.path, f"the IVF message has {len(message.offsets)} offsets and {len(message.lengths)} lengths"
        )
    if message.HasField("centroids_tensor"):
        centroids = tensor_array(contents.path, message.centroids_tensor, "the IVF centroids")
        if centroids.ndim != 2:
            raise IndexFormatError(contents.path, f"the IVF centroids have shape {list(centroids.shape)}, not 2-D")
    elif message.centroids:
        count = len(message.lengths)
        flat = np.asarray(message.centroids, dtype=np.float32)
        if count == 0 or len(flat) % count:
            raise IndexFormatError(contents.path, f"{len(flat)} centroid values do not split into {count} partitions")
        centroids = flat.reshape(count, -1)
    else:
        centroids = np.zeros((0, 0), dtype=np.float32)
    return Ivf(
        centroids=centroids,
        offsets=np.asarray(message.offsets, dtype=np.uint64),
        lengths=np.asarray(message.lengths, dtype=np.uint64),
        loss=message.loss if message.HasField("loss") else None,
    )


def json_metadata(contents: IndexFileContents, key: str) -> Any:
    try:
        return json.loads(contents.text(key))
    except json.JSONDecodeError as exc:
        raise IndexFormatError(contents.path, f"the metadata value of {key!r} is not JSON: {exc}") from None


def storage_metadata(contents: IndexFileContents) -> dict:
    """The one quantizer JSON object of ``storage_metadata`` (a JSON list
    holding one JSON text)."""
    outer = json_metadata(contents, "storage_metadata")
    if not isinstance(outer, list) or len(outer) != 1 or not isinstance(outer[0], str):
        raise IndexFormatError(contents.path, "storage_metadata is not a JSON list of one JSON text")
    try:
        inner = json.loads(outer[0])
    except json.JSONDecodeError as exc:
        raise IndexFormatError(contents.path, f"the storage_metadata entry is not JSON: {exc}") from None
    if not isinstance(inner, dict):
        raise IndexFormatError(contents.path, "the storage_metadata entry is not a JSON object")
    return inner


def distance_type(path: str, text: Any) -> DistanceType:
    try:
        return DistanceType(str(text).lower())
    except ValueError:
        raise IndexFormatError(path, f"names distance type {text!r}, none the page knows") from None


Storage = FlatStorage | PqStorage | SqStorage | RqStorage
SubIndex = FlatSubIndex | HnswSubIndex


@dataclass(frozen=True)
class VectorSegment:
    """One V3 vector index segment as plain data."""

    #: ``lance:index`` ``type``, e.g. ``IVF_PQ`` or ``IVF_HNSW_SQ``.
    index_type: str
    distance_type: DistanceType
    #: The index file's IVF: centroids, and its sub-index's row ranges.
    ivf: Ivf
    #: The auxiliary file's IVF: each partition's rows of ``row_ids``.
    storage_ivf: Ivf
    #: ``_rowid`` of every auxiliary row, in file order.
    row_ids: np.ndarray
    sub_index: SubIndex
    storage: Storage
    #: Auxiliary columns that are none of the quantizer's (carried values).
    carried_columns: tuple[str, ...]

    @property
    def num_partitions(self) -> int:
        return self.ivf.num_partitions

    @property
    def dimension(self) -> int:
        return int(self.ivf.centroids.shape[1])

    def partition_of_rows(self) -> np.ndarray:
        """The partition of each auxiliary row (needs consistent ranges:
        :func:`partition_problems` says whether they are)."""
        return np.repeat(np.arange(self.storage_ivf.num_partitions), self.storage_ivf.lengths.astype(np.int64))

    def partition_rows(self, partition: int) -> np.ndarray:
        """The row ids partition ``partition`` holds, in file order."""
        start = int(self.storage_ivf.offsets[partition])
        return self.row_ids[start : start + int(self.storage_ivf.lengths[partition])]


@dataclass(frozen=True)
class LegacyVectorLayout:
    """A segment in a layout older than the V3 the page records: the
    reference recognizes it and reads nothing of it."""

    reason: str


def partition_problems(ivf: Ivf, rows: int, what: str) -> list[str]:
    """Why ``ivf``'s ranges do not tile ``rows`` rows in partition order
    (the page: partitions are written in order), or nothing."""
    problems = []
    ends = np.cumsum(ivf.lengths.astype(np.uint64), dtype=np.uint64)
    starts = np.concatenate([np.zeros(1, dtype=np.uint64), ends[:-1]]) if len(ends) else ends
    wrong = np.nonzero(ivf.offsets != starts)[0]
    if len(wrong):
        p = int(wrong[0])
        problems.append(
            f"{what} partition {p} starts at row {int(ivf.offsets[p])}, not {int(starts[p])} where partition "
            f"{p - 1 if p else 0} ends ({len(wrong)} partitions so)"
        )
    total = int(ends[-1]) if len(ends) else 0
    if total != rows:
        problems.append(f"{what} partitions hold {total} rows in all, but the file has {rows}")
    return problems


def is_legacy(index: IndexMetadata) -> str | None:
    """Why ``index`` is in a pre-V3 layout, or None (the file list is
    enough: a V3 segment always has an auxiliary file)."""
    if not index.type_url:
        return "the segment records no index_details (a release before index details)"
    names = {f.path for f in index.files}
    if index.files and AUXILIARY_FILE not in names:
        return f"the segment has no {AUXILIARY_FILE} (files {sorted(names)}): a layout before V3"
    return None


def read_vector_segment(dataset: Dataset, index: IndexMetadata) -> VectorSegment | LegacyVectorLayout:
    """Both files of a vector segment as plain data; :class:`IndexFormatError`
    when they do not hold what the page says."""
    legacy = is_legacy(index)
    if legacy:
        return LegacyVectorLayout(legacy)
    location = dataset.index_file_location(index, INDEX_FILE)
    _, major, minor = read_footer_version(location.storage, location.relpath)
    if layout_of(major, minor) == LAYOUT_LEGACY:
        return LegacyVectorLayout(f"{INDEX_FILE} is a legacy (0.{minor}) Lance file: a layout before V3")
    main = read_index_file(dataset, index, INDEX_FILE)
    if "lance:index" not in main.metadata:
        return LegacyVectorLayout(f"{INDEX_FILE} has no lance:index metadata: a layout before V3")
    aux = read_index_file(dataset, index, AUXILIARY_FILE)
    return decode_vector_segment(main, aux)


def decode_vector_segment(main: IndexFileContents, aux: IndexFileContents) -> VectorSegment:
    described = json_metadata(main, "lance:index")
    if not isinstance(described, dict) or "type" not in described or "distance_type" not in described:
        raise IndexFormatError(main.path, "lance:index is not a JSON object with type and distance_type")
    distance = distance_type(main.path, described["distance_type"])
    stored_distance = distance_type(aux.path, aux.text("distance_type"))
    if stored_distance is not distance:
        raise IndexFormatError(aux.path, f"records distance type {stored_distance.value}; {main.path} {distance.value}")
    ivf, storage_ivf = read_ivf(main), read_ivf(aux)
    if ivf.centroids.shape[0] != ivf.num_partitions:
        raise IndexFormatError(
            main.path, f"the IVF has {ivf.num_partitions} partitions but {ivf.centroids.shape[0]} centroids"
        )
    if storage_ivf.num_partitions != ivf.num_partitions:
        raise IndexFormatError(
            aux.path, f"has {storage_ivf.num_partitions} partitions; {main.path} has {ivf.num_partitions}"
        )
    stored_ids = aux.column(ROW_ID_COLUMN)
    if stored_ids.null_count or not pa.types.is_uint64(stored_ids.type):
        raise IndexFormatError(aux.path, f"{ROW_ID_COLUMN} is {stored_ids.type} with {stored_ids.null_count} nulls")
    row_ids = stored_ids.to_numpy().astype(np.uint64, copy=False)
    storage, internal = _read_storage(aux)
    sub_index: SubIndex
    if "lance:hnsw" in main.metadata:
        sub_index = read_hnsw(main, ivf, json_metadata(main, "lance:hnsw"))
    elif "lance:flat" in main.metadata:
        sub_index = FlatSubIndex(main.table.num_rows)
    else:
        raise IndexFormatError(main.path, "has neither lance:flat nor lance:hnsw metadata: no sub-index the page names")
    carried = tuple(name for name in aux.table.column_names if name not in internal and name != ROW_ID_COLUMN)
    return VectorSegment(
        index_type=str(described["type"]),
        distance_type=distance,
        ivf=ivf,
        storage_ivf=storage_ivf,
        row_ids=row_ids,
        sub_index=sub_index,
        storage=storage,
        carried_columns=carried,
    )


def _read_storage(aux: IndexFileContents) -> tuple[Storage, frozenset[str]]:
    """The quantized vectors, by the quantizer's columns present (the page
    lists each quantizer's internal columns; others are carried)."""
    names = set(aux.table.column_names)
    if "__pq_code" in names:
        return read_pq_storage(aux, storage_metadata(aux)), frozenset({"__pq_code"})
    if "__sq_code" in names:
        return read_sq_storage(aux, storage_metadata(aux)), frozenset({"__sq_code"})
    if "_rabit_codes" in names:
        storage = read_rq_storage(aux, storage_metadata(aux))
        return storage, frozenset(storage.columns)
    if "flat" in names:
        return read_flat_storage(aux), frozenset({"flat"})
    raise IndexFormatError(aux.path, f"has none of the quantizers' columns (it has {sorted(names)})")
