"""Which file versions a version's data files record (table format: data
files, ``file_major_version``/``file_minor_version``), counted once per
version for the rules on file versions: one file version for the whole
version, and how legacy files are recorded."""

from __future__ import annotations

from collections import Counter
from itertools import chain

from reference_impl.fragments import Fragment, format_version_of

from ..context import VersionView
from .fragment_checks import per_fragment


def _recorded_versions(fragment: Fragment) -> tuple[tuple[int, int], ...]:
    # Runs for every fragment; most have one data file, answered without
    # building a comprehension (which costs more than the answer).
    files = fragment.files
    if len(files) == 1:
        return ((files[0].file_major_version, files[0].file_minor_version),)
    return tuple([(d.file_major_version, d.file_minor_version) for d in files])


def format_version_counts(view: VersionView) -> Counter[tuple[int, int]]:
    """How many of the version's data files record each file version, by the
    version each record means (``DataFile.format_version``: a 2.0 file
    recorded as 0.3, its trailer's number, counts as 2.0; a legacy record
    keeps its own 0.x). The recorded pairs are counted first, and each
    distinct pair read as a version once; each fragment's pairs are listed
    once per run (facts/fragment_checks.py)."""

    def count() -> Counter[tuple[int, int]]:
        recorded = Counter(chain.from_iterable(per_fragment(view, "file_versions.recorded", _recorded_versions)))
        counts: Counter[tuple[int, int]] = Counter()
        for (major, minor), n in recorded.items():
            counts[format_version_of(major, minor)] += n
        return counts

    return view.memo("file_versions.counts", count)
