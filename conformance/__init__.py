"""lance-conformance: spec validator, canonical descriptions, drivers and the
conformance suite for the Lance table format."""

from reference_impl import __version__  # one version for the distribution

__all__ = ["__version__"]
