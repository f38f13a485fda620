"""The ``ecosystem_matrix`` fixture (tests/conformance/report/small_matrix.py)."""

from tests.conformance.report.small_matrix import ecosystem_matrix  # noqa: F401
