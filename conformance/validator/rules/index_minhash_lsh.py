"""Rules on the contents of MINHASH_LSH index segments (upstream
format/index/scalar/minhash_lsh.md), checked against the rows of the
fragments each segment covers.

The declarations stay light: a version without a MINHASH_LSH segment
imports nothing heavy; the bodies, which need numpy and pyarrow, are
:mod:`..index_checks.minhash_lsh`, imported when a version has such a
segment. The files are checked whole; the rows in a default run's sample,
all of them with ``--deep``, and ``index-minhash-lsh/sampled`` says what
went unchecked.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule


@rule(
    "index-minhash-lsh/file",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-files",),
    summary="A MINHASH_LSH segment's signatures.lance and bands.lance hold the schemas, schema metadata, details "
    "and page table minhash_lsh.md gives",
)
def files_decode(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).file_problems(view)


@rule(
    "index-minhash-lsh/bands-sorted",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-bands-sorted",),
    summary="The rows of bands.lance are sorted by band_key, then doc_id, each pair once",
)
def bands_sorted(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).order_problems(view)


@rule(
    "index-minhash-lsh/page-table",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-page-table",),
    summary="Each entry of bands.lance's page table is the band key of its page's last row",
)
def page_table(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).page_table_problems(view)


@rule(
    "index-minhash-lsh/band-keys",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-band-keys",),
    summary="Each document has one bands.lance row per band, keyed by that band's key of its stored signature",
)
def band_keys(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).band_key_problems(view)


@rule(
    "index-minhash-lsh/rows-indexed",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-rows-indexed",),
    summary="Every covered row with tokens is one document of its MINHASH_LSH segment (a deleted row at most one), "
    "and no document names a row without tokens",
)
def rows_indexed(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).row_problems(view)


@rule(
    "index-minhash-lsh/signatures",
    severity=Severity.ERROR,
    requirements=("index.minhash-lsh-signatures",),
    summary="Each stored signature is the signature procedure's for its row's text, with the recorded parameters",
)
def signatures(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).signature_problems(view)


@rule(
    "index-minhash-lsh/sampled",
    severity=Severity.INFO,
    requirements=("index.minhash-lsh-rows-indexed", "index.minhash-lsh-signatures"),
    summary="A MINHASH_LSH segment whose rows or signatures were checked only in part: a default run's sample, "
    "a deferred remap, a tokenizer or text the reference does not tokenize",
)
def sampled(view: VersionView):
    return checks(view, IndexType.MINHASH_LSH).unchecked_notes(view)
