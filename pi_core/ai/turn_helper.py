"""The later turns of a first conversion converted at the same time by a forked process.

The first request of a process on a long session converts every stored message: per-message Python
that one core does in about a second at 100,000 messages. When the turns do not depend on each other
(the provider's converter ignores the offset and consumes none), :class:`~pi_core.ai.wire.TurnCache`
forks a helper for the last ``SHARE`` of them before it converts the first ones itself, and takes the
helper's encoded turns when it gets there: on two cores the conversion takes a little over half as
long.

The helper only reads lines and converts them from raw views (:mod:`pi_core.ai.raw_views`) with the
provider's raw converter, then writes the encoded turns to an anonymous memory file, says so on a pipe
and exits (the parent takes the turns while the kernel tears the helper down, and collects its exit
later); a turn it cannot convert that way is simply left out, and the parent converts it as it would
have. Whatever goes
wrong with the helper (it fails, is killed, takes too long) costs only its work: the parent converts
those turns too. Everything the helper needs is imported before the fork, its signals do not reach the
parent's event loop, and it never runs the parent's exit handlers. Linux only (``os.memfd_create``).

A run that sends one request on a long session (``pi -p --session FILE``) spends half a second starting
(imports, plugins, settings, opening the session) with the second core idle. :func:`read_ahead` forks the
helper at the very start instead: it decodes the raw views of the file's lines from the end backwards
(the later turns are its share) until the parent asks; then it converts the turns given to it, with
the converter the parent sends (pickled: :func:`pi_core.ai.remakeable` makes a provider's converter
picklable), taking a bigger share since most of its lines are decoded already. It uses a decoded line
only where the parent's index has a line of the same length at the same offset of the same file;
everything else it reads then, or leaves to the parent. It is started only where it is likely to be
asked: a file of ``READ_AHEAD_MIN`` bytes or more whose turns no earlier process stored; and it ends at
once when a compaction is among the last ``READ_AHEAD_MIN`` bytes (a short context), stops decoding at
a compaction further back, and is stopped by a first conversion that has no use for it.
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

#: The share of a helper started by :func:`read_ahead`, which has most of its lines decoded by then.
EARLY_SHARE = 0.57
#: The smallest session file worth reading ahead.
READ_AHEAD_MIN = 32 << 20
#: How long a helper started by :func:`read_ahead` waits to be asked before it gives up.
READ_AHEAD_WAIT = 120.0

_HEADER = 3  # (start, items, bytes) per turn
_CHUNK = 2 << 20  # bytes decoded at once by a helper reading ahead


class Helper:
    """A forked process converting turns from message ``begin`` on."""

    def __init__(self, pid: int, fd: int, begin: int, done: int) -> None:
        """``fd``: the memory file it writes its turns to; ``done``: a pipe it writes one byte to when
        they are all written (so its turns are taken while it exits, which takes a while for a process
        of some hundred megabytes)."""
        self.pid, self.fd, self.begin, self.done = pid, fd, begin, done
        self.started = time.monotonic()

    @classmethod
    def start(cls, messages: Sequence[Any], starts: list[int], windows: list[tuple[int, int]],
              raw_turn: Callable[[list[Any], int], Any], read: Callable[[Sequence[Any], int, int], list[Any]],
              encode: Callable[[list[Any]], bytes]) -> Helper | None:
        """Fork a helper for the last windows of ``windows`` (ranges of whole turns; ``starts``: where
        the turns start), or hand them to the helper reading ahead if there is one that can take them;
        ``None`` when it would not pay or cannot be done. ``read(messages, lo, hi)`` gives raw views as
        the parent reads them, ``encode(items)`` a turn's items as a JSON array."""
        early, _early[0] = _early[0], None
        if not windows or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
            _cancel(early)
            return None
        total = windows[-1][1]
        if total - windows[0][0] < MIN_MESSAGES:
            _cancel(early)
            return None
        if early is not None:
            helper = early.ask(messages, starts, windows, raw_turn, encode)
            if helper is not None:
                return helper
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
        done, finished = os.pipe()
        try:
            pid = _fork()
        except OSError:  # no process to be had (a limit, memory): pi converts it all
            for n in (fd, done, finished):
                os.close(n)
            return None
        if pid:
            os.close(finished)
            return cls(pid, fd, mine[0][0], done)
        code = 1
        try:
            os.close(done)
            _quiet_signals()
            _convert_into(fd, messages, starts, mine, total, raw_turn, read, encode)
            os.write(finished, b"\1")
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
            os.close(self.done)
        count = int.from_bytes(data[size - 8:], "little")  # the turns, their header, how many there are
        if 8 + 8 * _HEADER * count > size:
            return {}
        header = array("q")
        header.frombytes(data[size - 8 - 8 * _HEADER * count:size - 8])
        at = 0
        out: dict[int, tuple[Any, int, int, int]] = {}
        for n in range(count):
            start, items, length = header[_HEADER * n:_HEADER * (n + 1)]
            out[start] = (data[at + 1:at + length - 1], items, 0, 0)  # without the array's brackets
            at += length
        return out

    def abandon(self) -> None:
        """Stop the helper (the parent will not take its turns)."""
        self._stop()
        os.close(self.fd)
        os.close(self.done)

    def _wait(self, timeout: float) -> bool:
        """Whether the helper wrote all its turns within ``timeout`` seconds (else it is stopped)."""
        import select

        if not select.select([self.done], [], [], 0)[0]:
            from .http import preload

            preload()  # the request this conversion is for goes out next: its imports, while the helper works
        if select.select([self.done], [], [], timeout)[0] and os.read(self.done, 1):
            _reap(self.pid)
            return True
        self._stop()  # at work still, or ended without a word (it failed)
        return False

    def _stop(self) -> None:
        import signal

        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


class _ReadAhead:
    """The parent's handle on a helper started by :func:`read_ahead`, until it is asked or let go."""

    def __init__(self, pid: int, fds: tuple[int, int, int, int], identity: tuple[int, int]) -> None:
        """``fds``: the pipe it waits on (closed: it reads the request), the memory file of the request,
        the one of its turns and the pipe of its word when they are written (see :class:`Helper`);
        ``identity``: the device and inode of the file it reads."""
        self.pid, (self.signal, self.ask_fd, self.out, self.done), self.identity = pid, fds, identity
        self.started = time.monotonic()

    def ask(self, messages: Sequence[Any], starts: list[int], windows: list[tuple[int, int]],
            raw_turn: Callable[[list[Any], int], Any], encode: Callable[[list[Any]], bytes]) -> Helper | None:
        """Hand it the last windows (see :meth:`Helper.start`); ``None`` (and it is let go) when it
        cannot take them: not the same file, the converter does not pickle."""
        import pickle

        from .message_list import message_line_columns

        import select

        if select.select([self.done], [], [], 0)[0]:  # it has ended: it found nothing worth reading ahead
            _cancel(self)
            return None
        total = windows[-1][1]
        cut = windows[0][0] + (total - windows[0][0]) * (1 - EARLY_SHARE)
        mine = [w for w in windows if w[0] >= cut]
        # up to the last turn, which is the caller's (and holds the new messages, which are not lines)
        columns = message_line_columns(messages, mine[0][0], starts[-1]) if mine and starts[-1] > mine[0][0] else None
        request = None
        if columns is not None and _identity(columns[0]) == self.identity:
            begin = mine[0][0]
            try:
                request = _pickled((raw_turn, encode, starts[bisect.bisect_left(starts, begin):], mine, total, begin,
                                    columns[1].tobytes(), columns[2].tobytes()))
            except (pickle.PicklingError, TypeError, AttributeError):  # a closure: only a fork can have it
                request = None
        if request is None:
            _cancel(self)
            return None
        os.pwrite(self.ask_fd, request, 0)
        os.close(self.ask_fd)
        os.close(self.signal)  # end of file: it reads the request
        helper = Helper(self.pid, self.out, mine[0][0], self.done)
        helper.started = self.started
        return helper

    def stop(self) -> None:
        Helper(self.pid, self.out, 0, self.done).abandon()
        os.close(self.ask_fd)
        os.close(self.signal)


_early: list[_ReadAhead | None] = [None]


def read_ahead(path: Any) -> None:
    """Fork a helper that decodes the lines of session file ``path`` while this process starts, for
    the first conversion to hand its later turns to (see the module). Nothing happens for a short file
    or where there is no ``fork``; a helper nobody asks ends when this process does."""
    if not hasattr(os, "fork") or not hasattr(os, "memfd_create") or _early[0] is not None:
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if st.st_size < READ_AHEAD_MIN or _stored(path):
            return
        ask, out = os.memfd_create("pi-ask"), os.memfd_create("pi-turns")
        (readable, signal), (done, finished) = os.pipe(), os.pipe()
        try:
            pid = _fork()
        except OSError:
            for n in (ask, out, readable, signal, done, finished):
                os.close(n)
            return
        if pid:
            os.close(readable)
            os.close(finished)
            _early[0] = _ReadAhead(pid, (signal, ask, out, done), (st.st_dev, st.st_ino))
            return
        code = 1
        try:
            os.close(signal)
            os.close(done)
            _quiet_signals()
            _serve(fd, readable, ask, out, finished)
            code = 0
        finally:
            os._exit(code)  # never the parent's exit handlers, buffers or finally clauses
    finally:
        os.close(fd)


def _stored(path: Any) -> bool:
    """Whether a previous process stored turns of this session (then the first request converts little)."""
    from ..paths import agent_dir
    from .turn_store import TurnStore

    return TurnStore(agent_dir() / "cache" / "wire").has_turns_for(path)


def let_go() -> None:
    """Stop the helper reading ahead, if any (the first conversion hands it nothing)."""
    early, _early[0] = _early[0], None
    _cancel(early)


def _cancel(early: _ReadAhead | None) -> None:
    if early is not None:
        early.stop()


def _identity(source: Any) -> tuple[int, int] | None:
    try:
        st = os.fstat(source.fileno()) if hasattr(source, "fileno") else os.stat(source.path)
    except (OSError, AttributeError, TypeError):
        return None
    return st.st_dev, st.st_ino


def _pickled(value: Any) -> bytes:
    """``value`` pickled, a converter made by :func:`pi_core.ai.remakeable` as the call that made it."""
    import io
    import pickle

    class Remaking(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            remake = getattr(obj, "__remake__", None) if callable(obj) else None
            return NotImplemented if remake is None else remake

    buffer = io.BytesIO()
    Remaking(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _serve(fd: int, readable: int, ask: int, out: int, finished: int) -> None:
    """The helper started by :func:`read_ahead`: decode lines until asked, then convert what it is given
    and say so on ``finished``."""
    import gc
    import pickle
    import select

    gc.disable()  # many small objects, none of them garbage before it exits
    if _compacted_lately(fd):
        return  # a short context: nothing for a helper (and the parent has the cores to itself)
    from . import http, types, wire  # noqa: F401 - what the request unpickles and encodes with, imported now
    from .raw_views import LineViews

    lines = LineViews(fd, watch=COMPACTION_LINE)
    end = size = os.fstat(fd).st_size
    floor = int(size * (0.95 - EARLY_SHARE))  # about where its share begins: the rest is the parent's
    while end > floor and not select.select([readable], [], [], 0)[0]:
        end = lines.decode_before(end, _CHUNK)
        if lines.found is not None:  # a compaction: the context starts about there (a few kept turns before)
            floor = max(floor, lines.found - _CHUNK)
    if not select.select([readable], [], [], READ_AHEAD_WAIT)[0] or os.read(readable, 1):
        return  # not asked in time (or by a parent that wrote where it should have closed)
    asked = os.fstat(ask).st_size
    if not asked:
        return  # the parent ended, or let it go
    raw_turn, encode, starts, windows, total, begin, offsets, lengths = pickle.loads(os.pread(ask, asked, 0))
    read = lines.reader(begin, array("q", offsets), array("q", lengths))
    _convert_into(out, None, starts, windows, total, raw_turn, read, encode)
    os.write(finished, b"\1")
    os._exit(0)  # now: freeing what it decoded takes a while


COMPACTION_LINE = b'\n{"type":"compaction"'
"""How a compaction entry's line starts (as pi writes it)."""


def _compacted_lately(fd: int) -> bool:
    """Whether the last ``READ_AHEAD_MIN`` bytes of the file hold a compaction (found at C speed)."""
    size = os.fstat(fd).st_size
    start = max(0, size - READ_AHEAD_MIN)
    while start < size:
        block = os.pread(fd, min(_CHUNK * 4, size - start) + len(COMPACTION_LINE), start)
        if COMPACTION_LINE in block:
            return True
        start += _CHUNK * 4
    return False


def _reap(pid: int) -> None:
    """Collect the exit of a helper that has done its work, now or (on a thread) when it has exited."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return
    except ChildProcessError:  # reaped by another (a child watcher that waits for any child)
        return
    import threading

    def wait() -> None:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    threading.Thread(target=wait, name="pi-helper-exit", daemon=True).start()


def _fork() -> int:
    import warnings

    with warnings.catch_warnings():
        # Python 3.12 warns of forking a process with threads; the helper touches nothing they hold.
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _quiet_signals() -> None:
    """The helper dies of an interrupt, and its signals are not written to the parent's event loop; it
    lets go of the parent's output when that is a pipe, a socket or a terminal, so that whoever reads
    pi's output sees its end when pi ends, not when a helper has finished exiting."""
    import signal
    import stat

    try:
        for fd in (1, 2):
            if stat.S_ISFIFO(mode := os.fstat(fd).st_mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, fd)
                os.close(null)
    except OSError:  # closed already
        pass

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # not the main thread: the parent's loop is not this thread's to wake either
        pass


def _convert_into(fd: int, messages: Sequence[Any] | None, starts: list[int], windows: list[tuple[int, int]],
                  total: int, raw_turn: Callable[[list[Any], int], Any],
                  read: Callable[[Any, int, int], list[Any]], encode: Callable[[list[Any]], bytes]) -> None:
    header = array("q")
    parts: list[bytes] = []  # written a thousand at a time, then let go of
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
                if len(parts) == 1000:
                    _write_all(fd, parts)
                    parts = []
    _write_all(fd, [*parts, header.tobytes(), (len(header) // _HEADER).to_bytes(8, "little")])


def _write_all(fd: int, pieces: list[bytes]) -> None:
    """Write ``pieces`` one after the other in one call (a third of the time of a buffered file's
    writes for some ten thousand turns)."""
    written = os.writev(fd, pieces)
    rest = memoryview(b"".join(pieces))[written:] if written < sum(map(len, pieces)) else b""
    while rest:
        rest = rest[os.write(fd, rest):]


__all__ = ["EARLY_SHARE", "MIN_MESSAGES", "READ_AHEAD_MIN", "READ_AHEAD_WAIT", "SHARE", "Helper", "let_go", "read_ahead"]
