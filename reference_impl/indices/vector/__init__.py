"""Vector indices (upstream format/index/vector/index.md): an IVF clustering
whose partitions each hold a sub-index over quantized vectors, stored as two
Lance files of the segment's directory, ``index.idx`` (the clustering and
the sub-index) and ``auxiliary.idx`` (the quantized vectors, partition after
partition). Modules follow the page's split:

* :mod:`.distance`: the distance types, and the nearest-candidate checks
  (ties within a stated float tolerance);
* :mod:`.tensor`: the ``Tensor`` message and numbered global buffers;
* :mod:`.ivf`: the ``IVF`` message, and
  :func:`~.ivf.read_vector_segment`, which reads both files of a segment
  into a :class:`~.ivf.VectorSegment` of plain numpy arrays;
* :mod:`.flat`: the FLAT sub-index and the FLAT (unquantized) storage;
* :mod:`.pq`: product quantization (codebook, per-row codes);
* :mod:`.sq`: scalar quantization (bounds, per-row codes);
* :mod:`.rq`: RabitQ storage (its structure only: see the module);
* :mod:`.hnsw`: the HNSW sub-index (graph levels per partition).

Segments written before the V3 layout the page records (no
``auxiliary.idx``, no ``lance:index`` metadata) are recognized and reported
as :class:`~.ivf.LegacyVectorLayout`, not read.
"""
