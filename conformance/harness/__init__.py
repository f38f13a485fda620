"""The concurrency harness: independent writers race on one dataset, every
attempt is recorded, and a checker proves from the saved history and every
version of the dataset that no committed work was lost (issue 14).

Modules, from the records up: ``history`` (one line of ``history.jsonl`` per
attempt), ``spec`` (what a run needs), ``writers`` (the small interface a
writer implements; pylance and the reference), ``workloads`` (seeded plans),
``tasks`` (one writer's loop), ``executors`` (where the tasks run),
``observe`` (every version read back with the reference reader), ``checker``
(the named anomalies), ``faulty`` (writers with one known bug class each),
``serial_model`` (what a serial history leaves, for the checker's property
tests), ``report`` (text and JSON), ``html`` (the page of a run), ``spark``
(the Spark executor and the connector pattern: executors write fragments, the
driver commits), ``runner`` (a whole run), ``connector`` (connector jobs as a
run: recorded in the history, checked) and ``command`` (``lance-conformance
harness run|check|faulty``).
"""
