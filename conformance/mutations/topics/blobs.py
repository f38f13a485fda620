"""Mutations for the blob v2 rules (conformance/validator/rules/blobs.py).

They start from the "blobs" base (:func:`conformance.mutations.bases.build_blobs`):
a 2.2 dataset whose blob column holds inline, packed, dedicated and external
values. Sidecars are deleted or resized on disk; descriptors are edited in
place in their data file, where pylance 14 stores each one as a row of its
variable packed struct: ``kind`` (1 byte), ``position`` and ``size`` (8
bytes each), ``blob_id`` (4 bytes), then ``blob_uri`` as a 4-byte length and
its bytes, all little endian, uncompressed. An edit keeps every length, so
the rest of the file stays valid; it finds the row it rewrites by those
bytes and refuses to edit unless they occur exactly once.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from reference_impl.blob_descriptors import SIDECAR_SUFFIX, BlobKind, Descriptor, is_blob_v2
from reference_impl.blobs import read_descriptors
from reference_impl.dataset import Dataset

from ..bases import EXTERNAL_OBJECT
from ..registry import mutation

BASE = "blobs"


def _row_bytes(descriptor: Descriptor) -> bytes:
    uri = descriptor.blob_uri.encode()
    fixed = struct.pack("<BQQI", descriptor.kind, descriptor.position, descriptor.size, descriptor.blob_id)
    return fixed + struct.pack("<I", len(uri)) + uri


def rewrite_descriptor(root: Path, pick: Callable[[Descriptor], bool], change: Callable[[Descriptor], Descriptor]):
    """Rewrite in place the first descriptor of the latest version that
    ``pick`` accepts into ``change(descriptor)`` (of the same byte length)."""
    dataset = Dataset.open(root)
    field = next(f for f in dataset.schema.top_level() if is_blob_v2(f))
    for fragment in dataset.fragments:
        data_file = fragment.files[-1]
        for descriptor in read_descriptors(dataset, data_file, field):
            if descriptor is None or not pick(descriptor):
                continue
            old, new = _row_bytes(descriptor), _row_bytes(change(descriptor))
            if len(old) != len(new):
                raise ValueError("a descriptor edit must keep its length")
            path = root / "data" / data_file.path
            content = path.read_bytes()
            if content.count(old) != 1:
                raise ValueError(f"the descriptor's bytes occur {content.count(old)} times in {path}, not once")
            path.write_bytes(content.replace(old, new))
            return
    raise ValueError("no descriptor of the base matches")


def _sidecars(root: Path) -> list[Path]:
    return sorted((root / "data").rglob(f"*{SIDECAR_SUFFIX}"))


def _sidecar_of(root: Path, kind: BlobKind) -> Path:
    """The sidecar holding the base's values of ``kind`` (packed: 700 bytes,
    dedicated: 3000)."""
    wanted = 700 if kind is BlobKind.PACKED else 3000
    return next(path for path in _sidecars(root) if path.stat().st_size == wanted)


@mutation("blob/sidecar-exists", breaks="blob.sidecar-exists", base=BASE)
def delete_every_blob_sidecar(root):
    for path in _sidecars(root):
        path.unlink()


@mutation("blob/range-inside-object", breaks="blob.range-inside-object", base=BASE)
def cut_the_last_byte_of_the_packed_sidecar(root):
    path = _sidecar_of(root, BlobKind.PACKED)
    path.write_bytes(path.read_bytes()[:-1])


@mutation("blob/range-inside-object", breaks="blob.range-inside-object", base=BASE)
def grow_the_dedicated_sidecar_past_its_value(root):
    path = _sidecar_of(root, BlobKind.DEDICATED)
    path.write_bytes(path.read_bytes() + b"extra")


@mutation("blob/range-inside-object", breaks="blob.range-inside-object", base=BASE)
def point_an_inline_value_past_the_data_file(root):
    rewrite_descriptor(
        root,
        lambda d: d.kind == BlobKind.INLINE and d.size > 0,
        lambda d: replace(d, position=2**40),
    )


@mutation("blob/descriptor-well-formed", breaks="blob.descriptor-kind-known", base=BASE)
def give_a_packed_descriptor_an_unknown_kind(root):
    rewrite_descriptor(root, lambda d: d.kind == BlobKind.PACKED, lambda d: replace(d, kind=9))


@mutation("blob/descriptor-well-formed", breaks="blob.descriptor-fields-per-kind", base=BASE)
def give_an_inline_descriptor_a_sidecar_id(root):
    rewrite_descriptor(
        root,
        lambda d: d.kind == BlobKind.INLINE and d.size > 0,
        lambda d: replace(d, blob_id=3),
    )


@mutation("blob/descriptor-well-formed", breaks="blob.descriptor-fields-per-kind", base=BASE)
def move_a_dedicated_value_off_position_zero(root):
    rewrite_descriptor(root, lambda d: d.kind == BlobKind.DEDICATED, lambda d: replace(d, position=8))


@mutation("blob/base-declared", breaks="blob.base-declared", base=BASE)
def point_an_external_blob_at_an_undeclared_base(root):
    rewrite_descriptor(
        root,
        lambda d: d.kind == BlobKind.EXTERNAL and d.blob_id > 0,
        lambda d: replace(d, blob_id=d.blob_id + 6),
    )


@mutation("blob/external-available", breaks="blob.external-object-available", base=BASE)
def name_an_external_object_that_is_not_there(root):
    missing = EXTERNAL_OBJECT.replace("object", "absent")
    rewrite_descriptor(
        root,
        lambda d: d.kind == BlobKind.EXTERNAL and d.blob_uri == EXTERNAL_OBJECT and d.size > 0,
        lambda d: replace(d, blob_uri=missing),
    )


@mutation("blob/external-outside", breaks="blob.external-outside-bases", base=BASE)
def point_an_external_blob_elsewhere_outside(root):
    rewrite_descriptor(
        root,
        lambda d: d.kind == BlobKind.EXTERNAL and d.blob_id == 0,
        lambda d: replace(d, blob_uri=d.blob_uri.replace("object.bin", "another.bn")),
    )


@mutation("blob/nested-unchecked", breaks="blob.nested-fields", base=BASE)
def add_a_struct_column_holding_a_blob(root):
    import lance  # lazy: pylance is optional (the test extra); only this mutation needs it
    from lance.blob import blob_field  # lazy: part of pylance, as above

    lance.dataset(root).add_columns(pa.field("nest", pa.struct([blob_field("inner")])))
