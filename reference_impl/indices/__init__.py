"""The files of index segments (upstream format/index/): reading and
writing them, one module per index page, above the file format they are
stored in. What a manifest records about a segment is
:mod:`reference_impl.index_metadata`; the fragment reuse index, which lives
in the manifest, is :mod:`reference_impl.fragment_reuse`.

* :mod:`.types`: index types by their details message, and whether the
  reference may use a segment (index.md, "Index Compatibility");
* :mod:`.files`: reading a Lance file of a segment's directory;
* :mod:`.row_addr_map`: the serialized sets of row addresses scalar indices
  store;
* :mod:`.bitmap`, :mod:`.label_list`: BITMAP and LABEL_LIST segments.
"""
