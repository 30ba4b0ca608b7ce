"""In JSON and RPC mode stdout belongs to the protocol.

A plugin's ``print()`` (or a library's) must never land in the event stream. So before a protocol
mode starts, file descriptor 1 is duplicated for the protocol's own use, and descriptor 1 and
``sys.stdout`` are pointed at stderr: stray writes, from Python or from C, go to stderr from then
on. Only the protocol writer holds the real stdout.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

_taken: int | None = None
_text: TextIO | None = None


def take_over_stdout() -> int:
    """A private descriptor for the real stdout; fd 1 and ``sys.stdout`` now point at stderr.

    Calling it again returns the same descriptor (the first call did the work).
    """
    global _taken
    if _taken is None:
        sys.stdout.flush()
        _taken = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    return _taken


def protocol_text_stdout() -> TextIO:
    """The real stdout as a line-buffered UTF-8 text stream (for the JSON event stream)."""
    global _text
    if _text is None:
        _text = open(take_over_stdout(), "w", encoding="utf-8", errors="surrogateescape",  # noqa: SIM115
                     buffering=1, closefd=False)
    return _text


def release_stdout() -> None:
    """Close the protocol's stdout (the reader sees end of output); fd 1 stays pointed at stderr."""
    global _taken, _text
    if _text is not None:
        try:
            _text.flush()
        except (OSError, ValueError):
            pass
        _text = None
    if _taken is not None:
        try:
            os.close(_taken)
        except OSError:
            pass
        _taken = None


__all__ = ["protocol_text_stdout", "release_stdout", "take_over_stdout"]
