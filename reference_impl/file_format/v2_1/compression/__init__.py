"""Compressive encodings of 2.1+ pages (encoding.md, "Compression";
``CompressiveEncoding`` in ``protos/encodings_v2_1.proto``).

:func:`decode_values` is the entry the structural layouts call for one
buffer set: it turns the buffers of one chunk, page buffer or unzipped full
zip page back into :class:`..values.FixedWidthValues` or
:class:`..values.VariableWidthValues`.
Each scheme is a module of its own with a ``decode`` function
(:mod:`.base` says what it receives); :data:`SCHEMES` maps the proto's
field names to them. An encoding or context without a decoder raises
:class:`~reference_impl.errors.UnsupportedFeatureError` naming it. Written
by pylance 14 in 2.3 files only: ``range`` and ``delta`` (added upstream
after format 2.2, :mod:`.sequence`), ``dictionary`` in the block context
(:mod:`.dictionary`; 2.1 and 2.2 apply dictionaries in the mini block
layout instead), compressed children of ``rle`` (:mod:`.rle_children`) and
compressed offsets of ``variable`` (:mod:`.encoded_offsets`).

:func:`decode_chunk_values`, the other entry (called by the mini block
layout), decodes every chunk of a mini block page: in one
pass per scheme when each scheme of the encoding has a ``decode_chunks``
(:data:`CHUNK_SCHEMES`, :mod:`.chunks`), else one chunk at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ....wire import encodings_v2_1_pb2 as enc
from ..values import DecodedValues, concat_values
from . import (
    byte_stream_split,
    constant,
    dictionary,
    fixed_size_list,
    flat,
    fsst,
    general,
    inline_bitpacking,
    out_of_line_bitpacking,
    packed_struct,
    rle,
    sequence,
    variable,
    variable_packed_struct,
)
from .base import BufferCursor, ChunkSchemeDecoder, DecompressionBudget, SchemeDecoder, ValueContext, ValueDecoder
from .chunks import ChunkBuffers, ChunkByChunk, ChunkCursor

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
    "dictionary": dictionary.decode,
    "range": sequence.decode_range,
    "delta": sequence.decode_delta,
}

#: The schemes that decode every chunk of a mini block page at once (general
#: compression calls its codec per chunk, then decodes its inner encoding for
#: every chunk at once). The others (constant, variable packed structs) go
#: one chunk at a time.
CHUNK_SCHEMES: dict[str, ChunkSchemeDecoder] = {
    "flat": flat.decode_chunks,
    "variable": variable.decode_chunks,
    "fixed_size_list": fixed_size_list.decode_chunks,
    "packed_struct": packed_struct.decode_chunks,
    "inline_bitpacking": inline_bitpacking.decode_chunks,
    "out_of_line_bitpacking": out_of_line_bitpacking.decode_chunks,
    "rle": rle.decode_chunks,
    "fsst": fsst.decode_chunks,
    "general": general.decode_chunks,
    "byte_stream_split": byte_stream_split.decode_chunks,
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


def decode_chunk_values(
    encoding: enc.CompressiveEncoding,
    buffers: Sequence[ChunkBuffers],
    counts: np.ndarray,
    *,
    where: str,
    context: ValueContext = ValueContext.MINI_BLOCK,
    budget: DecompressionBudget | None = None,
) -> DecodedValues:
    """The values of every chunk of one mini block page, one chunk's after
    the other: ``buffers[i]`` is the ``i``-th buffer of every chunk,
    ``counts[k]`` the number of values chunk ``k`` holds (at least one
    chunk). Errors name the chunk (``where`` and its number).

    Raises ``ValueError`` when chunks decoded one at a time do not join (the
    caller names the page).
    """
    budget = budget or DecompressionBudget()
    decoder = ValueDecoder(where, context, SCHEMES, budget=budget, chunk_schemes=CHUNK_SCHEMES)
    counts = np.asarray(counts, dtype=np.int64)
    spendable = budget.remaining
    try:
        return decoder.decode_chunks(encoding, ChunkCursor(buffers), counts)
    except ChunkByChunk:
        # Decoded again, one chunk at a time, from the page's whole budget.
        budget.remaining = spendable
    blocks = [
        decode_values(
            encoding,
            [chunks.buffer(chunk) for chunks in buffers],
            int(count),
            where=f"{where} chunk {chunk}",
            context=context,
            budget=budget,
        )
        for chunk, count in enumerate(counts.tolist())
    ]
    return concat_values(blocks)


__all__ = [
    "CHUNK_SCHEMES",
    "SCHEMES",
    "ChunkBuffers",
    "DecompressionBudget",
    "ValueContext",
    "decode_chunk_values",
    "decode_values",
]
