"""lance-conformance: spec validator, canonical descriptions, drivers and the
conformance suite for the Lance table format.

Layers, top down (README, "Layers"; enforced by the import-linter contracts
in pyproject.toml): ``cli``, ``demo``, ``fixtures/``, ``strategies/``,
``mutations/``, ``validator/``, ``drivers/``, ``describe``, then the catalogs
(``peers/``, ``requirements``, ``test_coverage``, ``spec_revisions``); all of
them may use ``reference_impl``, never the other way round.
"""

from reference_impl import __version__  # one version for the distribution

__all__ = ["__version__"]
