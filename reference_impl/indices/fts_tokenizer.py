"""The tokens an INVERTED index holds for a text value, for the tokenizer
settings upstream format/index/scalar/fts.md defines exactly ("Base
Tokenizers", "Token Filters"): the ``simple`` and ``whitespace`` base
tokenizers, with lower-casing, the length limit and ASCII folding, and
without stemming or stop words (the Snowball stemmers and stop word lists
are not in the page). Values are tokenized here only when they are ASCII
text, where lower-casing and folding mean the same in every implementation.

* ``simple`` splits on every character that is not a letter or digit;
* ``whitespace`` splits on ASCII whitespace (space, tab, line feed, form
  feed, carriage return);
* a token of ``max_token_length`` bytes or more is removed (pylance 14; the
  page says "longer than", docs/spec-discrepancies.md);
* positions count the base tokenizer's tokens, removed ones included.
"""

from __future__ import annotations

import re

from .inverted import TokenizerParams

_SIMPLE = re.compile(r"[A-Za-z0-9]+")
_WHITESPACE = re.compile(r"[^ \t\n\x0c\r]+")
_BASE = {"simple": _SIMPLE, "whitespace": _WHITESPACE}


def defined_exactly(params: TokenizerParams) -> str | None:
    """None when :func:`tokens` applies to values indexed with ``params``;
    else why not (for the validator's note on what went unchecked)."""
    if params.lance_tokenizer not in (None, "text"):
        return f"documents of kind {params.lance_tokenizer!r}"
    if params.base_tokenizer not in _BASE:
        return f"the base tokenizer {params.base_tokenizer!r}"
    if params.stem:
        return f"stemming ({params.language})"
    if params.remove_stop_words:
        return f"stop word removal ({params.language})"
    return None


def tokens(params: TokenizerParams, value: str) -> list[tuple[str, int]] | None:
    """The (token, position) pairs of ``value`` in order, or None when the
    value is not ASCII (not checked). ``params`` must be defined exactly."""
    if not value.isascii():
        return None
    out = []
    for position, match in enumerate(_BASE[params.base_tokenizer].finditer(value)):
        token = match.group(0)
        if params.max_token_length is not None and len(token) >= params.max_token_length:
            continue
        out.append((token.lower() if params.lower_case else token, position))
    return out
