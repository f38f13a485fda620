"""An attempt's error as the history keeps it (conformance/harness/errors.py):
short errors whole, long ones with their head and their tail."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from conformance.harness.errors import MAX_ERROR_CHARS, error_text

_MARKER = re.compile(r"\n\[\.\.\. (\d+) characters cut \.\.\.\]\n")


@given(st.text(), st.integers(min_value=1, max_value=3000))
def test_the_kept_text_fits_the_limit_and_is_the_texts_two_ends(text, limit):
    """Property: at most ``limit`` characters; a text that fits is kept
    whole; a longer one is a prefix of it, a marker naming how many
    characters were cut, and a suffix of it, the three adding up to the
    whole (or, under a limit too small for a marker, its last characters)."""
    kept = error_text(text, limit)
    assert len(kept) <= limit
    if len(text) <= limit:
        assert kept == text
        return
    marker = _MARKER.search(kept)
    if marker is None:
        assert kept == text[-limit:]
        return
    head, tail, cut = kept[: marker.start()], kept[marker.end() :], int(marker.group(1))
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + cut + len(tail) == len(text)
    assert len(tail) >= len(head)  # the cause comes last: the tail gets the larger share


def test_a_long_traceback_keeps_its_opening_and_its_cause():
    frames = "".join(f'  File "worker.py", line {n}, in step_{n}\n    step_{n + 1}()\n' for n in range(400))
    failure = RuntimeError("Traceback (most recent call last):\n" + frames + "ValueError: the real cause")
    kept = error_text(failure)
    assert len(kept) <= MAX_ERROR_CHARS < len(str(failure))
    assert kept.startswith("RuntimeError: Traceback (most recent call last):")
    assert kept.endswith("ValueError: the real cause")
    assert _MARKER.search(kept) is not None


def test_an_exception_is_named_by_its_type():
    assert error_text(KeyError("id")) == "KeyError: 'id'"
    assert error_text("plain text") == "plain text"
