"""The committed generated modules must match the protos they come from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_protos", ROOT / "protos" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_modules_are_up_to_date(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools is part of the test extra")
    generator = _load_generator()
    fresh = generator.generate(tmp_path)
    assert fresh, "no proto was compiled"
    stale = []
    for module in fresh:
        committed = ROOT / "reference_impl" / "wire" / module.name
        if not committed.exists() or committed.read_text() != module.read_text():
            stale.append(module.name)
    assert not stale, f"regenerate with `./dev tox -e protos` and commit: {stale}"


def test_every_proto_has_a_committed_module():
    generator = _load_generator()
    for proto in generator.proto_files():
        assert (ROOT / "reference_impl" / "wire" / f"{proto.stem}_pb2.py").exists(), proto.name
