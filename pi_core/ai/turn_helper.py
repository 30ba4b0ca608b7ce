"""The later turns of a first conversion converted at the same time by a forked process.

The first request of a process on a long session converts every stored message: per-message Python
that one core does in about a second at 100,000 messages. When the turns do not depend on each other
(the provider's converter ignores the offset and consumes none), :class:`~pi_core.ai.wire.TurnCache`
forks a helper for the last ``SHARE`` of them before it converts the first ones itself, and takes the
helper's encoded turns when it gets there: on two cores the conversion takes a little over half as
long.

The helper only reads lines and converts them from raw views (:mod:`pi_core.ai.raw_views`) with the
provider's raw converter, then writes the encoded turns to an anonymous memory file and exits; a turn it
cannot convert that way is simply left out, and the parent converts it as it would have. Whatever goes
wrong with the helper (it fails, is killed, takes too long) costs only its work: the parent converts
those turns too. Everything the helper needs is imported before the fork, its signals do not reach the
parent's event loop, and it never runs the parent's exit handlers. Linux only (``os.memfd_create``).
"""

from __future__ import annotations

import bisect
import os
import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

#: The fewest messages worth a helper (forking costs a few milliseconds; converting 10,000 messages
#: takes about a tenth of a second).
MIN_MESSAGES = 10_000
#: The part of the messages the helper converts: a little under half, since the parent also reads
#: the helper's turns and converts the last turn.
SHARE = 0.44

_HEADER = 3  # (start, items, bytes) per turn


class Helper:
    """A forked process converting turns from message ``begin`` on."""

    def __init__(self, pid: int, fd: int, begin: int) -> None:
        self.pid, self.fd, self.begin = pid, fd, begin
        self.started = time.monotonic()

    @classmethod
    def start(cls, messages: Sequence[Any], starts: list[int], windows: list[tuple[int, int]],
              raw_turn: Callable[[list[Any], int], Any], read: Callable[[Sequence[Any], int, int], list[Any]],
              encode: Callable[[list[Any]], bytes]) -> Helper | None:
        """Fork a helper for the last windows of ``windows`` (ranges of whole turns; ``starts``: where
        the turns start), or ``None`` when it would not pay or cannot be done. ``read(messages, lo, hi)``
        gives raw views, ``encode(items)`` a turn's JSON text, both as the parent uses them."""
        if not windows or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
            return None
        total = windows[-1][1]
        if total - windows[0][0] < MIN_MESSAGES:
            return None
        cut = windows[0][0] + (total - windows[0][0]) * (1 - SHARE)
        mine = [w for w in windows if w[0] >= cut]
        if not mine:
            return None
        read(messages, mine[0][0], mine[0][0] + 1)  # whatever the path imports on first use, imported here
        encode([{}])
        try:
            fd = os.memfd_create("pi-turns")
        except OSError:
            return None
        try:
            pid = _fork()
        except OSError:  # no process to be had (a limit, memory): pi converts it all
            os.close(fd)
            return None
        if pid:
            return cls(pid, fd, mine[0][0])
        code = 1
        try:
            _quiet_signals()
            _convert_into(fd, messages, starts, mine, total, raw_turn, read, encode)
            code = 0
        finally:
            os._exit(code)  # never the parent's exit handlers, buffers or finally clauses

    def results(self) -> dict[int, tuple[Any, int, int, int]]:
        """The helper's turns by where they start, as ``(encoded items, item count, consumed 0, offset
        0)``; empty when it failed, or is still at work after twice as long again as it has run (plus a
        second), when it is stopped: its share is about the parent's, which is done when it asks."""
        import mmap

        try:
            if not self._wait(1.0 + 2 * (time.monotonic() - self.started)):
                return {}
            size = os.fstat(self.fd).st_size
            if size < 8:
                return {}
            data = memoryview(mmap.mmap(self.fd, size, prot=mmap.PROT_READ))
        finally:
            os.close(self.fd)
        count = int.from_bytes(data[:8], "little")
        header = array("q")
        header.frombytes(data[8:8 + 8 * _HEADER * count])
        at = 8 + 8 * _HEADER * count
        out: dict[int, tuple[Any, int, int, int]] = {}
        for n in range(count):
            start, items, length = header[_HEADER * n:_HEADER * (n + 1)]
            out[start] = (data[at:at + length], items, 0, 0)
            at += length
        return out

    def abandon(self) -> None:
        """Stop the helper (the parent will not take its turns)."""
        self._stop()
        os.close(self.fd)

    def _wait(self, timeout: float) -> bool:
        """Whether the helper ended well within ``timeout`` seconds (else it is stopped)."""
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by another (a child watcher that waits for any child)
                return False
            if pid:
                return os.waitstatus_to_exitcode(status) == 0
            if time.monotonic() >= deadline:
                self._stop()
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.01)

    def _stop(self) -> None:
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _fork() -> int:
    import warnings

    with warnings.catch_warnings():
        # Python 3.12 warns of forking a process with threads; the helper touches nothing they hold.
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _quiet_signals() -> None:
    """The helper dies of an interrupt, and its signals are not written to the parent's event loop."""
    import signal

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # not the main thread: the parent's loop is not this thread's to wake either
        pass


def _convert_into(fd: int, messages: Sequence[Any], starts: list[int], windows: list[tuple[int, int]],
                  total: int, raw_turn: Callable[[list[Any], int], Any],
                  read: Callable[[Sequence[Any], int, int], list[Any]], encode: Callable[[list[Any]], bytes]) -> None:
    header = array("q")
    parts: list[bytes] = []
    for lo, hi in windows:
        raws = read(messages, lo, hi)
        bounds = starts[bisect.bisect_left(starts, lo):bisect.bisect_left(starts, hi)] + [hi]
        for start, end in zip(bounds, bounds[1:]):
            if end == total:  # the last turn is the caller's to change
                continue
            turn = raws[start - lo:end - lo]
            done = None if None in turn else raw_turn(turn, 0)
            if done is not None and done[1] == 0:
                part = encode(done[0])
                header.extend((start, len(done[0]), len(part)))
                parts.append(part)
    with open(fd, "wb", closefd=False) as out:
        out.write(len(parts).to_bytes(8, "little"))
        out.write(header.tobytes())
        for part in parts:
            out.write(part)


__all__ = ["MIN_MESSAGES", "SHARE", "Helper"]
