"""The concurrency harness: independent writers race on one dataset, every
attempt is recorded, and a checker proves from the saved history and every
version of the dataset that no committed work was lost (issue 14).

Modules, from the records up: ``history`` (one line of ``history.jsonl`` per
attempt), ``spec`` (what a run needs), ``writers`` (the small interface a
writer implements; pylance and the reference), ``workloads`` (seeded plans),
``tasks`` (one writer's loop), ``executors`` (where the tasks run),
``observe`` (every version read back with the reference reader), ``checker``
(the named anomalies), ``faulty`` (writers with one known bug class each),
``report`` (text and JSON) and ``runner`` (a whole run).
"""
