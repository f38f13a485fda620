"""The validator's rules, one module per topic of the specification.

Importing this package imports every module in it, which registers their
rules (see :mod:`conformance.validator.registry`); a new topic module needs no
other wiring. :mod:`conformance.validator.ruleset` imports this package.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
