"""Something given as a driver that is not one is refused naming what it
lacks (conformance/drivers/__init__.py, missing_members and load_driver)."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from conformance.drivers import DRIVER_MEMBERS, Capability, DriverError, driver_info, load_driver, missing_members


def test_missing_members_names_what_is_absent_in_the_order_asked():
    thing = types.SimpleNamespace(describe=lambda uri, version=None: None, versions=None)
    assert missing_members(thing, ("read_table", "versions", "describe", "info")) == ["read_table", "info"]
    assert missing_members(thing, ()) == []
    # A module answers by its module-level names, a class by its attributes.
    assert missing_members(types, ("SimpleNamespace", "NoSuchName")) == ["NoSuchName"]
    assert missing_members(dict, ("keys", "write")) == ["write"]


def _module(tmp_path, monkeypatch, name: str, source: str) -> None:
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))


def _forget(monkeypatch, name: str) -> None:
    if name in sys.modules:
        monkeypatch.delitem(sys.modules, name)  # a module of this test's directory only


def test_a_module_with_none_of_the_driver_members_is_refused_naming_them(tmp_path, monkeypatch):
    _module(tmp_path, monkeypatch, "not_a_driver", "def hello():\n    return 1\n")
    with pytest.raises(DriverError) as refused:
        load_driver("not_a_driver")
    _forget(monkeypatch, "not_a_driver")
    message = str(refused.value)
    assert "is not a driver" in message
    assert all(name in message for name in ("info", *DRIVER_MEMBERS))


def test_versions_and_describe_are_optional_for_a_module_without_info(tmp_path, monkeypatch):
    """A reader module with ``read_table`` only loads, and is taken to read
    (any version) but neither list nor describe: the capabilities its members allow."""
    _module(
        tmp_path,
        monkeypatch,
        "rows_only_driver",
        "def read_table(uri, version=None, *, schema=None):\n    return None\n",
    )
    driver = load_driver("rows_only_driver")
    module = importlib.import_module("rows_only_driver")
    _forget(monkeypatch, "rows_only_driver")
    assert driver is module
    assert missing_members(module, DRIVER_MEMBERS) == ["versions", "describe"]
    assert driver_info(driver, "rows_only_driver").capabilities == {Capability.READ_LATEST, Capability.TIME_TRAVEL}


def test_a_module_declaring_read_latest_only_loads(tmp_path, monkeypatch):
    source = (
        "from conformance.drivers.protocol import Capability, DriverInfo\n"
        "def info():\n"
        "    return DriverInfo('latest_only', 'latest-only', '1', None, frozenset({Capability.READ_LATEST}))\n"
        "def read_table(uri, version=None, *, schema=None):\n"
        "    return None\n"
    )
    _module(tmp_path, monkeypatch, "latest_only_driver", source)
    driver = load_driver("latest_only_driver")
    _forget(monkeypatch, "latest_only_driver")
    assert driver_info(driver, "latest_only_driver").capabilities == {Capability.READ_LATEST}


def test_a_module_declaring_a_capability_without_its_member_is_refused_naming_it(tmp_path, monkeypatch):
    source = (
        "from conformance.drivers.protocol import Capability, DriverInfo\n"
        "def info():\n"
        "    caps = frozenset({Capability.READ_LATEST, Capability.DESCRIBE})\n"
        "    return DriverInfo('half', 'half', '1', None, caps)\n"
        "def read_table(uri, version=None, *, schema=None):\n"
        "    return None\n"
    )
    _module(tmp_path, monkeypatch, "half_a_driver", source)
    with pytest.raises(DriverError) as refused:
        load_driver("half_a_driver")
    _forget(monkeypatch, "half_a_driver")
    message = str(refused.value)
    assert "lacks describe" in message and "read_table" not in message.split("lacks")[1]
