"""Manifest mutators: breakages of one requirement made by editing a decoded
manifest and its index section in memory (see
:class:`~conformance.mutations.registry.ManifestMutator`).

:func:`conformance.strategies.manifest_mutations` applies them to generated
manifests; tests/conformance/strategies/test_strategies.py also applies them to the latest manifest
of generated datasets on disk. Each requirement here also has a dataset
mutation in :mod:`conformance.mutations.topics`.
"""

from __future__ import annotations

from reference_impl import feature_flags as ff
from reference_impl.index_metadata import IndexMetadata
from reference_impl.manifest import Manifest
from reference_impl.row_ids import decode_row_id_sequence

from .registry import ManifestNeeds, manifest_mutator

_FRAGMENT = ManifestNeeds(min_fragments=1)
_TWO_FRAGMENTS = ManifestNeeds(min_fragments=2)
_DELETION = ManifestNeeds(min_fragments=1, deletions=True, stable_row_ids=False)
_STABLE_ROW_IDS = ManifestNeeds(min_fragments=1, stable_row_ids=True)
_INDEX = ManifestNeeds(min_indices=1)
_TWO_INDICES = ManifestNeeds(min_indices=2)


# -- fragments ------------------------------------------------------------------------


@manifest_mutator("fragment.id-unique", _TWO_FRAGMENTS)
def reuse_the_first_fragment_id(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[1].id = m.fragments[0].id


@manifest_mutator("fragment.max-id-covers-fragments", _FRAGMENT)
def number_a_fragment_above_the_max_id(m: Manifest, idx: list[IndexMetadata]) -> None:
    assert m.max_fragment_id is not None  # a manifest with fragments records it
    m.fragments[-1].id = m.max_fragment_id + 1


@manifest_mutator("fragment.has-data-file", _FRAGMENT)
def remove_every_data_file(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[0].files = []


@manifest_mutator("fragment.id-fits-u32", _FRAGMENT)
def number_a_fragment_above_u32(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[-1].id = 2**32 + 5


# -- schema ---------------------------------------------------------------------------


@manifest_mutator("schema.field-ids-unique", ManifestNeeds(min_fields=2))
def reuse_the_first_field_id(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.schema.fields[1].id = m.schema.fields[0].id


@manifest_mutator("schema.parent-id-exists")
def point_a_field_at_a_missing_parent(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.schema.fields[-1].parent_id = m.schema.max_field_id() + 7


@manifest_mutator("schema.logical-type-known")
def give_a_field_an_unknown_type(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.schema.fields[0].logical_type = "no_such_type"


# -- data files -----------------------------------------------------------------------


@manifest_mutator("data-file.no-unassigned-field-id", _FRAGMENT)
def store_an_unassigned_field_id(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[0].files[0].fields[0] = -1


@manifest_mutator("data-file.path-relative", _FRAGMENT)
def make_a_data_file_path_absolute(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[0].files[0].path = "/tmp/elsewhere.lance"


# -- feature flags and row ids --------------------------------------------------------


@manifest_mutator("feature-flags.deletion-files", _DELETION)
def clear_the_deletion_files_flag(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.reader_feature_flags &= ~ff.DELETION_FILES
    m.writer_feature_flags &= ~ff.DELETION_FILES


@manifest_mutator("feature-flags.stable-row-ids", _STABLE_ROW_IDS)
def drop_a_row_id_sequence(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.fragments[0].row_id_sequence = None


@manifest_mutator("feature-flags.known-bits")
def set_an_unknown_reader_flag(m: Manifest, idx: list[IndexMetadata]) -> None:
    m.reader_feature_flags |= 1 << 20


@manifest_mutator("row-id.next-row-id-above-all", _STABLE_ROW_IDS)
def lower_next_row_id_onto_a_used_id(m: Manifest, idx: list[IndexMetadata]) -> None:
    sequence = m.fragments[-1].row_id_sequence
    assert isinstance(sequence, bytes)  # drawn manifests keep their row id sequences inline
    m.next_row_id = max(decode_row_id_sequence(sequence))


# -- deletions ------------------------------------------------------------------------


def _first_deletion(m: Manifest):
    return next(f for f in m.fragments if f.deletion_file)


@manifest_mutator("deletion.absent-when-nothing-deleted", _DELETION)
def record_a_deletion_file_deleting_nothing(m: Manifest, idx: list[IndexMetadata]) -> None:
    # The record names a file no writer wrote (a fresh id) and counts no
    # deleted rows, so nothing contradicts "this fragment deletes nothing":
    # kept pointing at the real file, which marks rows, the count would only
    # disagree with it (deletion.count-matches-metadata) on a dataset on disk.
    deletion_file = _first_deletion(m).deletion_file
    deletion_file.id = (deletion_file.id + 1) % (1 << 64)
    deletion_file.num_deleted_rows = 0


@manifest_mutator("deletion.count-within-physical-rows", _DELETION)
def delete_more_rows_than_the_fragment_has(m: Manifest, idx: list[IndexMetadata]) -> None:
    fragment = _first_deletion(m)
    fragment.deletion_file.num_deleted_rows = fragment.physical_rows + 1


@manifest_mutator("deletion.read-version-earlier", _DELETION)
def read_a_deletion_file_at_a_later_version(m: Manifest, idx: list[IndexMetadata]) -> None:
    _first_deletion(m).deletion_file.read_version = m.version + 1


# -- indices --------------------------------------------------------------------------


@manifest_mutator("index.name-unique", _TWO_INDICES)
def reuse_the_first_index_name(m: Manifest, idx: list[IndexMetadata]) -> None:
    idx[1].name = idx[0].name
    idx[1].fields = [idx[0].fields[0] + 1000]  # not a delta segment of the same index


@manifest_mutator("index.uuid-unique", _TWO_INDICES)
def reuse_the_first_index_uuid(m: Manifest, idx: list[IndexMetadata]) -> None:
    idx[1].uuid = idx[0].uuid


@manifest_mutator("index.fields-exist", _INDEX)
def index_a_missing_field(m: Manifest, idx: list[IndexMetadata]) -> None:
    idx[0].fields = [m.schema.max_field_id() + 1]


@manifest_mutator("index.dataset-version-not-later", _INDEX)
def index_a_later_version(m: Manifest, idx: list[IndexMetadata]) -> None:
    idx[0].dataset_version = m.version + 1
