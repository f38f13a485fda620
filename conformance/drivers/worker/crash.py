"""What a crashed worker left behind, said so that the cause survives: its
end (exit status or signal) and the lines of its stderr that name the cause.

A panic's message is not the last line of stderr: Rust prints
``thread 'main' panicked at src/lib.rs:1:1:``, the message, then notes
(``note: run with `RUST_BACKTRACE=1` ...``, or a backtrace ending with
``note: Some details are omitted``); Python prints a traceback whose last
line is the exception. So the excerpt keeps the stderr from the first line
that starts a cause (:data:`CAUSE_STARTS`) onward, bounded to its head and
tail, and the summary is the line that says what went wrong.

Standard library only: the protocol check and the client use it, and the
client quotes workers written in any language.
"""

from __future__ import annotations

import re
import signal

#: Lines that start the account of a crash: a Rust panic (current and older
#: formats), a Python traceback or fatal error, a C++ exception escaping.
CAUSE_STARTS = re.compile(
    r"^(thread '[^']*' panicked at"
    r"|Traceback \(most recent call last\):"
    r"|Fatal Python error:"
    r"|terminate called)"
)
#: The most lines an excerpt keeps: its head and its tail around an elision.
EXCERPT_HEAD_LINES = 30
EXCERPT_TAIL_LINES = 20
#: The most characters of one quoted line.
LINE_CHARS = 500

#: Signals named by what they mean to someone reading a crash report.
SIGNAL_WORDS: dict[int, str] = {
    signal.SIGABRT: "aborted",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGFPE: "arithmetic fault",
    signal.SIGILL: "illegal instruction",
}


def describe_exit(returncode: int | None) -> str:
    """``aborted (signal 6)``, ``killed by signal SIGTERM (15)``,
    ``exited with status 101``, ``still running``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        number = -returncode
        if number in SIGNAL_WORDS:
            return f"{SIGNAL_WORDS[number]} (signal {number})"
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "an unknown signal"
        return f"killed by signal {name} ({number})"
    return f"exited with status {returncode}"


def _bounded(lines: list[str]) -> list[str]:
    lines = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " ..." for line in lines]
    if len(lines) <= EXCERPT_HEAD_LINES + EXCERPT_TAIL_LINES:
        return lines
    omitted = len(lines) - EXCERPT_HEAD_LINES - EXCERPT_TAIL_LINES
    return [*lines[:EXCERPT_HEAD_LINES], f"... ({omitted} lines omitted)", *lines[-EXCERPT_TAIL_LINES:]]


def crash_excerpt(stderr: str) -> list[str]:
    """The lines of ``stderr`` worth quoting: from the first line that
    starts a cause onward, else its last lines; bounded either way."""
    lines = stderr.rstrip().splitlines()
    start = next((i for i, line in enumerate(lines) if CAUSE_STARTS.match(line)), None)
    if start is None:
        return _bounded(lines[-EXCERPT_TAIL_LINES:])
    return _bounded(lines[start:])


def crash_cause(excerpt: list[str]) -> str:
    """The one line that says what went wrong: a Rust panic's location and
    message, a Python exception's last line, a fatal error; else the last line."""
    if not excerpt:
        return ""
    first = excerpt[0]
    if first.startswith("thread '"):
        # Rust >= 1.73 puts the message on the lines after "panicked at FILE:LINE:COL:".
        if first.endswith(":") and len(excerpt) > 1:
            return f"{first} {excerpt[1].strip()}"
        return first
    if first.startswith("Traceback"):
        # The exception is the first line after the frames (which are indented).
        exception = (line for line in excerpt[1:] if line and not line[0].isspace() and not line.startswith("... ("))
        return next(exception, excerpt[-1])
    if CAUSE_STARTS.match(first):
        return first
    return excerpt[-1]
