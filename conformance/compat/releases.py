"""The releases of the matrix and how each writes its feature datasets.

A release is named as the command line names it: a pinned pylance release
(``0.20.0``: its venv, :func:`conformance.peers.old_pylance.ensure_venv`,
built on first use) or ``installed``, the pylance installed beside the
project (run by the project's own Python; no venv to build). The default
slice is the installed pylance and 0.20.0, whose venv the default test run
builds anyway. ``lines`` stands for one release per minor line
(:func:`~conformance.peers.old_pylance.release_lines`), ``majors`` for one
per major line (:func:`major_line_releases`), ``all`` for every pinned
release (the bisection releases too).

Every release runs :mod:`.feature_writer` in its own interpreter (``python
-I``, no ``PYTHONPATH``: it sees only its own site-packages) and reports what
it wrote, what it does not offer and what it failed to write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ..peers.old_pylance import PINNED_REQUIREMENTS, ensure_venv, release_lines

WRITER_SCRIPT = Path(__file__).with_name("feature_writer.py")
#: The name of the pylance installed beside the project.
INSTALLED = "installed"
#: The releases of a run when none are named.
DEFAULT_RELEASES: tuple[str, ...] = (INSTALLED, "0.20.0")
#: A wide guard against a writer that hangs (it writes a few dozen small datasets).
WRITE_TIMEOUT_SECONDS = 900


class UnknownReleaseError(ValueError):
    """A release name that is neither pinned nor ``installed`` nor a group."""


class ReleaseUnavailableError(RuntimeError):
    """A release that cannot run here (its venv cannot be built, pylance is not installed)."""


def major_line_releases() -> tuple[str, ...]:
    """One release per major line from 0.15: the newest of each major, and
    for the long 0.x line also its first covered release (0.15) and 0.20
    (the one the default tests use), oldest first."""
    lines = release_lines()
    chosen: dict[str, str] = {}
    for line, release in lines.items():
        major = line.split(".")[0]
        chosen[major] = release  # release_lines is in release order: the last one of a major wins
    extra = [lines[line] for line in ("0.15", "0.20") if line in lines]
    ordered = [release for release in PINNED_REQUIREMENTS if release in {*chosen.values(), *extra}]
    return tuple(ordered)


GROUPS = {
    "lines": lambda: tuple(release_lines().values()),
    "majors": major_line_releases,
    "all": lambda: tuple(PINNED_REQUIREMENTS),
}


@dataclass(frozen=True)
class Release:
    #: The version of pylance it runs: the matrix's row and column name.
    name: str
    python: Path
    #: ``installed`` or ``venv``.
    environment: str


def expand(names: list[str]) -> list[str]:
    """Release names with the groups expanded, each once, in the order given.
    Raises :class:`UnknownReleaseError`."""
    out: list[str] = []
    for name in names:
        group = GROUPS.get(name)
        for release in group() if group else (name,):
            if release != INSTALLED and release not in PINNED_REQUIREMENTS:
                known = ", ".join([INSTALLED, *GROUPS, *PINNED_REQUIREMENTS])
                raise UnknownReleaseError(f"no release {release!r}; known: {known}")
            if release not in out:
                out.append(release)
    return out


def installed_release() -> Release:
    try:
        version = metadata.version("pylance")
    except metadata.PackageNotFoundError:
        raise ReleaseUnavailableError("pylance is not installed beside lance-conformance") from None
    return Release(version, Path(sys.executable), INSTALLED)


def resolve(name: str) -> Release:
    """The release of a name :func:`expand` gave; builds its venv on first use.
    Raises :class:`ReleaseUnavailableError`."""
    if name == INSTALLED:
        return installed_release()
    try:
        return Release(name, ensure_venv(name), "venv")
    except RuntimeError as exc:  # PeerUnavailableError: no network, no wheel
        raise ReleaseUnavailableError(str(exc)) from exc


@dataclass
class WriteReport:
    """What one release wrote: ``{feature: dataset path}``, the features it
    does not offer and those it failed to write (``{feature: why}``), or the
    failure of its writer as a whole."""

    release: str
    datasets: dict[str, Path] = field(default_factory=dict)
    not_offered: dict[str, str] = field(default_factory=dict)
    write_errors: dict[str, str] = field(default_factory=dict)
    failure: str | None = None


def write_features(release: Release, features: list[str], out_dir: Path) -> WriteReport:
    """Run the feature writer of ``release`` into ``out_dir``; a writer that
    fails as a whole is reported in :attr:`WriteReport.failure`, not raised."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # Old releases log a warning per thread pool on small machines; keep stderr for real errors.
    env = dict(os.environ, LANCE_LOG="error")
    env.pop("PYTHONPATH", None)
    command = [str(release.python), "-I", str(WRITER_SCRIPT), str(out_dir), *features]
    report = WriteReport(release.name)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=WRITE_TIMEOUT_SECONDS, env=env, cwd=str(out_dir)
        )
    except subprocess.TimeoutExpired as exc:
        report.failure = f"the writer of pylance {release.name} did not finish within {exc.timeout} s"
        return report
    lines = done.stdout.strip().splitlines()
    try:
        written = json.loads(lines[-1]) if done.returncode == 0 else None
    except (IndexError, ValueError):
        written = None
    if not isinstance(written, dict) or written.get("lance_version") != release.name:
        report.failure = (
            f"the writer of pylance {release.name} failed (exit {done.returncode}): "
            f"{(done.stderr.strip() or done.stdout.strip())[-2000:]}"
        )
        return report
    report.datasets = {name: out_dir / relative for name, relative in written["datasets"].items()}
    report.not_offered = dict(written.get("not_offered", {}))
    report.write_errors = dict(written.get("write_errors", {}))
    return report
