"""Deliberately faulty writing drivers: the reference driver with one fault
each, for the writer conformance tests to catch at the right step.

Each is a driver object (``versions``, ``describe``, ``read_table``,
``UNREPORTED``, ``write``; no ``info()``, so every operation is tried) so a run takes it as
``run_writer_conformance(name, driver=...)``. The module itself is the
drop-the-deletion driver, so ``--driver tests.conformance.writer_conformance.faulty_writers``
names it on the command line.
"""

from __future__ import annotations

from pathlib import Path

from conformance.drivers import reference, writes
from conformance.mutations.edit import edit_manifest

UNREPORTED = reference.UNREPORTED
versions = reference.versions
describe = reference.describe
read_table = reference.read_table


class _Faulty:
    UNREPORTED = reference.UNREPORTED

    def versions(self, uri):
        return reference.versions(uri)

    def describe(self, uri, version=None):
        return reference.describe(uri, version)

    def read_table(self, uri, version=None):
        return reference.read_table(uri, version)

    def write(self, uri, op, *, storage_options=None) -> int:
        return reference.write(uri, op, storage_options=storage_options)


class DropsDeletions(_Faulty):
    """Commits a version for a delete, but deletes nothing (it sets a config
    key instead): the version's rows are wrong, its manifest is valid."""

    def write(self, uri, op, *, storage_options=None) -> int:
        if isinstance(op, writes.Delete) and isinstance(op.where, writes.Compare):
            op = writes.Config((("faulty.dropped-delete", op.where.to_sql()),))
        return super().write(uri, op, storage_options=storage_options)


class MisnamesItsTransaction(_Faulty):
    """Appends correctly, then names the transaction file in that version's
    manifest ``append.txn`` (transaction.file-name-format): the rows are
    right, the manifest breaks a requirement the validator checks. Later
    commits are built on the latest version and never read that transaction,
    so the fault stays in one version."""

    def write(self, uri, op, *, storage_options=None) -> int:
        version = writes.write_result(super().write(uri, op, storage_options=storage_options)).version
        if isinstance(op, writes.Append):

            def edit(manifest_file):
                manifest_file.manifest.transaction_file = "append.txn"

            edit_manifest(Path(uri), edit, version)
        return version


class LiesAboutItsVersion(_Faulty):
    """Returns the version before the one an update committed."""

    def write(self, uri, op, *, storage_options=None) -> int:
        version = writes.write_result(super().write(uri, op, storage_options=storage_options)).version
        assert version is not None
        return version - 1 if isinstance(op, writes.Update) else version


class CrashesOnCompaction(_Faulty):
    """Raises from compaction, as an implementation's bug would."""

    def write(self, uri, op, *, storage_options=None) -> int:
        if isinstance(op, writes.Compact):
            raise RuntimeError("compaction exploded")
        return super().write(uri, op, storage_options=storage_options)


_DROPS = DropsDeletions()


def write(uri, op, *, storage_options=None) -> int:
    return _DROPS.write(uri, op, storage_options=storage_options)


class LatestOnlyReader:
    """The reference reader declaring no time travel and no version listing:
    it reads the latest version only (asked for an older one it refuses, as
    such a reader would)."""

    UNREPORTED = reference.UNREPORTED

    def info(self):
        from dataclasses import replace

        from conformance.drivers.protocol import Capability

        declared = reference.info()
        return replace(
            declared,
            name="latest-only",
            capabilities=declared.capabilities
            - {
                Capability.TIME_TRAVEL,
                Capability.LIST_VERSIONS,
                Capability.WRITE,
                Capability.WRITE_AT_VERSION,
                Capability.QUERY,
            },
            write_operations=frozenset(),
            query_kinds=frozenset(),
        )

    def versions(self, uri):
        raise ValueError("this reader cannot list versions")

    def describe(self, uri, version=None):
        if version is not None:
            raise ValueError("this reader reads the latest version only")
        return reference.describe(uri)

    def read_table(self, uri, version=None, *, schema=None):
        if version is not None:
            raise ValueError("this reader reads the latest version only")
        return reference.read_table(uri)


class AddsUnderAnotherName(_Faulty):
    """Adds a requested column under another name, and lets an alteration of
    a column that is not there pass silently (committing a config change):
    the script's later steps meet a table it did not shape."""

    def write(self, uri, op, *, storage_options=None) -> int:
        if isinstance(op, writes.AddColumns):
            op = writes.AddColumns(tuple(writes.NewColumn("misnamed", c.source, c.offset) for c in op.columns))
        elif isinstance(op, writes.AlterColumns):
            present = {field["name"] for field in reference.describe(uri)["schema"]}
            if any(alteration.path not in present for alteration in op.alterations):
                op = writes.Config((("faulty.ignored-alteration", "yes"),))
        return super().write(uri, op, storage_options=storage_options)
