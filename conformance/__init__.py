"""lance-conformance: spec validator, canonical descriptions, drivers and the
conformance suite for the Lance table format.

Layers, top down (docs/layout.md, "Layers"; enforced by the import-linter
contracts in pyproject.toml): ``cli``, ``demo``, ``fixtures/``, ``strategies/``,
``mutations/``, ``validator/``, ``drivers/``, ``describe``, then the catalogs
(``peers/``, ``requirements``, ``test_coverage``, ``spec_revisions``); all of
them may use ``reference_impl``, never the other way round.

The driver protocol for implementations in any language lives in
``drivers/``, the concurrency harness in ``harness/`` (above ``validator/``
and ``mutations/``, below ``fixtures/``), the pytest plugin in ``suite/``
(above ``fixtures/``); docs/layout.md maps every package.
"""

# The same number as reference_impl.__version__ (tests/conformance/strategies/test_strategies.py
# checks it), written out because the release driver loads this package in an
# old pylance's environment, where reference_impl is not importable.
__version__ = "0.1.0"

__all__ = ["__version__"]
