"""Compressive encodings of 2.1+ pages (encoding.md, "Compression";
``CompressiveEncoding`` in ``protos/encodings_v2_1.proto``).

:func:`decode_values` is the one entry the structural layouts call: it turns
the buffers of one chunk, page buffer or unzipped full zip page back into
:class:`..values.FixedWidthValues` or :class:`..values.VariableWidthValues`.
Each scheme is a module of its own with a ``decode`` function
(:mod:`.base` says what it receives); :data:`SCHEMES` maps the proto's
field names to them. An encoding without a module raises
:class:`~reference_impl.errors.UnsupportedFeatureError` naming it; those
are ``dictionary`` (pylance applies dictionaries in the mini block layout,
never as a compressive encoding, and neither prose nor code says how its
buffers would be laid out), ``variable_packed_struct`` (its values are a
struct of children, which :mod:`..values` cannot hold yet), and ``range`` and
``delta`` (added upstream after format 2.2).
"""

from __future__ import annotations

from collections.abc import Sequence

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues
from . import (
    byte_stream_split,
    constant,
    fixed_size_list,
    flat,
    fsst,
    general,
    inline_bitpacking,
    out_of_line_bitpacking,
    packed_struct,
    rle,
    variable,
    variable_packed_struct,
)
from .base import BufferCursor, DecompressionBudget, SchemeDecoder, ValueContext, ValueDecoder

#: The decoder of each ``CompressiveEncoding`` field this reader implements.
SCHEMES: dict[str, SchemeDecoder] = {
    "flat": flat.decode,
    "variable": variable.decode,
    "fixed_size_list": fixed_size_list.decode,
    "packed_struct": packed_struct.decode,
    "inline_bitpacking": inline_bitpacking.decode,
    "rle": rle.decode,
    "out_of_line_bitpacking": out_of_line_bitpacking.decode,
    "fsst": fsst.decode,
    "general": general.decode,
    "byte_stream_split": byte_stream_split.decode,
    "constant": constant.decode,
    "variable_packed_struct": variable_packed_struct.decode,
}


def decode_values(
    encoding: enc.CompressiveEncoding,
    buffers: Sequence[memoryview],
    num_values: int,
    *,
    where: str,
    context: ValueContext = ValueContext.MINI_BLOCK,
    budget: DecompressionBudget | None = None,
) -> DecodedValues:
    """``num_values`` values stored in ``buffers`` as ``encoding`` says.

    ``where`` names the file, column and page for error messages;
    ``context`` says where the buffers come from; ``budget`` (one per page,
    shared by its chunks) bounds what general compression may produce.
    """
    decoder = ValueDecoder(where, context, SCHEMES, budget=budget or DecompressionBudget())
    return decoder.decode(encoding, BufferCursor(buffers, decoder), num_values)


__all__ = ["SCHEMES", "DecompressionBudget", "ValueContext", "decode_values"]
