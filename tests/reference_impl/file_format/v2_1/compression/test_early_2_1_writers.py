"""2.1 files from a pylance release of the time before 2.1 was stable
(0.33.0, which warns that 2.1 is unstable), with general compression and
FSST chosen by field metadata: the reference reads them row for row, equal to
what pylance 14 reads (encoding.md, "Compression"; the earlier frame of
variable-width blocks is item 16 of the 2.1/2.2 section of
docs/spec-discrepancies.md).
"""

from __future__ import annotations

import subprocess

import pytest
from lance.file import LanceFileReader as PylanceReader

from reference_impl.file_format import LanceFileReader
from reference_impl.storage import LocalStorage
from tests.reference_impl.file_format.v2_1.compression.test_pylance_schemes import file_schemes

EARLY_RELEASE = "0.33.0"

# Run by the old release's interpreter: one file per column.
WRITER = """
import sys
import numpy as np
import pyarrow as pa
from lance.file import LanceFileWriter

out, n = sys.argv[1], 3000
rng = np.random.default_rng(7)
words = ["north", "south", "east", "west"]
columns = {
    "zstd_ints": (pa.array(rng.integers(0, 2**40, n)), "zstd"),
    "lz4_ints": (pa.array(rng.integers(0, 2**40, n)), "lz4"),
    "zstd_strings": (pa.array([words[i % 4] + str(i) * 3 for i in range(n)]), "zstd"),
    "fsst_strings": (pa.array([words[i % 4] + " " + words[i * 7 % 4] + str(i) for i in range(n)]), "fsst"),
    "dictionary_of_blobs": (
        pa.array([rng.bytes(4000) for _ in range(10)] + [None] * (n - 10), pa.binary()),
        "zstd",
    ),
}
for name, (array, scheme) in columns.items():
    field = pa.field(name, array.type, metadata={"lance-encoding:compression": scheme})
    with LanceFileWriter(f"{out}/{name}.lance", pa.schema([field]), version="2.1") as writer:
        writer.write_batch(pa.table([array], schema=pa.schema([field])))
"""


@pytest.fixture(scope="module")
def early_files(tmp_path_factory):
    from conformance.peers import old_pylance

    try:
        python = old_pylance.ensure_venv(EARLY_RELEASE)
    except old_pylance.PeerUnavailableError as exc:
        pytest.fail(f"cannot install pylance {EARLY_RELEASE}: {exc}", pytrace=False)
    out = tmp_path_factory.mktemp("early-2-1")
    subprocess.run([str(python), "-c", WRITER, str(out)], check=True, capture_output=True, timeout=300)
    return out


@pytest.mark.old_pylance(EARLY_RELEASE)
@pytest.mark.parametrize(
    "name, schemes",
    [
        ("zstd_ints", {"general", "buffer:ZSTD"}),
        ("lz4_ints", {"general", "buffer:LZ4"}),
        ("zstd_strings", {"general", "buffer:ZSTD"}),
        ("fsst_strings", {"fsst"}),
        ("dictionary_of_blobs", {"general", "variable"}),
    ],
)
def test_early_2_1_files_read_row_for_row(early_files, name, schemes):
    found = file_schemes(early_files, f"{name}.lance")
    assert schemes <= found, sorted(found)
    expected = PylanceReader(str(early_files / f"{name}.lance")).read_all().to_table()
    actual = LanceFileReader(LocalStorage(early_files), f"{name}.lance").read(arrow_schema=expected.schema)
    assert actual.to_pylist() == expected.to_pylist()
