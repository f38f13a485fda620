"""The text of an attempt's error as the history keeps it: whole when short,
else its head and its tail with a marker of what was cut between them.

An engine's error is often long: a Ray task's or a Spark task's failure
carries the worker's whole traceback, and a Rust panic its backtrace. Its
opening says where the call started, its end says what went wrong (the cause
comes last), so both ends are kept and the middle goes; the tail gets the
larger share.
"""

from __future__ import annotations

#: Characters of an error kept in the history (the marker included).
MAX_ERROR_CHARS = 2000
#: The share of the kept characters given to the head (the rest is the tail's).
HEAD_SHARE = 0.3


def cut_marker(cut: int) -> str:
    """What stands in the kept text where ``cut`` characters were left out."""
    return f"\n[... {cut} characters cut ...]\n"


def error_text(error: BaseException | str, limit: int = MAX_ERROR_CHARS) -> str:
    """``error`` as text of at most ``limit`` characters: an exception as
    ``TypeName: message``; a longer text keeps its first and last parts,
    joined by :func:`cut_marker` naming how many characters were cut."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    if len(text) <= limit:
        return text
    # The marker's length depends on the count it names; the count is at most len(text).
    room = limit - len(cut_marker(len(text)))
    if room < 2:  # a limit too small for a marker: the tail alone says the most
        return text[-limit:]
    head = int(room * HEAD_SHARE)
    tail = room - head
    cut = len(text) - head - tail
    return text[:head] + cut_marker(cut) + text[len(text) - tail :]
