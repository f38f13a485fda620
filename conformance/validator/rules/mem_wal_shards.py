"""Rules on the shard directories of a MemWAL, as the newest MemWAL page lays
them out (``mem_wal.md`` read 2026-11-29, "Storage Layout", "WAL Storage
Layout", "Shard Manifest Versioning", "SSTable Storage Layout").

Each shard lives in ``_mem_wal/{shard_id}/`` (a version-4 UUID) and holds:

* ``wal/{p}.arrow``: WAL entry ``p`` (from 1), its name ``p`` as 64 binary
  digits, least significant bit first (position 5 is ``1010`` then sixty
  zeros), which spreads consecutive entries over an object store's keys;
* ``manifest/{v}.binpb``: shard manifest version ``v`` (from 1), named the
  same way, beside ``version_hint.json``; each is a ``ShardManifest``
  whose ``version`` and ``shard_id`` match its name and directory
  (decoded with the region model's ``RegionManifest``, which has the same
  field numbers);
* ``{random8}_gen_{i}/``: the SSTable of generation ``i`` (from 1), eight
  hexadecimal digits before ``_gen_``.

pylance 14's ``mem_wal_writer`` writes exactly this layout (the
``mem_wal_shards`` mutation base). Other entries of a shard directory are not
judged; the page does not say whether WAL entries below the oldest kept one
may be gone (garbage collection), so gaps are not reported either.
"""

from __future__ import annotations

import re
import uuid as uuid_module

from google.protobuf.message import DecodeError

from reference_impl.errors import LanceFormatError
from reference_impl.wire import table_pb2

from ..context import DatasetView
from ..facts.text import listed, printable
from ..registry import Scope, Severity, rule

MEM_WAL_DIR = "_mem_wal"
WAL_ENTRY = re.compile(r"^([01]{64})\.arrow$")
MANIFEST = re.compile(r"^([01]{64})\.binpb$")
VERSION_HINT = "version_hint.json"
SSTABLE_DIR = re.compile(r"^[0-9a-f]{8}_gen_(\d+)$")
#: Bounds on what one run reads: shards, names per directory, manifests decoded.
MAX_SHARDS = 256
MAX_NAMES = 4096
MAX_MANIFESTS = 64
MAX_MANIFEST_BYTES = 1 << 20

LAYOUT_REQUIREMENTS = (
    "mem-wal.shard-id-uuid-v4",
    "mem-wal.wal-entry-names-bit-reversed",
    "mem-wal.shard-manifest-version-in-name",
    "mem-wal.sstable-generations",
)


def bit_reversed_name(number: int) -> str:
    """``number`` as the page names WAL entries and shard manifests."""
    return format(number, "064b")[::-1]


def from_bit_reversed(digits: str) -> int:
    return int(digits[::-1], 2)


def _shard_uuid(name: str) -> uuid_module.UUID | None:
    try:
        parsed = uuid_module.UUID(name)
    except ValueError:
        return None
    return parsed if str(parsed) == name.lower() else None


def _names(dataset: DatasetView, relpath: str) -> list[str]:
    return [n for n in dataset.storage.list_dir(relpath) if not n.startswith(".")][:MAX_NAMES]


def _manifest_problem(dataset: DatasetView, relpath: str, version: int, shard: uuid_module.UUID) -> str | None:
    try:
        if dataset.storage.size(relpath) > MAX_MANIFEST_BYTES:
            return None  # larger than this validator decodes
        data = dataset.storage.read(relpath)
    except LanceFormatError as exc:
        return f"cannot be read: {exc}"
    message = table_pb2.RegionManifest()
    try:
        message.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        return f"does not decode as a ShardManifest: {exc}"
    if message.version != version:
        return f"holds version {message.version}, but its name says {version}"
    recorded = bytes(message.region_id.uuid)
    if message.HasField("region_id") and recorded != shard.bytes:
        shown = str(uuid_module.UUID(bytes=recorded)) if len(recorded) == 16 else recorded.hex()
        return f"names shard {shown}, but lies in the directory of shard {shard}"
    return None


def _shard_findings(dataset: DatasetView, name: str):
    base = f"{MEM_WAL_DIR}/{name}"
    shard = _shard_uuid(name)
    if shard is None or shard.version != 4:
        what = "no UUID" if shard is None else f"a version-{shard.version} UUID"
        yield (
            f"MemWAL shard directory '{printable(name)}' is named by {what}; shards are named by version-4 UUIDs",
            base,
        )
        return
    entries = _names(dataset, base)
    wal = _names(dataset, f"{base}/wal") if "wal" in entries else []
    misnamed = [n for n in wal if not WAL_ENTRY.match(n)]
    at_zero = [n for n in wal if WAL_ENTRY.match(n) and from_bit_reversed(n[:64]) == 0]
    if misnamed or at_zero:
        yield (
            f"shard {shard}: WAL entries must be named by their position (from 1), bit-reversed as 64 binary "
            f"digits, with .arrow: {listed(map(printable, misnamed + at_zero))}",
            f"{base}/wal",
        )
    manifests = _names(dataset, f"{base}/manifest") if "manifest" in entries else []
    misnamed = [n for n in manifests if n != VERSION_HINT and not MANIFEST.match(n)]
    versions = sorted(from_bit_reversed(n[:64]) for n in manifests if MANIFEST.match(n))
    if misnamed or (versions and versions[0] == 0):
        shown = misnamed + ([bit_reversed_name(0) + ".binpb"] if versions and versions[0] == 0 else [])
        yield (
            f"shard {shard}: manifests must be named by their version (from 1), bit-reversed as 64 binary "
            f"digits, with .binpb: {listed(map(printable, shown))}",
            f"{base}/manifest",
        )
    for version in [v for v in versions if v > 0][-MAX_MANIFESTS:]:
        relpath = f"{base}/manifest/{bit_reversed_name(version)}.binpb"
        problem = _manifest_problem(dataset, relpath, version, shard)
        if problem:
            yield f"shard {shard}: manifest version {version} {problem}", relpath
    for entry in entries:
        match = re.match(r"^.*_gen_(\d+)$", entry)
        if match and (not SSTABLE_DIR.match(entry) or int(match.group(1)) == 0):
            yield (
                f"shard {shard}: SSTable directory '{printable(entry)}' is not named {{8 hex digits}}_gen_"
                "{generation}, generations counting from 1",
                f"{base}/{entry}",
            )


@rule(
    "mem-wal/shard-layout",
    severity=Severity.ERROR,
    requirements=LAYOUT_REQUIREMENTS,
    summary="MemWAL shard directories: a version-4 UUID each, bit-reversed WAL entry and manifest names from 1, "
    "manifests whose version and shard match their names, SSTable directories {random8}_gen_{i}",
    scope=Scope.DATASET,
)
def shard_layout(dataset: DatasetView):
    for name in _names(dataset, MEM_WAL_DIR)[:MAX_SHARDS]:
        yield from _shard_findings(dataset, name)
