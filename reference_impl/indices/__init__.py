"""The files of index segments (upstream format/index/): reading and
writing them, one module per index page, above the file format they are
stored in. What a manifest records about a segment is
:mod:`reference_impl.index_metadata`; the fragment reuse index, which lives
in the manifest, is :mod:`reference_impl.fragment_reuse`.

* :mod:`.types`: index types by their details message, and whether the
  reference may use a segment (index.md, "Index Compatibility");
* :mod:`.files`: reading a Lance file of a segment's directory, and
  writing one in the dataset's file version;
* :mod:`.wire_fields`: details messages read field by field (those the
  generated protobuf modules lack);
* :mod:`.row_addr_map`: the serialized sets of row addresses scalar indices
  store;
* :mod:`.inverted` (with :mod:`.fst` for its token set, :mod:`.postings` for
  its posting codecs and :mod:`.fts_tokenizer` for the tokens of a value),
  :mod:`.ngram` and :mod:`.json_index`: the text index pages;
* :mod:`.zones`, :mod:`.zonemap`, :mod:`.bloom_filter` (with :mod:`.xxhash64`):
  the zone map index (read and written) and the bloom filter index (read);
* :mod:`.btree`: BTREE segments (scalar/btree.md), read, queried and written;
* :mod:`.bitmap`, :mod:`.label_list`: BITMAP and LABEL_LIST segments;
* :mod:`.rtree`: RTREE segments (scalar/rtree.md) and the bounding boxes of
  native GeoArrow geometries, read;
* :mod:`.minhash_lsh` (with :mod:`.minhash_signature`): MINHASH_LSH
  segments (scalar/minhash_lsh.md), read, and the page's signatures;
* :mod:`.vector`: IVF segments with their FLAT, PQ, SQ, RQ and HNSW
  sub-indices (vector/index.md), read, and IVF_FLAT written.
"""
