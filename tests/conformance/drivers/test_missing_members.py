"""Something given as a driver that is not one is refused naming what it
lacks (conformance/drivers/__init__.py, missing_members and load_driver)."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from conformance.drivers import REQUIRED_NAMES, DriverError, load_driver, missing_members


def test_missing_members_names_what_is_absent_in_the_order_asked():
    thing = types.SimpleNamespace(describe=lambda uri, version=None: None, versions=None)
    assert missing_members(thing, ("read_table", "versions", "describe", "info")) == ["read_table", "info"]
    assert missing_members(thing, ()) == []
    # A module answers by its module-level names, a class by its attributes.
    assert missing_members(types, ("SimpleNamespace", "NoSuchName")) == ["NoSuchName"]
    assert missing_members(dict, ("keys", "write")) == ["write"]


def test_a_driver_module_lacking_members_is_refused_naming_each(tmp_path, monkeypatch):
    (tmp_path / "half_a_driver.py").write_text("def versions(uri):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DriverError) as refused:
        load_driver("half_a_driver")
    message = str(refused.value)
    assert "is not a driver" in message and "lacks describe, read_table" in message
    assert "versions" not in message.split("lacks")[1]
    module = importlib.import_module("half_a_driver")
    monkeypatch.delitem(sys.modules, "half_a_driver")  # a module of this test's directory only
    assert missing_members(module, REQUIRED_NAMES) == ["describe", "read_table"]
