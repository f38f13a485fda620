"""``VariablePackedStruct``: a struct whose children may be variable width,
stored row by row (2.2; encoding.md, "Struct Packing";
``VariablePackedStruct`` in ``protos/encodings_v2_1.proto``).

pylance writes it in full zip pages only: each value of the page is one
packed row, the children in struct order, a fixed-width child as its
``bits_per_value / 8`` bytes, a variable-width child as a little-endian
length of ``bits_per_length`` bits followed by its bytes. The rows are
returned whole (:class:`..values.PackedRowValues`); splitting them into the
children is Arrow assembly (:mod:`..columns`). Children compressed by
anything but ``Flat`` / ``Variable`` are refused.
"""

from __future__ import annotations

from ....wire import encodings_v2_1_pb2 as enc
from ..values import PackedRowValues, VariableWidthValues
from .base import BufferCursor, ValueContext, ValueDecoder

_PLAIN = {"fixed": "flat", "variable": "variable"}


def decode(
    node: enc.VariablePackedStruct, buffers: BufferCursor, num_values: int, decoder: ValueDecoder
) -> PackedRowValues:
    if decoder.context is not ValueContext.FULL_ZIP:
        raise decoder.unsupported(
            f"compressive encoding 'variable_packed_struct' is not supported in the {decoder.context.value} context"
        )
    children = []
    for index, field in enumerate(node.fields):
        layout = field.WhichOneof("layout")
        kind = "fixed" if layout == "bits_per_value" else "variable" if layout == "bits_per_length" else None
        if kind is None:
            raise decoder.corrupt(f"packed struct child {index} has neither a width nor a length width")
        bits = field.bits_per_value if kind == "fixed" else field.bits_per_length
        if bits == 0 or bits % 8 or (kind == "variable" and bits not in (8, 16, 32, 64)):
            raise decoder.corrupt(f"packed struct child {index} of {bits} bits")
        scheme = field.value.WhichOneof("compression")
        if scheme != _PLAIN[kind]:
            raise decoder.unsupported(f"packed struct child {index} compressed as {scheme!r} is not supported")
        children.append((kind, bits))
    if not children:
        raise decoder.corrupt("a packed struct without children")
    # The rows are the page's unzipped values: plain variable-width values.
    plain_rows = enc.Variable(offsets=enc.CompressiveEncoding(flat=enc.Flat(bits_per_value=64)))
    rows = decoder.schemes["variable"](plain_rows, buffers, num_values, decoder)
    assert isinstance(rows, VariableWidthValues)
    return PackedRowValues(rows, tuple(children))
