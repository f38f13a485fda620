"""Mutations for the vector index rules (conformance/validator/rules/index_vector.py).

Every mutation starts from the "vectors" base (``bases.build_vectors``: an
IVF_PQ index ``vec_idx`` and an IVF_HNSW_SQ index ``emb_idx``, each with a
delta segment) and overwrites bytes of one index file with as many other
bytes: the file keeps its size, so only a rule reading the contents can
tell. Values are found in the files by their bytes (pylance 14 stores these
columns and buffers uncompressed); a pattern found other than once is an
error of the mutation, not a silent no-op.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from conformance.validator.facts.index_contents import SAMPLE_ROWS
from reference_impl.dataset import Dataset
from reference_impl.indices.files import IndexFileContents, read_index_file
from reference_impl.wire import index_pb2

from ..bases import vector_rows
from ..edit import edit_manifest, overwrite_once
from ..registry import mutation

BASE = "vectors"


def _segment_file(root: Path, index_name: str, name: str) -> tuple[Path, IndexFileContents]:
    """The file ``name`` of the first segment of ``index_name`` (latest version)."""
    dataset = Dataset.open(str(root))
    index = next(index for index in dataset.indices if index.name == index_name)
    return Path(root) / "_indices" / index.uuid / name, read_index_file(dataset, index, name)


def _row_ids(contents: IndexFileContents) -> np.ndarray:
    return contents.column("_rowid").to_numpy().astype("<u8")


def _storage_ivf(contents: IndexFileContents) -> index_pb2.IVF:
    return index_pb2.IVF.FromString(contents.global_buffers[int(contents.metadata["lance:ivf"])])


@mutation("index-vector/files-readable", base=BASE)
def name_an_unknown_distance_type(root):
    path, _ = _segment_file(root, "vec_idx", "index.idx")
    overwrite_once(path, b'"distance_type":"l2"', b'"distance_type":"l9"')


@mutation("index-vector/partition-ranges", base=BASE)
def lengthen_a_partition(root):
    path, contents = _segment_file(root, "vec_idx", "auxiliary.idx")
    ivf = _storage_ivf(contents)
    changed = index_pb2.IVF()
    changed.CopyFrom(ivf)
    changed.lengths[0] += 1  # one more row than the file holds
    overwrite_once(path, ivf.SerializeToString(), changed.SerializeToString())


@mutation("index-vector/dimensions", base=BASE)
def record_another_sq_dimension(root):
    path, _ = _segment_file(root, "emb_idx", "auxiliary.idx")
    overwrite_once(path, b'\\"dim\\":8', b'\\"dim\\":9')


@mutation("index-vector/rows-once", base=BASE, also=("index-vector/nearest-partition", "index-vector/codes-nearest"))
def move_a_row_id_onto_another(root):
    path, contents = _segment_file(root, "vec_idx", "auxiliary.idx")
    ids = _row_ids(contents)
    overwrite_once(path, ids[:3].tobytes(), np.array([ids[1], ids[1], ids[2]], dtype="<u8").tobytes())


@mutation("index-vector/nearest-partition", base=BASE, also=("index-vector/codes-nearest",))
def swap_rows_between_partitions(root):
    path, contents = _segment_file(root, "vec_idx", "auxiliary.idx")
    ids, ivf = _row_ids(contents), _storage_ivf(contents)
    first, second = 0, int(ivf.offsets[1])  # the first rows of partitions 0 and 1
    swapped = ids.copy()
    swapped[[first, second]] = swapped[[second, first]]
    overwrite_once(path, ids.tobytes(), swapped.tobytes())


@mutation("index-vector/codes-nearest", base=BASE)
def change_a_pq_code(root):
    path, contents = _segment_file(root, "vec_idx", "auxiliary.idx")
    codes = np.asarray(contents.column("__pq_code").combine_chunks().flatten().to_numpy(), dtype=np.uint8)
    changed = codes.copy()
    changed[0] = (int(codes[0]) + 128) % 256  # the codeword half the codebook away
    overwrite_once(path, codes.tobytes(), changed.tobytes())


@mutation("index-vector/hnsw-graph", base=BASE)
def move_an_entry_point_off_the_top_level(root):
    # The graph's columns are compressed by pylance 14; lance:hnsw is text.
    # Partitions may share an entry point number: the first one is changed.
    path, contents = _segment_file(root, "emb_idx", "index.idx")
    point = json.loads(json.loads(contents.text("lance:hnsw"))[0])["entry_point"]
    other = (point + 1) % 10 + point - point % 10  # another node number of as many digits
    old = f'\\"entry_point\\":{point},'.encode()
    data = path.read_bytes()
    if old not in data:
        raise AssertionError(f"{path}: the first partition's entry point is not stored as {old!r}")
    path.write_bytes(data.replace(old, old.replace(str(point).encode(), str(other).encode()), 1))


@mutation("index-vector/skipped", base=BASE, breaks="index.vector-files")
def record_a_newer_index_version(root):
    """Every version listing ``vec_idx`` records an index_version newer than
    the reference reads (transaction records dropped, as the index
    mutations do, so that only the index rules look at the change)."""

    def edit(manifest_file):
        for index in manifest_file.indices or []:
            if index.name == "vec_idx":
                index.index_version = 99
        manifest_file.manifest.transaction_file = ""
        manifest_file.transaction = None

    for version in sorted(Dataset.open(str(root)).versions()):
        edit_manifest(root, edit, version=version)


@mutation("index-vector/sampled", base=BASE, breaks="index.vector-rows-once")
def grow_an_index_past_the_default_sample(root):
    """Not a defect: the reference appends a fragment of more rows than a
    default run reads per segment (and a small one after it) and indexes
    the whole table with its IVF_FLAT writer, so a default run leaves the
    last fragment unchecked and says so."""
    big = SAMPLE_ROWS + 16
    dataset = Dataset.open(str(root))
    dataset = dataset.append(vector_rows(1000, big + 10), max_rows_per_file=big)
    dataset.create_index("vec", index_type="IVF_FLAT", name="vec_flat_idx", num_partitions=4)
