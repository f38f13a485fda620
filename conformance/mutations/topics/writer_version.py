"""Mutations for the writer-version rules.

They edit the writer version of the latest manifest of the "plain" base,
which pylance 14 records as library ``lance``, version ``14.0.2`` and no
prerelease or build metadata.
"""

from __future__ import annotations

from ..edit import edit_manifest
from ..registry import mutation


def _set_writer(root, **values) -> None:
    def edit(manifest_file):
        for key, value in values.items():
            setattr(manifest_file.manifest.writer_version, key, value)

    edit_manifest(root, edit)


@mutation("writer-version/full-version")
def give_the_writer_a_prerelease_with_a_space(root):
    _set_writer(root, prerelease="rc 1")


@mutation("writer-version/full-version")
def give_the_writer_empty_build_identifiers(root):
    _set_writer(root, build_metadata="build..7")


@mutation("writer-version/present")
def drop_the_writer_version(root):
    def edit(manifest_file):
        manifest_file.manifest.writer_version = None

    edit_manifest(root, edit)


@mutation("writer-version/present")
def leave_the_writer_library_empty(root):
    _set_writer(root, library="")


@mutation("writer-version/semver")
def prefix_the_writer_version_with_v(root):
    _set_writer(root, version="v14.0.2")


@mutation("writer-version/semver")
def drop_the_patch_number(root):
    _set_writer(root, version="14.0")


@mutation("writer-version/core-only", breaks=("writer-version.core-version-only", "writer-version.prerelease-separate"))
def put_the_prerelease_in_the_version_field(root):
    _set_writer(root, version="14.0.2-rc.1")


@mutation(
    "writer-version/core-only", breaks=("writer-version.core-version-only", "writer-version.build-metadata-separate")
)
def put_the_build_metadata_in_the_version_field(root):
    _set_writer(root, version="14.0.2+build.5")


@mutation("writer-version/suffix-fields", breaks="writer-version.prerelease-separate")
def keep_the_hyphen_in_the_prerelease(root):
    _set_writer(root, prerelease="-rc.1")


@mutation("writer-version/suffix-fields", breaks="writer-version.build-metadata-separate")
def put_build_metadata_in_the_prerelease(root):
    _set_writer(root, prerelease="rc.1+b")


@mutation(
    "writer-version/suffix-fields",
    breaks="writer-version.build-metadata-separate",
    also=("writer-version/full-version",),
)
def keep_the_plus_in_the_build_metadata(root):
    # "14.0.2" + "+" + "+b.1" does not reassemble into semver either.
    _set_writer(root, build_metadata="+b.1")
