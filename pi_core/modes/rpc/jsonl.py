"""Strict JSONL framing for RPC mode: records end at ``\\n`` and nowhere else.

JSON strings may hold U+2028, U+2029, ``\\x85`` or a lone ``\\r`` raw, so text-mode readers and
``str.splitlines()`` would tear records apart. Input is read as bytes, split on ``b"\\n"``, one
trailing ``\\r`` is stripped and each record is decoded on its own (invalid UTF-8 becomes U+FFFD, as
in Node). A last record without a newline still counts at end of input.

Input is untrusted: a record longer than :data:`MAX_RECORD_BYTES` is dropped as it streams (memory
stays bounded) and reported as :class:`Oversized`; records are parsed with
:func:`pi_core.safejson.parse_json` (depth limit, no ``NaN``/``Infinity``, no ``1e400``).
Output never contains ``NaN``/``Infinity`` either: non-finite floats are written as ``null``, as
``JSON.stringify`` does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Union

from ...safejson import json_safe, parse_json

CHUNK = 65536
MAX_RECORD_BYTES = 64 * 1024 * 1024
"""The longest command line accepted (a prompt with several large images fits)."""
_UNSAFE = re.compile("[\u2028\u2029\ud800-\udfff]")


@dataclass(frozen=True)
class Oversized:
    """A record that was longer than the limit; its bytes were dropped."""

    size: int
    limit: int

    def message(self) -> str:
        return f"the command is {self.size} bytes, over the limit of {self.limit} bytes"


Record = Union[str, Oversized]


class LineSplitter:
    """Turns a byte stream into records (``str``), however the bytes arrive."""

    def __init__(self, max_record: int = MAX_RECORD_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_record
        self._skipped = 0  # > 0 while dropping the rest of an oversized record

    def feed(self, data: bytes) -> list[Record]:
        """The records completed by ``data``."""
        records: list[Record] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            self._take(data[start:] if end < 0 else data[start:end])
            if end < 0:
                break
            records.append(self._complete())
            start = end + 1
        return records

    def end(self) -> list[Record]:
        """At end of input: the unterminated last record, if any."""
        if not self._buffer and not self._skipped:
            return []
        return [self._complete()]

    def _take(self, piece: bytes) -> None:
        if self._skipped:
            self._skipped += len(piece)
        elif len(self._buffer) + len(piece) > self._max:
            self._skipped = len(self._buffer) + len(piece)
            self._buffer = bytearray()
        else:
            self._buffer += piece

    def _complete(self) -> Record:
        if self._skipped:
            record: Record = Oversized(self._skipped, self._max)
            self._skipped = 0
            return record
        line, self._buffer = bytes(self._buffer), bytearray()
        return _decode(line)


def _decode(line: bytes) -> str:
    if line.endswith(b"\r"):
        line = line[:-1]
    return line.decode("utf-8", errors="replace")


def parse_record(text: str) -> Any:
    """One record as ``JSON.parse`` reads it, within the depth limit; raises ``ValueError``."""
    return parse_json(text, max_bytes=MAX_RECORD_BYTES)


def serialize(record: dict[str, Any], raw_data: str | None = None) -> bytes:
    """One output line. ``raw_data`` is already-encoded JSON put in as the record's ``data``.

    U+2028/U+2029 are escaped (valid JSON either way) so that clients reading lines with a
    JavaScript ``readline`` — a common mistake — still get whole records; lone surrogates are
    escaped as ``JSON.stringify`` does, so the line is always valid UTF-8.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a non-finite float somewhere: JSON.stringify writes null
        text = json.dumps(json_safe(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if raw_data is not None:
        text = text[:-1] + ',"data":' + raw_data + "}"
    if not text.isascii():
        text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"


def start_reader(source: BinaryIO | int, loop: asyncio.AbstractEventLoop,
                 deliver: Callable[[Record | None], None]) -> threading.Thread:
    """Read ``source`` in a daemon thread; ``deliver(record)`` runs on ``loop``, ``deliver(None)`` at EOF.

    A thread (not ``loop.connect_read_pipe``) because stdin may be a regular file, a pipe or a tty,
    and the selector can only watch some of them.
    """
    read = _read_function(source)

    def run() -> None:
        splitter = LineSplitter()
        while True:
            try:
                chunk = read()
            except (OSError, ValueError):
                chunk = b""
            records = splitter.feed(chunk) if chunk else splitter.end()
            for record in records:
                if not _post(loop, deliver, record):
                    return
            if not chunk:
                _post(loop, deliver, None)
                return

    thread = threading.Thread(target=run, name="pi-rpc-stdin", daemon=True)
    thread.start()
    return thread


def _read_function(source: BinaryIO | int) -> Callable[[], bytes]:
    if isinstance(source, int):
        return lambda: os.read(source, CHUNK)
    try:
        fd = source.fileno()
    except (AttributeError, OSError, ValueError):
        read1 = getattr(source, "read1", None)
        return (lambda: read1(CHUNK)) if read1 else (lambda: source.read(CHUNK))
    return lambda: os.read(fd, CHUNK)


def _post(loop: asyncio.AbstractEventLoop, deliver: Callable[[Record | None], None], record: Record | None) -> bool:
    try:
        loop.call_soon_threadsafe(deliver, record)
    except RuntimeError:  # the loop is closed: nobody is listening any more
        return False
    return True


class Output:
    """Writes records to a file descriptor, whole lines at a time, in the order they are given.

    Every write happens on the event loop thread, so records never interleave. A write blocks while
    the client is not reading (that is the backpressure); once the pipe is gone, ``closed`` is set
    and ``on_close`` runs once.
    """

    def __init__(self, fd: int, on_close: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self.closed = False
        self._on_close = on_close

    def write(self, record: dict[str, Any], raw_data: str | None = None) -> None:
        if self.closed:
            return
        data = memoryview(serialize(record, raw_data))
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except (BrokenPipeError, OSError):
            self.closed = True
            if self._on_close is not None:
                self._on_close()


__all__ = ["MAX_RECORD_BYTES", "LineSplitter", "Output", "Oversized", "Record", "parse_record", "serialize",
           "start_reader"]
