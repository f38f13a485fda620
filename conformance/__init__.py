"""lance-conformance: spec validator, canonical descriptions, drivers and the
conformance suite for the Lance table format.

Layers, top down (README, "Layers"; enforced by the import-linter contracts
in pyproject.toml): ``cli``, ``demo``, ``fixtures/``, ``strategies/``,
``mutations/``, ``validator/``, ``drivers/``, ``describe``, then the catalogs
(``peers/``, ``requirements``, ``test_coverage``, ``spec_revisions``); all of
them may use ``reference_impl``, never the other way round.

Where the next parts go (README, "Where the next parts go"): a driver
protocol for implementations in any language in ``drivers/``; the Spark
harness in ``harness/``, above ``validator/`` and ``mutations/`` and below
``fixtures/``; the pytest plugin in ``suite/``, above ``fixtures/``; the HTML
report as a format of ``validator/report.py``.
"""

# The same number as reference_impl.__version__ (tests/conformance/strategies/test_strategies.py
# checks it), written out because the release driver loads this package in an
# old pylance's environment, where reference_impl is not importable.
__version__ = "0.1.0"

__all__ = ["__version__"]
