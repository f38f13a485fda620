"""Table operations of the reference writer, one module per kind of change.

Each function takes the :class:`~reference_impl.dataset.Dataset` it reads,
writes the files the change needs, and commits one transaction (two for
compaction, which first reserves fragment ids), returning the dataset opened
at the version it committed.

This layer sits below :mod:`reference_impl.dataset` and never imports it at
run time (only for annotations): an operation that opens another dataset (a
clone, a branch) is given ``Dataset.open`` by the caller. Caller mistakes
raise :class:`~reference_impl.errors.InvalidOperationError`.
"""
