"""The validator's rules, one module per topic of the specification.

Importing this package registers every rule (see
:mod:`conformance.validator.registry`).
"""

from . import feature_flags, history, manifest, naming  # noqa: F401
