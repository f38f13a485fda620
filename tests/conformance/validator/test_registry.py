"""The rule registry: one function per rule id, a module imported again
replacing its own rules (as pytest's pytester re-imports modules)."""

import pytest

from conformance.validator import registry


@pytest.fixture
def scratch_id():
    rule_id = "test/registry-scratch"
    yield rule_id
    registry._RULES.pop(rule_id, None)


def _define(rule_id: str):
    # A fresh function object with the same module and qualified name each
    # call: what a re-imported module defines.
    @registry.rule(rule_id, severity="error", requirements=("REQ-TEST",), summary="scratch")
    def check(view):
        return []

    return check


def test_the_same_function_imported_again_replaces_its_rule(scratch_id):
    first = _define(scratch_id)
    second = _define(scratch_id)
    assert first is not second
    assert registry.registered_rule(scratch_id).check is second


def test_two_functions_claiming_one_id_are_refused(scratch_id):
    _define(scratch_id)

    def other(view):
        return []

    with pytest.raises(ValueError, match="registered twice"):
        registry.rule(scratch_id, severity="error", requirements=("REQ-TEST",), summary="other")(other)
