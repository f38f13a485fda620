"""The validator decodes each fragment once per run (``DatasetView._fragment``):
a fragment listed again unchanged is the same object, and one listed again
under another id (a transaction records its new fragments with the
placeholder id 0) shares the decoded parts of the first listing."""

from __future__ import annotations

from dataclasses import fields, replace

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from conformance import strategies
from conformance.validator.context import _with_id, _without_id
from conformance.validator.engine import open_dataset_view
from conformance.validator.facts.changes import compare_new_fragments, fragment_shape
from reference_impl.fragments import Fragment
from reference_impl.transactions import Overwrite


@given(strategies.fragments(), st.integers(0, 2**64 - 1))
def test_the_bytes_without_the_id_are_those_of_the_fragment_with_id_0(fragment, fragment_id):
    """Property: for any fragment and any id, ``_without_id`` of its message
    is the message bytes of the same fragment with id 0, and leaves the
    message it is given as it was."""
    listed = replace(fragment, id=fragment_id).to_proto()
    assert _without_id(listed) == replace(fragment, id=0).to_proto().SerializeToString(deterministic=True)
    assert listed.id == fragment_id


def test_with_id_carries_every_other_field():
    """Every field of a Fragment is carried (a field added later and left out
    of ``_with_id`` would take its default here and fail)."""
    values = {field.name: object() for field in fields(Fragment)}
    original = Fragment(**values)
    changed = _with_id(original, 7)
    assert changed.id == 7
    assert all(getattr(changed, name) is value for name, value in values.items() if name != "id")


def test_an_overwrite_shares_the_decoded_fragments_of_its_manifest(tmp_path):
    """pylance's Overwrite lists every fragment of the version again with id
    0: each equals the manifest's with id 0 and shares its data files; it is
    the manifest's object only where that one has id 0 too (the same message)."""
    import lance

    root = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": list(range(6))}), root, max_rows_per_file=2)
    view = open_dataset_view(str(root), None, None).version_view(1)
    assert view is not None
    operation = view.manifest_file.transaction.operation
    assert isinstance(operation, Overwrite)
    listed, recorded = view.manifest.fragments, operation.fragments
    assert len(listed) == len(recorded) == 3
    for in_manifest, in_transaction in zip(listed, recorded, strict=True):
        assert (in_transaction is in_manifest) == (in_manifest.id == 0)
        assert in_transaction == replace(in_manifest, id=0)
        assert in_transaction.files is in_manifest.files


@given(strategies.fragments(), strategies.fragments(), st.booleans())
def test_new_fragments_compare_as_their_shapes(first, second, relisted):
    """Property: the transaction rules' comparison of recorded and added
    fragments (``compare_new_fragments``) finds no problem exactly when the
    two lists hold the same shapes, also when the recorded fragment is the
    added one listed again (its data files then one list)."""
    recorded = _with_id(first, 0) if relisted else second
    shapes_equal = fragment_shape(recorded) == fragment_shape(first)
    assert (compare_new_fragments([recorded], [first], "writes") is None) == shapes_equal
    assert (compare_new_fragments([recorded, first], [first, recorded], "writes") is None) is True
