"""2.3 planar pages decoded from hand-built layouts and buffers
(:mod:`reference_impl.file_format.v2_1.planar` and ``.sparse``: the layouts
their docstrings state). pylance's own 2.3 files are read in
``tests/reference_impl/file_format/test_v2_3_pylance.py``; here the
structures are built by the test, so each test checks one rule: the Arrow
structure a sparse page states, the error a page this reader cannot decode
ends in (UnsupportedFeatureError naming what it lacks), and the corruptions
a hostile page carries (CorruptFileError)."""

from __future__ import annotations

import numpy as np
import pytest

from reference_impl.errors import CorruptFileError, UnsupportedFeatureError
from reference_impl.file_format.v2_1 import planar
from reference_impl.file_format.v2_1.page import PageContext
from reference_impl.file_format.v2_1.values import FixedWidthValues
from reference_impl.wire import encodings_v2_1_pb2 as enc
from reference_impl.wire import encodings_v2_3_pb2 as enc23

NULL = enc23.SparseValiditySet.SPARSE_VALIDITY_NULL_POSITIONS
VALID = enc23.SparseValiditySet.SPARSE_VALIDITY_VALID_POSITIONS


def page(num_rows: int, *buffers: bytes) -> PageContext:
    def refuse(position: int, size: int) -> bytes:
        raise AssertionError("planar pages read nothing outside their buffers")

    return PageContext("test.lance", "column 0 page 0", num_rows, [memoryview(b) for b in buffers], 1 << 20, refuse)


def u64(*values: int) -> bytes:
    return np.array(values, dtype="<u8").tobytes()


def flat64() -> enc.CompressiveEncoding:
    return enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=64))


def listed(meaning: int, positions: list[int]) -> enc23.SparseValiditySet:
    """A validity set whose positions are a flat buffer (the caller adds it)."""
    return enc23.SparseValiditySet(meaning=meaning, positions=flat64(), num_positions=len(positions))


def constant_values(value: bytes) -> enc23.ValuePlane:
    return enc23.ValuePlane(constant=enc23.ConstantValue(value=value))


def sparse(*layers: enc23.SparseStructuralLayer) -> enc23.StructuralPlane:
    return enc23.StructuralPlane(sparse=enc23.SparseStructure(layers=list(layers)))


def list_layer(children: int, starts: list[int], counts: list[int], nulls: list[int]) -> enc23.SparseStructuralLayer:
    validity = listed(NULL, nulls) if nulls else enc23.SparseValiditySet()
    return enc23.SparseStructuralLayer(
        list=enc23.SparseListLayer(
            num_child_slots=children,
            non_empty_positions=flat64(),
            num_non_empty=len(starts),
            counts=flat64(),
            validity=validity,
        )
    )


def test_a_sparse_list_page_states_offsets_and_validity_layer_by_layer():
    # Rows [[7], [], None, [7, 7]]: one list layer, items without nulls,
    # every value the constant 7 (a 32-bit integer).
    layout = enc23.PlanarLayout(
        structure=sparse(list_layer(3, [0, 3], [1, 2], [2])),
        values=constant_values((7).to_bytes(4, "little")),
    )
    decoded = planar.decode(layout, page(4, u64(0, 3), u64(1, 2), u64(2)))
    assert decoded.structure is not None
    lists, items = decoded.structure
    assert lists.is_list and lists.num_slots == 4
    assert lists.offsets is not None and lists.offsets.tolist() == [0, 1, 1, 1, 3]
    assert lists.validity is not None and lists.validity.tolist() == [True, True, False, True]
    assert not items.is_list and items.num_slots == 3 and items.validity is None
    assert isinstance(decoded.values, FixedWidthValues) and decoded.values.num_values == 3
    assert decoded.values.data.view("<i4").tolist() == [7, 7, 7]


def test_a_fixed_size_list_layer_counts_elements_and_repeats_its_validity():
    # Two rows of a fixed-size list of 3 (the page counts 6 elements), the
    # second null; no values at all, so every leaf slot must be null too.
    layers = [
        enc23.SparseStructuralLayer(
            fixed_size_list=enc23.SparseFixedSizeListLayer(dimension=3, validity=listed(VALID, [0]))
        ),
        enc23.SparseStructuralLayer(validity=listed(VALID, [])),
    ]
    layout = enc23.PlanarLayout(structure=sparse(*layers), values=enc23.ValuePlane(none=enc23.NoValues()))
    decoded = planar.decode(layout, page(6, u64(0), b""))
    assert decoded.structure is not None
    elements, leaves = decoded.structure
    assert elements.num_slots == 6 and elements.validity is not None
    assert elements.validity.tolist() == [True] * 3 + [False] * 3
    assert leaves.validity is not None and not leaves.validity.any()
    assert decoded.values is None


@pytest.mark.parametrize(
    "layout, problem",
    [
        (
            enc23.PlanarLayout.FromString(bytes([0x0A, 0x02, 0x48, 0x01, 0x12, 0x02, 0x22, 0x00])),
            "structural plane field 9",
        ),
        (
            enc23.PlanarLayout(structure=sparse()).SerializeToString() + bytes([0x12, 0x02, 0x48, 0x01]),
            "value plane field 9",
        ),
        (
            enc23.PlanarLayout(
                structure=enc23.StructuralPlane(
                    sparse=enc23.SparseStructure.FromString(bytes([0x0A, 0x02, 0x48, 0x01]))
                ),
                values=enc23.ValuePlane(none=enc23.NoValues()),
            ),
            "sparse layer",
        ),
    ],
)
def test_kinds_newer_than_this_reader_are_unsupported_naming_them(layout, problem):
    if isinstance(layout, bytes):
        layout = enc23.PlanarLayout.FromString(layout)
    with pytest.raises(UnsupportedFeatureError, match=problem):
        planar.decode(layout, page(1))


@pytest.mark.parametrize(
    "layers, buffers, rows, problem",
    [
        # A null position past the page's rows.
        ([enc23.SparseStructuralLayer(validity=listed(NULL, [5]))], [u64(5)], 3, "not increasing slots"),
        # Positions that go down.
        ([enc23.SparseStructuralLayer(validity=listed(NULL, [2, 1]))], [u64(2, 1)], 3, "not increasing slots"),
        # Counts that do not add up to the child slots.
        ([list_layer(5, [0], [2], [])], [u64(0), u64(2)], 2, "where the layer says 5"),
        # A null list with children.
        ([list_layer(2, [1], [2], [1])], [u64(1), u64(2), u64(1)], 2, "a null list has children"),
        # A buffer the structure never reads.
        ([enc23.SparseStructuralLayer(validity=listed(NULL, [0]))], [u64(0), b"extra"], 2, "left over"),
        # Fewer stored positions than the set claims.
        ([enc23.SparseStructuralLayer(validity=listed(NULL, [0, 1, 2]))], [u64(0)], 4, "need 24 bytes"),
    ],
)
def test_hostile_sparse_structures_are_corrupt(layers, buffers, rows, problem):
    layout = enc23.PlanarLayout(structure=sparse(*layers), values=constant_values(b"\x01"))
    with pytest.raises(CorruptFileError, match=problem):
        planar.decode(layout, page(rows, *buffers))


def test_a_page_without_a_plane_is_corrupt():
    with pytest.raises(CorruptFileError, match="without a structural plane or a value plane"):
        planar.decode(enc23.PlanarLayout(values=constant_values(b"\x01")), page(1))
