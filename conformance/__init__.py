"""lance-conformance: spec validator, canonical descriptions, drivers and the
conformance suite for the Lance table format."""

__version__ = "0.1.0"
