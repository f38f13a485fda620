"""Lance data files of version 2.1 and later: structural encodings and
compression (upstream ``docs/src/format/file/encoding.md``; messages in
``protos/encodings_v2_1.proto``, and for the pages of 2.3 files, unstable
upstream, ``protos/encodings_v2_3.proto`` as pylance 14 writes them).

Layers, lowest first:

* :mod:`.values` (decoded value blocks) and :mod:`.compression` (one module
  per compressive encoding, behind :func:`.compression.decode_values` and,
  for the chunks of a mini block page, :func:`.compression.decode_chunk_values`);
* :mod:`.page` (a page's buffers and errors, what layouts yield),
  :mod:`.levels` (stored levels to u16), :mod:`.rep_def` (repetition and
  definition levels to Arrow validity and offsets);
* one module per page layout: :mod:`.mini_block`, :mod:`.full_zip`,
  :mod:`.all_null` (constant and all-null pages), :mod:`.blob`; the 2.3
  planar layout, :mod:`.planar` (dense pages mapped onto the layouts above)
  and :mod:`.sparse` (the sparse structure, stated layer by layer instead of
  levels); dispatched by :mod:`.page_layout`;
* :mod:`.columns` (Arrow assembly of structs, lists, fixed-size lists,
  packed structs from leaf columns) and :mod:`.file_reader` (the entry used
  by :class:`~reference_impl.file_format.LanceFileReader`).
"""

from __future__ import annotations

from .file_reader import PAGE_LAYOUT_TYPE, StructuralFileReader, leaf_fields

__all__ = ["PAGE_LAYOUT_TYPE", "StructuralFileReader", "leaf_fields"]
