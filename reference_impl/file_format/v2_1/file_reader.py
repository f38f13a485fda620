"""Reading the columns of a 2.1+ data file (file format: v2 layout with the
structural encodings of encoding.md).

:class:`StructuralFileReader` decodes the pages of the requested fields'
leaf columns (:mod:`.page_layout`) and assembles them into Arrow
(:mod:`.columns`). :class:`~reference_impl.file_format.LanceFileReader`
routes files whose version is 2.1 or later here; it owns the footer, the
column metadata and the page buffers, this module only their meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from ...errors import CorruptFileError
from ...schema import TOP_LEVEL_PARENT, Field
from ...wire import encodings_v2_1_pb2 as enc
from ...wire import encodings_v2_3_pb2 as enc23
from ...wire import file2_pb2
from ..read_plan import ReadPlan
from .columns import FieldAssembler, LeafColumn, is_packed, is_structural_fsl, join_pages
from .page import PageContext
from .page_layout import PAGE_LAYOUT_TYPE, decode_page

PageBuffers = Callable[[file2_pb2.ColumnMetadata.Page], Sequence[pa.Buffer]]
Unpack = Callable[[file2_pb2.Encoding, str], enc.PageLayout | enc23.PlanarLayout]


class StructuralFileReader:
    """The 2.1+ half of a :class:`~reference_impl.file_format.LanceFileReader`."""

    def __init__(
        self,
        path: str,
        columns: Sequence[file2_pb2.ColumnMetadata],
        file_size: int,
        page_buffers: PageBuffers,
        unpack_layout: Unpack,
        read_range: Callable[[int, int], bytes],
    ):
        self.path = path
        self.columns = columns
        self.file_size = file_size
        self._page_buffers = page_buffers
        self._unpack = unpack_layout
        self._read = read_range

    def leaf_column(self, column_index: int) -> LeafColumn:
        if not 0 <= column_index < len(self.columns):
            raise CorruptFileError(
                self.path, f"column index {column_index} is out of range (the file has {len(self.columns)} columns)"
            )
        pages = []
        for number, page in enumerate(self.columns[column_index].pages):
            where = f"column {column_index} page {number}"
            layout = self._unpack(page.encoding, where)
            buffers = [memoryview(buffer) for buffer in self._page_buffers(page)]
            context = PageContext(self.path, where, page.length, buffers, self.file_size, self._read)
            decoded = decode_page(layout, context)
            pages.append(decoded)
        return join_pages(self.path, column_index, pages)

    def read_fields(self, plan: ReadPlan, arrow_schema: pa.Schema, num_rows: int) -> list[pa.Array]:
        assembler = FieldAssembler(self.path, plan, self.leaf_column)
        return [
            assembler.build(node, arrow_field.type, 0, num_rows)
            for node, arrow_field in zip(plan.top_level, arrow_schema, strict=True)
        ]


def leaf_fields(fields: Sequence[Field], arrow_schema: pa.Schema) -> list[Field]:
    """The fields of a file's own schema that own a column, in column order:
    the leaves, depth first, a packed struct counting as one leaf."""
    children: dict[int, list[Field]] = {}
    for field in fields:
        children.setdefault(field.parent_id, []).append(field)
    leaves: list[Field] = []

    def walk(node: Field, target: pa.DataType) -> None:
        if isinstance(target, pa.BaseExtensionType):
            target = target.storage_type
        kids = children.get(node.id, [])
        if pa.types.is_struct(target) and not is_packed(node, target):
            by_name = {kid.name: kid for kid in kids}
            for index in range(target.num_fields):
                kid = by_name.get(target.field(index).name)
                if kid is not None:
                    walk(kid, target.field(index).type)
            return
        nested = pa.types.is_list(target) or pa.types.is_large_list(target) or pa.types.is_map(target)
        if (nested or is_structural_fsl(target)) and kids:
            item = pa.struct([target.key_field, target.item_field]) if pa.types.is_map(target) else target.value_type
            walk(kids[0], item)
            return
        leaves.append(node)

    top = [f for f in fields if f.parent_id == TOP_LEVEL_PARENT]
    for node, arrow_field in zip(top, arrow_schema, strict=True):
        walk(node, arrow_field.type)
    return leaves


__all__ = ["PAGE_LAYOUT_TYPE", "StructuralFileReader", "leaf_fields"]
