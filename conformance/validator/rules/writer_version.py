"""Rules on the writer version a manifest records (table format:
Manifest.WriterVersion).

Nothing records which library really wrote a manifest, so these rules check
the shape of the values only. Whether a library versions itself
semantically is not recorded either: a version string is taken to be meant
as semver when it starts like one (``digits.digits``).
"""

from __future__ import annotations

import re

from ..context import VersionView
from ..registry import Severity, rule

_NUMBER = r"(?:0|[1-9]\d*)"
_PRERELEASE_IDENTIFIER = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_IDENTIFIER = r"[0-9A-Za-z-]+"
_PRERELEASE = rf"{_PRERELEASE_IDENTIFIER}(?:\.{_PRERELEASE_IDENTIFIER})*"
_BUILD = rf"{_BUILD_IDENTIFIER}(?:\.{_BUILD_IDENTIFIER})*"

#: Semantic Versioning 2.0.0: core, optional -prerelease, optional +build.
SEMVER = re.compile(rf"(?P<core>{_NUMBER}\.{_NUMBER}\.{_NUMBER})(?:-(?P<pre>{_PRERELEASE}))?(?:\+(?P<build>{_BUILD}))?")
PRERELEASE = re.compile(_PRERELEASE)
BUILD = re.compile(_BUILD)
#: What a version meant as semver starts with.
_SEMVER_LIKE = re.compile(r"[vV]?\d+\.\d+")


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


@rule(
    "writer-version/present",
    severity=Severity.WARNING,
    requirements=("writer-version.identifies-writer",),
    summary="The manifest names the library and release that wrote it",
)
def present(view: VersionView):
    # A warning: the writer version explains a manifest (known writer bugs)
    # but no reader needs it to read the table.
    writer = view.manifest.writer_version
    if writer is None:
        yield "the manifest records no writer_version", view.at("writer_version")
        return
    missing = [name for name in ("library", "version") if not getattr(writer, name).strip()]
    if missing:
        yield f"writer_version has an empty {' and '.join(missing)}", view.at("writer_version")


@rule(
    "writer-version/semver",
    severity=Severity.WARNING,
    requirements=("writer-version.semver-without-v",),
    summary="A semantic writer version is valid semver, without a leading 'v'",
)
def semver(view: VersionView):
    writer = view.manifest.writer_version
    if writer is None or not _SEMVER_LIKE.match(writer.version):
        return
    version = writer.version
    where = view.at("writer_version.version")
    if version[0] in "vV":
        rest = "" if SEMVER.fullmatch(version[1:]) else " and the rest is not valid semver either"
        yield f"writer version {_short(version)} starts with {version[0]!r}{rest}", where
    elif not SEMVER.fullmatch(version):
        yield f"writer version {_short(version)} looks semantic but is not valid semver (MAJOR.MINOR.PATCH)", where


@rule(
    "writer-version/core-only",
    severity=Severity.WARNING,
    requirements=(
        "writer-version.core-version-only",
        "writer-version.prerelease-separate",
        "writer-version.build-metadata-separate",
    ),
    summary="The version field holds only MAJOR.MINOR.PATCH; prerelease and build go in their own fields",
)
def core_only(view: VersionView):
    writer = view.manifest.writer_version
    if writer is None:
        return
    match = SEMVER.fullmatch(writer.version)
    if match is None or (match.group("pre") is None and match.group("build") is None):
        return
    parts = []
    if match.group("pre") is not None:
        parts.append(f"prerelease {match.group('pre')!r}")
    if match.group("build") is not None:
        parts.append(f"build metadata {match.group('build')!r}")
    yield (
        f"writer version {_short(writer.version)} carries {' and '.join(parts)}; new manifests keep only "
        f"{match.group('core')!r} there and put the rest in the separate fields",
        view.at("writer_version.version"),
    )


@rule(
    "writer-version/suffix-fields",
    severity=Severity.WARNING,
    requirements=("writer-version.prerelease-separate", "writer-version.build-metadata-separate"),
    summary="prerelease and build_metadata hold the bare identifiers, without '-' or '+'",
)
def suffix_fields(view: VersionView):
    writer = view.manifest.writer_version
    if writer is None:
        return
    if writer.prerelease is not None:
        if writer.prerelease.startswith("-"):
            yield f"prerelease {_short(writer.prerelease)} starts with '-'", view.at("writer_version.prerelease")
        elif "+" in writer.prerelease:
            yield (
                f"prerelease {_short(writer.prerelease)} contains build metadata ('+'), which has a field of its own",
                view.at("writer_version.prerelease"),
            )
    if writer.build_metadata is not None and writer.build_metadata.startswith("+"):
        yield (
            f"build_metadata {_short(writer.build_metadata)} starts with '+'",
            view.at("writer_version.build_metadata"),
        )


@rule(
    "writer-version/full-version",
    severity=Severity.ERROR,
    requirements=("writer-version.full-version-reassembly",),
    summary="For a semver writer, version + '-' prerelease + '+' build_metadata is valid semver",
)
def full_version(view: VersionView):
    writer = view.manifest.writer_version
    if writer is None or SEMVER.fullmatch(writer.version) is None:
        return  # not a semantic version: nothing to reassemble into
    if not writer.prerelease and not writer.build_metadata:
        return
    full = writer.full_version()
    if SEMVER.fullmatch(full) is None:
        bad = []
        if writer.prerelease and not PRERELEASE.fullmatch(writer.prerelease):
            bad.append(f"prerelease {_short(writer.prerelease)}")
        if writer.build_metadata and not BUILD.fullmatch(writer.build_metadata):
            bad.append(f"build_metadata {_short(writer.build_metadata)}")
        why = f": {' and '.join(bad)} not made of dot-separated [0-9A-Za-z-] identifiers" if bad else ""
        yield f"the reassembled writer version {_short(full)} is not valid semver{why}", view.at("writer_version")
