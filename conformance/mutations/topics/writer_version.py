"""Mutations for the writer-version rules."""

from __future__ import annotations

from ..edit import edit_manifest
from ..registry import mutation


@mutation("writer-version/full-version")
def give_the_writer_a_prerelease_with_a_space(root):
    def edit(manifest_file):
        manifest_file.manifest.writer_version.prerelease = "rc 1"

    edit_manifest(root, edit)


@mutation("writer-version/full-version")
def give_the_writer_empty_build_identifiers(root):
    def edit(manifest_file):
        manifest_file.manifest.writer_version.build_metadata = "build..7"

    edit_manifest(root, edit)
