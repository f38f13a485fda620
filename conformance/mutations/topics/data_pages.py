"""Mutations for the rules on data pages (conformance/validator/rules/data_pages.py).

They change the bytes of one data file of the plain base (fragment 3's, which
the latest versions list) the way a faulty writer or a damaged disk would:
page bytes overwritten, a page length or a buffer range in the column
metadata rewritten in place (a varint of the same width, so that nothing
else in the file moves), the footer's version raised past what any reader
implements.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from reference_impl.dataset import Dataset
from reference_impl.file_format.footer import read_v2_metadata
from reference_impl.naming import list_versions
from reference_impl.storage import LocalStorage
from reference_impl.wire import file2_pb2

from ..edit import edit_untracked
from ..registry import mutation

#: The 40-byte v2 footer: column metadata start, offsets table start, global
#: buffer offsets table start, global buffer count, column count, version.
_FOOTER = struct.Struct("<QQQIIHH4s")


def _latest_path(root, fragment_id: int = 3) -> Path:
    """The first data file of fragment ``fragment_id`` in the latest version."""
    (fragment,) = [f for f in Dataset.open(root).fragments if f.id == fragment_id]
    return Path(root) / "data" / fragment.files[0].path


def _column_table(data: bytes) -> list[tuple[int, int]]:
    """The (position, size) of each column's metadata."""
    _, table_start, _, _, num_columns, _, _, _ = _FOOTER.unpack_from(data, len(data) - _FOOTER.size)
    return [struct.unpack_from("<QQ", data, table_start + 16 * index) for index in range(num_columns)]


def _rewrite_column(path: Path, column: int, change) -> None:
    """Apply ``change`` to column ``column``'s metadata and write it back in
    place; the change must keep the message's size."""
    data = bytearray(path.read_bytes())
    position, size = _column_table(bytes(data))[column]
    message = file2_pb2.ColumnMetadata.FromString(bytes(data[position : position + size]))
    change(message)
    encoded = message.SerializeToString()
    if len(encoded) != size:
        raise AssertionError(f"the edited column metadata is {len(encoded)} bytes, not {size}")
    data[position : position + size] = encoded
    path.write_bytes(bytes(data))


@mutation("data-page/decodes")
def overwrite_a_page_with_ff_bytes(root):
    """Every byte of the first page buffer of the file's string column
    becomes 0xFF (the mini block sizes then name chunks the page does not
    hold)."""
    target = _latest_path(root)
    metadata = read_v2_metadata(LocalStorage(target.parent), target.name)
    page = metadata.columns[1].pages[0]
    position, size = page.buffer_offsets[0], page.buffer_sizes[0]
    data = bytearray(target.read_bytes())
    data[position : position + size] = b"\xff" * size
    target.write_bytes(bytes(data))


@mutation("data-page/rows")
def shorten_a_page_by_one_row(root):
    """The first page of the file's first column claims one row fewer than
    it holds: the column adds up to one row less than the file."""

    def change(message):
        message.pages[0].length -= 1

    _rewrite_column(_latest_path(root), 0, change)


@mutation("data-page/buffers")
def stretch_a_page_buffer_into_the_column_metadata(root):
    """The last buffer before the column metadata is declared to run past
    its start (its bytes are still there: only the range is wrong)."""
    target = _latest_path(root)
    metadata = read_v2_metadata(LocalStorage(target.parent), target.name)
    data_end = metadata.footer.column_metadata_start
    last = max(
        (
            (position + size, column, number, slot)
            for column, meta in enumerate(metadata.columns)
            for number, page in enumerate(meta.pages)
            for slot, (position, size) in enumerate(zip(page.buffer_offsets, page.buffer_sizes, strict=True))
        ),
    )
    _, column, number, slot = last

    def change(message):
        page = message.pages[number]
        page.buffer_sizes[slot] = data_end - page.buffer_offsets[slot] + 8

    _rewrite_column(target, column, change)


@mutation("data-page/unchecked", also=("data-file/same-format-version",))
def raise_a_file_to_a_version_no_reader_implements(root):
    """One file says (in its footer and in the manifest) that it is of file
    format 2.99: no reader implements it, so its data goes unchecked."""
    target = _latest_path(root)
    data = bytearray(target.read_bytes())
    data[-6:-4] = (99).to_bytes(2, "little")
    target.write_bytes(bytes(data))

    name = target.name

    def edit(manifest_file):
        for fragment in manifest_file.manifest.fragments:
            for data_file in fragment.files:
                if data_file.path == name:
                    data_file.file_minor_version = 99

    # Every version that lists the file records what it now is; a tag keeps
    # the size of the manifest it points at.
    manifests = list_versions(LocalStorage(root)).manifests()
    for version in sorted(manifests):
        edit_untracked(root, edit, version)
    for tag in (root / "_refs" / "tags").glob("*.json"):
        document = json.loads(tag.read_text())
        if "manifestSize" in document and document.get("version") in manifests:
            document["manifestSize"] = (root / manifests[document["version"]]).stat().st_size
            tag.write_text(json.dumps(document))
