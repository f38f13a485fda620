"""An old pylance release as a peer writer, in a virtual environment of its own.

The release cannot share the project's environment (it needs an older pyarrow
than pylance 14), so it is installed into
``$LANCE_CONFORMANCE_CACHE/venvs/pylance-{version}`` (default cache:
``~/.cache/lance-conformance``) on first use and reused afterwards. The venv is
built in a temporary directory next to its final place and renamed into place
only once complete, so a half-built venv is never used and two processes that
race to create it both end up with a working one (the loser of the rename
discards its copy). A lock file beside the venv (``.pylance-{version}.lock``)
makes a second process wait for a build under way instead of building its
own copy.

The venvs are built with uv (PyPI's ``uv``, in the test extra) when it is
installed: it creates a venv without seeding pip and installs from a shared
wheel cache in a few seconds, where ``python -m venv`` and pip take most of a
minute per release on a fresh machine; without uv, pip builds them as before.
The test suite starts building the venvs its selected tests need, several at
once, when the session starts (``tests/conftest.py``).

:func:`write_scenarios` runs ``old_pylance_writer.py`` with that venv's Python
and returns the datasets it wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The releases the peers cover, grouped by era: each era pins a pyarrow and a
#: numpy of its time that have binary wheels for Python 3.11 (and 3.10 to
#: 3.13 where they exist), so a venv never builds anything from source. One
#: release per minor line from 0.15 on (the newest patch release of the line),
#: plus :data:`BISECTION_RELEASES`.
_ERAS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # pylance 0.14 and older require pyarrow < 15.0.1.
    ("15.0.0", "1.26.4", ("0.11.1", "0.14.1")),
    # pylance 0.15 to 0.18 require numpy < 2.
    ("17.0.0", "1.26.4", ("0.15.0", "0.16.1", "0.17.0", "0.18.2", "0.19.2")),
    ("18.1.0", "2.2.6", ("0.20.0", "0.21.0", "0.22.0", "0.23.0", "0.23.2")),
    ("19.0.1", "2.2.6", ("0.24.1", "0.25.2", "0.26.1")),
    ("20.0.0", "2.2.6", ("0.27.0", "0.27.2", "0.28.0", "0.29.0", "0.30.0")),
    (
        "21.0.0",
        "2.3.3",
        (
            "0.31.1",
            "0.32.1",
            "0.33.0",
            "0.34.0",
            "0.35.0",
            "0.36.0",
            "0.37.0",
            "0.38.3",
            "0.39.0",
            "1.0.4",
            "2.0.1",
            "3.0.2",
            "4.0.2",
        ),
    ),
    ("22.0.0", "2.3.5", ("6.0.1", "6.1.0", "7.0.0", "7.1.0", "8.0.0", "8.0.1", "9.0.1")),
    ("23.0.1", "2.4.6", ("10.0.0", "11.0.0", "12.0.0", "13.0.0", "14.0.2")),
)

#: Releases beside the one kept for each minor line: those that bracket a
#: known writer defect (``conformance/data/writer_defects.json``), found by
#: writing datasets with them and their neighbours. 0.11.1 is older than the
#: lines covered: it is where the 2.0 file version begins (0.11.0 and older
#: write an experimental layout of their own under ``use_experimental_writer``).
BISECTION_RELEASES: tuple[str, ...] = ("0.11.1", "0.14.1", "0.23.0", "0.27.0", "8.0.0")

#: Minor lines from 0.15 on that no release here covers, and why.
UNCOVERED_LINES: dict[str, str] = {
    "5.x": "no 5.x release of pylance was published (4.0.2 is followed by 6.0.0)",
}

#: Exact requirements per supported release.
PINNED_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    release: (f"pylance=={release}", f"pyarrow=={pyarrow}", f"numpy=={numpy}")
    for pyarrow, numpy, releases in _ERAS
    for release in releases
}

WRITER_SCRIPT = Path(__file__).with_name("old_pylance_writer.py")
FIXTURE_WRITER_SCRIPT = Path(__file__).with_name("old_pylance_fixture_writer.py")
#: Written into a venv once everything is installed and verified.
COMPLETION_MARKER = "lance-conformance-venv.json"
INSTALL_TIMEOUT_SECONDS = 1800
WRITE_TIMEOUT_SECONDS = 600


class PeerUnavailableError(RuntimeError):
    """The old release could not be installed (no network, no wheel, ...)."""


class PeerWriterError(RuntimeError):
    """The old release was installed but the writer script failed."""


def cache_root() -> Path:
    configured = os.environ.get("LANCE_CONFORMANCE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "lance-conformance"


def venv_dir(version: str) -> Path:
    return cache_root() / "venvs" / f"pylance-{version}"


def _venv_python(venv: Path) -> Path:
    if sys.platform == "win32":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def _requirements(version: str) -> tuple[str, ...]:
    try:
        return PINNED_REQUIREMENTS[version]
    except KeyError:
        known = ", ".join(sorted(PINNED_REQUIREMENTS))
        raise ValueError(f"no pinned requirements for pylance {version}; known releases: {known}") from None


def _is_complete(venv: Path, requirements: tuple[str, ...]) -> bool:
    marker = venv / COMPLETION_MARKER
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("requirements") == list(requirements) and _venv_python(venv).exists()


def venv_ready(version: str) -> bool:
    """Whether the venv of a pinned release is already built (nothing is installed)."""
    return version in PINNED_REQUIREMENTS and _is_complete(venv_dir(version), PINNED_REQUIREMENTS[version])


def _run(command: list[str], *, what: str, timeout: float) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerUnavailableError(f"{what} failed: {exc}") from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise PeerUnavailableError(f"{what} failed (exit {result.returncode}):\n{output[-4000:]}")
    return result


#: The Pythons every era's pins have binary wheels for (pyarrow 15 and 17 have
#: none for 3.13). A venv is a separate process, so its Python need not be the
#: one running the suite.
PEER_PYTHONS: tuple[tuple[int, int], ...] = ((3, 12), (3, 11), (3, 10))


def peer_interpreter() -> str:
    """The Python that builds the release venvs.

    ``$LANCE_CONFORMANCE_PEER_PYTHON`` when set; else the running interpreter
    when every era's pins have wheels for it; else the newest of
    :data:`PEER_PYTHONS` on ``PATH``. The venvs are cached per release,
    whichever Python built them, so a suite run under 3.13 reuses (or builds
    with 3.12) the same venvs as one under 3.11.
    """
    configured = os.environ.get("LANCE_CONFORMANCE_PEER_PYTHON")
    if configured:
        return configured
    if sys.version_info[:2] in PEER_PYTHONS:
        return sys.executable
    for major, minor in PEER_PYTHONS:
        found = shutil.which(f"python{major}.{minor}")
        if found:
            return found
    raise PeerUnavailableError(
        f"no Python for the release venvs: Python {sys.version_info.major}.{sys.version_info.minor} has no wheels "
        f"for every pinned pyarrow, and none of {', '.join(f'python{a}.{b}' for a, b in PEER_PYTHONS)} is on PATH "
        "(or set LANCE_CONFORMANCE_PEER_PYTHON)"
    )


def _discard(venv: Path) -> None:
    """Remove a venv built with other pins (or by something else).

    It is renamed first so that removal never races with a rename into
    ``venv``; if another process already moved it, there is nothing to do.
    """
    aside = venv.with_name(f".{venv.name}.stale-{uuid.uuid4().hex}")
    try:
        venv.rename(aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def uv_executable() -> str | None:
    """The uv that builds the venvs: PyPI's ``uv`` package installed beside
    the project, else a ``uv`` on ``PATH``; None when neither is there (pip
    builds them then)."""
    try:
        # lazy: uv is optional (the test extra installs it); pip is the fallback.
        import uv
    except ImportError:
        return shutil.which("uv")
    try:
        return uv.find_uv_bin()
    except FileNotFoundError:
        return shutil.which("uv")


@contextmanager
def _build_lock(final: Path) -> Iterator[None]:
    """Hold ``.pylance-{version}.lock`` beside the venv while it is checked and
    built, so that a second process (or thread) waits for the first's build
    rather than building its own copy. Where ``fcntl`` is missing (Windows)
    there is no lock: the staging-and-rename protocol alone keeps the venv
    sound, at the cost of duplicated builds."""
    try:
        # lazy: POSIX only.
        import fcntl
    except ImportError:
        yield
        return
    with open(final.with_name(f".{final.name}.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _install(staging: Path, version: str, requirements: tuple[str, ...]) -> None:
    """Create a venv at ``staging`` and install ``requirements`` (binary wheels only)."""
    uv = uv_executable()
    python = str(_venv_python(staging))
    if uv is not None:
        _run(
            [uv, "venv", "--quiet", "--no-python-downloads", "--python", peer_interpreter(), str(staging)],
            what=f"creating a venv for pylance {version} (uv)",
            timeout=300,
        )
        install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python, "--only-binary", ":all:"]
        install += requirements
        what = f"uv pip install {' '.join(requirements)}"
    else:
        _run(
            [peer_interpreter(), "-m", "venv", str(staging)],
            what=f"creating a venv for pylance {version}",
            timeout=300,
        )
        install = [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--only-binary=:all:",
            *requirements,
        ]
        what = f"pip install {' '.join(requirements)}"
    _run(install, what=what, timeout=INSTALL_TIMEOUT_SECONDS)


def ensure_venv(version: str) -> Path:
    """The Python executable of a venv holding pylance ``version``.

    Creates the venv on first use (needs network access to the package index);
    raises :class:`PeerUnavailableError` with the installer's output when that
    fails.
    """
    requirements = _requirements(version)
    final = venv_dir(version)
    if _is_complete(final, requirements):
        return _venv_python(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(final):
        # Built by another process while this one waited for the lock?
        if _is_complete(final, requirements):
            return _venv_python(final)
        if final.exists():
            _discard(final)
        _build(final, version, requirements)
    # The venv's python finds its site-packages relative to its own location,
    # so the renamed venv works; its activate scripts are never used.
    return _venv_python(final)


def _build(final: Path, version: str, requirements: tuple[str, ...]) -> None:
    staging = final.with_name(f".{final.name}.building-{os.getpid()}-{uuid.uuid4().hex}")
    try:
        _install(staging, version, requirements)
        python = str(_venv_python(staging))
        probe = _run(
            [python, "-c", "import lance, pyarrow; print(lance.__version__)"],
            what=f"importing pylance {version} in its venv",
            timeout=120,
        )
        installed = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else ""
        if installed != version:
            raise PeerUnavailableError(f"the venv for pylance {version} imports lance {installed!r}")
        (staging / COMPLETION_MARKER).write_text(json.dumps({"requirements": list(requirements)}))
        try:
            staging.rename(final)
        except OSError:
            # Another process finished first (one without the lock); use its
            # venv if it is sound.
            if not _is_complete(final, requirements):
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def release_lines() -> dict[str, str]:
    """``{minor line: release}``: the release kept for each minor line
    (``"0.27"`` -> ``"0.27.2"``), leaving out :data:`BISECTION_RELEASES`."""
    lines: dict[str, str] = {}
    for release in PINNED_REQUIREMENTS:
        if release not in BISECTION_RELEASES:
            lines[release.rsplit(".", 1)[0]] = release
    return lines


@dataclass(frozen=True)
class WriterReport:
    """What a writer script wrote with one release."""

    lance_version: str
    #: ``{scenario name: dataset root}``
    datasets: dict[str, Path]
    #: ``{scenario name: why this release could not write it}``
    skipped: dict[str, str]


def write_scenarios(
    version: str, out_dir: Path, *, script: Path = WRITER_SCRIPT, arguments: tuple[str, ...] = ()
) -> dict[str, Path]:
    """Write the old-release datasets under ``out_dir``; ``{name: path}``.

    ``script`` is the standalone writer to run in the release's venv (the
    scenario writer by default; the golden fixtures use
    ``old_pylance_fixture_writer.py``) and ``arguments`` follow ``out_dir``.

    Raises :class:`PeerUnavailableError` when the release cannot be installed
    and :class:`PeerWriterError` when the writer script fails.
    """
    return run_writer(version, out_dir, script=script, arguments=arguments).datasets


def run_writer(
    version: str, out_dir: Path, *, script: Path = WRITER_SCRIPT, arguments: tuple[str, ...] = ()
) -> WriterReport:
    """:func:`write_scenarios`, with the scenarios the release skipped and why."""
    python = ensure_venv(version)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Old releases log a warning per thread pool on small machines; keep
    # stderr for real errors.
    env = dict(os.environ, LANCE_LOG="error")
    # Keep the project's own packages (and any PYTHONPATH pointing at them)
    # out of the old release's interpreter.
    env.pop("PYTHONPATH", None)
    try:
        result = subprocess.run(
            [str(python), str(script), str(out_dir), *arguments],
            capture_output=True,
            text=True,
            timeout=WRITE_TIMEOUT_SECONDS,
            env=env,
            cwd=str(out_dir),
        )
    except subprocess.TimeoutExpired as exc:
        raise PeerWriterError(f"the pylance {version} writer timed out after {exc.timeout} s") from exc
    if result.returncode != 0:
        raise PeerWriterError(
            f"the pylance {version} writer failed (exit {result.returncode}):\n{result.stderr.strip()[-4000:]}"
        )
    lines = result.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise PeerWriterError(f"the pylance {version} writer printed no report:\n{result.stdout[-2000:]}") from None
    if report.get("lance_version") != version:
        raise PeerWriterError(f"the writer ran lance {report.get('lance_version')!r}, not {version}")
    datasets = {name: out_dir / relative for name, relative in report["datasets"].items()}
    missing = [name for name, path in datasets.items() if not (path / "_versions").is_dir()]
    if missing:
        raise PeerWriterError(f"the pylance {version} writer reported datasets it did not write: {missing}")
    return WriterReport(version, datasets, dict(report.get("skipped", {})))
