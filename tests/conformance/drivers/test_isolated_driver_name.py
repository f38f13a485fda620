"""Which driver names run in a worker by default: a driver module does (native
code in it cannot take the suite down); shipped names, workers, releases and
names that find no module are left as given; in process is asked for."""

from __future__ import annotations

import pytest

from conformance.drivers import isolated_driver_name

from ..fixtures import aborting_native_reader


@pytest.mark.parametrize(
    ("name", "runs_as"),
    [
        (aborting_native_reader.NAME, f"worker:{aborting_native_reader.NAME}"),
        ("conformance.drivers.rust_debug", "worker:conformance.drivers.rust_debug"),
        ("reference", "reference"),
        ("pylance", "pylance"),
        ("pylance@0.20.0", "pylance@0.20.0"),
        ("worker:reference", "worker:reference"),
        ("cmd:node worker.mjs", "cmd:node worker.mjs"),
        # Found nowhere: left for load_driver to refuse as unknown, without starting a worker.
        ("no_such_driver_module", "no_such_driver_module"),
        ("no_such_package.driver", "no_such_package.driver"),
    ],
)
def test_a_driver_module_runs_as_a_worker_by_default(name, runs_as):
    assert isolated_driver_name(name) == runs_as


def test_in_process_leaves_every_name_as_given():
    assert isolated_driver_name(aborting_native_reader.NAME, in_process=True) == aborting_native_reader.NAME


def test_a_module_in_the_current_directory_is_found_as_the_worker_finds_it(tmp_path, monkeypatch):
    """The worker runs with python -m, which puts the current directory on
    its path: a driver module there runs in a worker even when the command's
    own sys.path (a console script's) does not hold the directory."""
    (tmp_path / "my_lance_driver.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert isolated_driver_name("my_lance_driver") == "worker:my_lance_driver"
