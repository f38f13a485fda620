"""Start moto's S3 server for the object-store benchmark, with one per-request
cost of moto's own taken out (``python -m benchmarks.moto_launcher -H HOST -p PORT``).

moto's server picks the service of every request by asking whether the
request's host names one of its service packages, and it answers that by
listing and stat-ing its own package directory (``list_of_moto_modules``:
about 180 entries) twice per request. Profiled under the benchmark's load
that is about 40% of the server's CPU, and on two cores the server is what
bounds the parallel run (docs/reference-implementation.md, "On an object store"). The listing
cannot change while the server runs, so this launcher computes it once;
every S3 request and answer is still moto's own, unchanged.

``LANCE_CONFORMANCE_BENCH_STOCK_MOTO=1`` makes the benchmark start the
stock ``moto_server`` instead, for comparison.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    import moto.backends
    from moto import server

    modules = frozenset(moto.backends.list_of_moto_modules())
    moto.backends.list_of_moto_modules = lambda: modules  # type: ignore[assignment]
    server.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
