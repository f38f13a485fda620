"""Table operations of the reference writer, one module per kind of change.

Each function takes the :class:`~reference_impl.dataset.Dataset` it reads,
writes the files the change needs, and commits one transaction (two for
compaction, which first reserves fragment ids), returning the dataset opened
at the version it committed.
"""
