"""Which columns of a data file hold the requested fields (table format:
data files' ``fields`` and ``column_indices``).

A data file lists the field ids it stores and, per field, the index of its
column; :class:`ReadPlan` arranges the requested fields as a tree and answers
which column a field owns. Both the 2.0 reader and the 2.1+ reader
(:mod:`.v2_1`) read through it.
"""

from __future__ import annotations

from ..schema import TOP_LEVEL_PARENT, Field


class ReadPlan:
    """Requested fields as a tree, and the column of each field id."""

    def __init__(self, path: str, fields: list[Field], file_field_ids: list[int], column_indices: list[int]):
        self.path = path
        self.top_level = [f for f in fields if f.parent_id == TOP_LEVEL_PARENT]
        self.children: dict[int, list[Field]] = {}
        for f in fields:
            self.children.setdefault(f.parent_id, []).append(f)
        self.columns = {
            field_id: column
            for field_id, column in zip(file_field_ids, column_indices, strict=True)
            if column is not None and column >= 0
        }

    def column_of(self, node: Field) -> int | None:
        return self.columns.get(node.id)

    def child_named(self, node: Field, name: str, only_child: bool = False) -> Field:
        children = self.children.get(node.id, [])
        if only_child and len(children) == 1:
            return children[0]
        for child in children:
            if child.name == name:
                return child
        raise ValueError(f"field {node.name!r} has no child field {name!r} among the requested fields")
