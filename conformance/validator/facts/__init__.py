"""What the validator's rules know about a dataset, worked out once per
validation run and shared by every rule that needs it.

Rules import these public names; a rule module never reaches into another
rule module's private helpers (tests/conformance/validator/test_rule_imports.py checks
it). One module per topic:

* :mod:`.data_files`: where each data file is and what its footer says;
* :mod:`.fragment_checks`: checks of one fragment at a time, run once per
  distinct fragment of a validation run;
* :mod:`.file_versions`: the file versions a version's data files record;
* :mod:`.deletions`: what each deletion file holds;
* :mod:`.row_ids`: the decoded row id and row version sequences;
* :mod:`.schema_tree`: a version's field list taken apart;
* :mod:`.transactions`: the transaction that made each version, and each
  version's state as the transaction rules compare it;
* :mod:`.changes`: how a version differs from the one before it;
* :mod:`.findings`: findings a rule reports under another rule's id;
* :mod:`.pylance_departures`: conflict rules pylance 14 is measured to depart from;
* :mod:`.text`: how findings list examples and name things.
"""
