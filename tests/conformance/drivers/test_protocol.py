"""The driver protocol: declarations (DriverInfo), capabilities, and what
the shipped drivers declare about themselves."""

from __future__ import annotations

import importlib.metadata
import json
import types

import pytest

from conformance.drivers import DRIVERS, installed_drivers, load_driver, pylance_driver, reference
from conformance.drivers.protocol import (
    DEFAULT_CAPABILITIES,
    PROTOCOL_VERSION,
    Capability,
    DriverInfo,
    DriverInfoError,
    driver_info,
)


def _info(**changes) -> DriverInfo:
    fields = dict(
        name="pylance@0.20.0",
        implementation="pylance",
        version="0.20.0",
        lance_version="0.20.0",
        capabilities=frozenset({Capability.READ_LATEST, Capability.DESCRIBE}),
        write_operations=frozenset({"append", "create"}),
        data_storage_versions=("2.0", "2.1"),
        unreported=frozenset({"naming_scheme"}),
    )
    fields.update(changes)
    return DriverInfo(**fields)


def test_driver_info_round_trips_through_json():
    """Property: from_json(to_json(info)) == info, and the JSON survives a
    dump/load (what a worker in another language sends)."""
    info = _info()
    document = json.loads(json.dumps(info.to_json()))
    assert document["protocol_version"] == PROTOCOL_VERSION
    assert document["capabilities"] == ["describe", "read-latest"]
    assert DriverInfo.from_json(document) == info


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"capabilities": ["read-latest", "teleport"]}, "unknown capabilities ['teleport']"),
        ({"name": ""}, "'name' must be a non-empty string"),
        ({"version": 14}, "'version' must be a non-empty string"),
        ({"protocol_version": PROTOCOL_VERSION + 1}, "newer than this suite's"),
        ({"unreported": "tags"}, "'unreported' must be a list of strings"),
        ({"lance_version": 3}, "'lance_version' must be a string or null"),
    ],
)
def test_a_declaration_that_does_not_fit_is_refused_naming_the_field(change, message):
    document = {**_info().to_json(), **change}
    with pytest.raises(DriverInfoError, match=message.replace("[", r"\[").replace("]", r"\]")):
        DriverInfo.from_json(document)


def test_a_declaration_that_is_not_an_object_is_refused():
    with pytest.raises(DriverInfoError, match="expected a JSON object, got list"):
        DriverInfo.from_json([])


def test_missing_names_which_capabilities_a_driver_lacks():
    info = _info()
    assert info.missing(Capability.TIME_TRAVEL, Capability.DESCRIBE, Capability.BLOBS) == [
        Capability.TIME_TRAVEL,
        Capability.BLOBS,
    ]
    assert info.has(Capability.DESCRIBE) and not info.has(Capability.WRITE)


def test_a_driver_without_info_gets_the_protocol_1_defaults():
    """A module with only the four calls is taken to list, describe and read
    any version; its UNREPORTED is kept."""
    module = types.SimpleNamespace(UNREPORTED=frozenset({"tags"}), versions=None, describe=None, read_table=None)
    info = driver_info(module, "third_party.driver")
    assert info.capabilities == DEFAULT_CAPABILITIES
    assert info.unreported == {"tags"} and info.name == "third_party.driver" and info.version == "unknown"


def test_an_info_that_returns_something_else_is_refused():
    with pytest.raises(DriverInfoError, match="info\\(\\) returned dict"):
        driver_info(types.SimpleNamespace(info=lambda: {}), "odd")


def test_the_reference_declares_itself():
    info = reference.info()
    assert info.implementation == "reference" and info.version == importlib.metadata.version("lance-conformance")
    assert {Capability.TIME_TRAVEL, Capability.LIST_VERSIONS, Capability.DESCRIBE} <= info.capabilities
    assert info.data_storage_versions == ("2.0", "2.1", "2.2")


def test_pylance_declares_its_package_and_lance_core_versions():
    """The package version is pylance's; the core version is the one the
    Rust core records as writer of the manifests it commits."""
    info = pylance_driver.info()
    assert info.implementation == "pylance" and info.version == importlib.metadata.version("pylance")
    assert info.lance_version is not None and info.lance_version[0].isdigit()
    assert info.unreported == pylance_driver.UNREPORTED


def test_installed_drivers_lists_the_shipped_drivers_that_run_here():
    names = installed_drivers()
    assert names[:2] == ["reference", "pylance"]
    assert all(name in DRIVERS or name.startswith("pylance@") for name in names)
    for name in names[:2]:
        assert driver_info(load_driver(name), name).name == name
