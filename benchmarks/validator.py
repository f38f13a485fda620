"""Validator benchmarks (issue: spec validator).

* ``validate --all-versions`` of a 211-version dataset, against pylance
  opening every version with ``validate()`` and ``count_rows()``;
* ``validate`` (latest version) of a dataset with 10,000 fragments, against
  pylance opening it with ``validate()`` and ``count_rows()``.

The goal: faster than pylance while checking far more (pylance's
``validate()`` checks little).
"""

from __future__ import annotations

from conformance.validator import validate

from .common import Measurement, best_of
from .reader import _many_fragments, _many_versions


def bench_validate_every_version(versions: int = 211, repeats: int = 3) -> Measurement:
    import lance

    path = _many_versions(versions)

    def with_pylance():
        for version in range(1, versions + 1):
            dataset = lance.dataset(path, version=version)
            dataset.validate()
            dataset.count_rows()

    report = validate(path, all_versions=True)
    return Measurement(
        f"validate --all-versions, {versions} versions",
        best_of(repeats, lambda: validate(path, all_versions=True)),
        best_of(repeats, with_pylance),
        f"{len(report.rules)} rules, {len(report.findings)} findings; pylance: validate() and count_rows() per version",
    )


def bench_validate_many_fragments(fragments: int = 10_000, repeats: int = 3) -> Measurement:
    import lance

    path = _many_fragments(fragments)

    def with_pylance():
        dataset = lance.dataset(path)
        dataset.validate()
        dataset.count_rows()

    report = validate(path)
    default = best_of(repeats, lambda: validate(path))  # one thread on a local disk (context.LOCAL_IO_THREADS)
    threaded = best_of(repeats, lambda: validate(path, io_threads=4))
    return Measurement(
        f"validate latest, {fragments} fragments",
        default,
        best_of(repeats, with_pylance),
        f"{len(report.rules)} rules, {len(report.findings)} findings; pylance: validate() and count_rows(); "
        f"reference, io_threads=4: {threaded:.3f} s",
    )


BENCHMARKS = [bench_validate_every_version, bench_validate_many_fragments]
