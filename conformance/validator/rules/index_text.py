"""Rules on the contents of text index segments: INVERTED (full-text search),
NGRAM and JSON (upstream format/index/scalar/fts.md, ngram.md, json.md; the
layouts pylance 14 writes are in reference_impl/indices/inverted.py,
ngram.py and json_index.py).

Structure is checked whole: the files decode, token ids are dense, posting
lists are ascending within their partition's documents, document lengths
agree with the postings, stored rows lie in the segment's fragments. The
contents are compared with the covered rows (facts/index_contents.py) where
the page defines the tokens exactly: NGRAM's trigrams, INVERTED's ``simple``
and ``whitespace`` tokenizers without stemming or stop words, for ASCII
values; a JSON segment's target keys against the value at its path. Rows
deleted by the version are not compared (a segment keeps rows deleted after
it was built; index.md, "Handling deleted and invalidated rows"). What a
default run or the page leaves unchecked, each topic's ``unchecked`` info
rule says.

The rule bodies are :mod:`..index_checks.text`, loaded only for a version
with an INVERTED, NGRAM or JSON segment.
"""

from __future__ import annotations

from reference_impl.indices.types import IndexType

from ..context import VersionView
from ..index_checks import checks
from ..registry import Severity, rule

_FILES = ("index.inverted-files",)
_CONTENTS = ("index.inverted-postings-match-rows",)


@rule(
    "index-inverted/decodes",
    severity=Severity.ERROR,
    requirements=_FILES,
    summary="An INVERTED segment's metadata, token, document and posting files hold what fts.md lists",
)
def inverted_decodes(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_decodes(view)


@rule(
    "index-inverted/token-set",
    severity=Severity.ERROR,
    requirements=("index.inverted-token-set",),
    summary="Each partition's token set maps its tokens to the dense ids 0..n-1 of the posting file's rows, "
    "with an intact checksum and true counts",
)
def inverted_token_set(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_token_set(view)


@rule(
    "index-inverted/postings",
    severity=Severity.ERROR,
    requirements=("index.inverted-postings",),
    summary="Every posting list names documents of its partition in ascending order with positive frequencies, "
    "its best block score as _max_score and one position per occurrence",
)
def inverted_postings(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_postings(view)


@rule(
    "index-inverted/doc-lengths",
    severity=Severity.ERROR,
    requirements=("index.inverted-doc-lengths",),
    summary="Each document's _num_tokens is the sum of its frequencies, total_tokens their sum, and no row is "
    "two documents",
)
def inverted_doc_lengths(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_doc_lengths(view)


@rule(
    "index-inverted/rows-covered",
    severity=Severity.ERROR,
    requirements=("index.inverted-rows-covered",),
    summary="An INVERTED segment's documents are rows of the fragments its bitmap names",
)
def inverted_rows_covered(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_rows_covered(view)


@rule(
    "index-inverted/postings-match-rows",
    severity=Severity.ERROR,
    requirements=_CONTENTS,
    summary="Where fts.md defines the tokenizer exactly, each covered row's tokens (and positions) are what the "
    "recorded tokenizer gives its value",
)
def inverted_postings_match_rows(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_postings_match_rows(view)


@rule(
    "index-inverted/unchecked",
    severity=Severity.INFO,
    requirements=_CONTENTS,
    summary="What the INVERTED rules left unchecked: segments not read, tokenizers fts.md does not define "
    "exactly, values not ASCII, fragments past a default run's sample (the _impacts skip data and the BM25 "
    "values of block scores are never checked)",
)
def inverted_unchecked(view: VersionView):
    return checks(view, IndexType.INVERTED).inverted_unchecked(view)


@rule(
    "index-ngram/decodes",
    severity=Severity.ERROR,
    requirements=("index.ngram-file",),
    summary="An NGRAM segment's ngram_postings.lance holds u32 tokens and decodable RoaringTreemap posting lists",
)
def ngram_decodes(view: VersionView):
    return checks(view, IndexType.NGRAM).ngram_decodes(view)


@rule(
    "index-ngram/tokens",
    severity=Severity.ERROR,
    requirements=("index.ngram-tokens",),
    summary="Each NGRAM token appears once, ascending, and stands for a trigram of ASCII letters and digits "
    "(or for null values)",
)
def ngram_tokens(view: VersionView):
    return checks(view, IndexType.NGRAM).ngram_tokens(view)


@rule(
    "index-ngram/rows-covered",
    severity=Severity.ERROR,
    requirements=("index.ngram-rows-covered",),
    summary="The rows of an NGRAM segment's posting lists are rows of the fragments its bitmap names",
)
def ngram_rows_covered(view: VersionView):
    return checks(view, IndexType.NGRAM).ngram_rows_covered(view)


@rule(
    "index-ngram/postings-match-rows",
    severity=Severity.ERROR,
    requirements=("index.ngram-postings-match-rows",),
    summary="Each covered row is in the posting lists of exactly its value's trigrams (null values under the "
    "null token)",
)
def ngram_postings_match_rows(view: VersionView):
    return checks(view, IndexType.NGRAM).ngram_postings_match_rows(view)


@rule(
    "index-ngram/unchecked",
    severity=Severity.INFO,
    requirements=("index.ngram-postings-match-rows",),
    summary="What the NGRAM rules left unchecked: segments not read, values not ASCII, fragments past a default "
    "run's sample",
)
def ngram_unchecked(view: VersionView):
    return checks(view, IndexType.NGRAM).ngram_unchecked(view)


@rule(
    "index-json/details",
    severity=Severity.ERROR,
    requirements=("index.json-details",),
    summary="A JSON segment's details decode to a path and the details of a target of a known scalar index type",
)
def json_details(view: VersionView):
    return checks(view, IndexType.JSON).json_details(view)


@rule(
    "index-json/target-matches-rows",
    severity=Severity.ERROR,
    requirements=("index.json-target-matches-rows",),
    summary="A JSON segment's BTREE or BITMAP target holds each covered row under the value its document has at "
    "the path",
)
def json_target_matches_rows(view: VersionView):
    return checks(view, IndexType.JSON).json_target_matches_rows(view)


@rule(
    "index-json/unchecked",
    severity=Severity.INFO,
    requirements=("index.json-target-matches-rows",),
    summary="What the JSON rules left unchecked: targets other than BTREE and BITMAP, paths with array steps, "
    "fragments past a default run's sample",
)
def json_unchecked(view: VersionView):
    return checks(view, IndexType.JSON).json_unchecked(view)
