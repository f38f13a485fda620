"""What the validator's fragment key costs
(``python -m benchmarks.fragment_keys [VERSIONS]``).

A validation decodes each fragment once per run, keyed by its message less
its id (:func:`conformance.validator.context._without_id`: the message
copied, its id cleared, serialized). This times that key for every fragment
message of every manifest of the many-version dataset of
:mod:`benchmarks.reader` (211 versions by default: 22,577 messages), median
of 7 passes.
"""

from __future__ import annotations

import statistics
import sys
import time

from conformance.validator.context import DatasetView, _without_id
from reference_impl.fragments import Fragment
from reference_impl.manifest_file import read_manifest_file
from reference_impl.storage import open_storage, parse_dataset_uri

from .reader import _many_versions


def main(argv: list[str]) -> int:
    path = _many_versions(int(argv[0]) if argv else 211)
    storage = open_storage(parse_dataset_uri(str(path)), None, writable=False)
    messages = []

    def keep(message) -> Fragment:
        messages.append(message)
        return Fragment.from_proto(message)

    for relpath in DatasetView(storage).manifest_paths().values():
        read_manifest_file(storage, relpath, keep)
    passes = []
    for _ in range(7):
        start = time.perf_counter()
        for message in messages:
            _without_id(message)
        passes.append(time.perf_counter() - start)
    seconds = statistics.median(passes)
    print(f"{len(messages):,} fragment messages: {seconds * 1e3:.1f} ms, {seconds / len(messages) * 1e6:.2f} µs each")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
