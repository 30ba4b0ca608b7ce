"""SIGTERM and SIGHUP end a run the way Ctrl-C does, in every mode.

``timeout``, CI cancellation, ``systemd`` and a closing terminal send these; the default action
would kill pi on the spot and orphan the bash tool's process tree. Instead the run is aborted (the
model stream stops, tool process groups are killed), the mode returns, the session shuts down
(``session_shutdown`` hooks), and pi exits with the shell's code for the signal: 143 for SIGTERM,
129 for SIGHUP. A second signal while that is going on exits at once with the same code, and so does
the first one if pi has not exited :data:`SHUTDOWN_DEADLINE_S` after it (a plugin's handler that never
returns, even one blocking the event loop): the signal is caught by a plain Python handler, which runs
even while the loop is stuck, and a timer thread keeps the deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal as signals
import sys
import threading
from collections.abc import Callable
from typing import Any

SIGNAL_EXIT_CODES: dict[str, int] = {"SIGTERM": 143, "SIGHUP": 129}
SHUTDOWN_DEADLINE_S = 10.0
"""After SIGTERM/SIGHUP pi exits within this many seconds, whatever is still running."""


class SignalStop:
    """While installed, SIGTERM/SIGHUP call ``on_stop(code)`` once (on the event loop); ``code`` then holds
    the exit code. A second signal, or :data:`SHUTDOWN_DEADLINE_S` after the first, exits at once."""

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self.code: int | None = None
        self._on_stop = on_stop
        self._previous: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> SignalStop:
        """Take over the signals (only possible in the main thread; elsewhere this does nothing)."""
        if threading.current_thread() is not threading.main_thread():
            return self
        self._loop = asyncio.get_running_loop()
        for name, code in SIGNAL_EXIT_CODES.items():
            number = getattr(signals, name, None)
            if number is None:
                continue
            try:
                self._previous[number] = signals.signal(number, self._handler(code))
            except (OSError, RuntimeError, ValueError):
                continue
        return self

    def remove(self) -> None:
        for number, previous in self._previous.items():
            try:
                signals.signal(number, previous)
            except (OSError, RuntimeError, ValueError, TypeError):
                pass
        self._previous.clear()

    def _handler(self, code: int) -> Callable[[int, Any], None]:
        def handler(_number: int, _frame: Any) -> None:
            self._caught(code)

        return handler

    def _caught(self, code: int) -> None:
        """The Python-level handler: runs in the main thread between two bytecodes, even while the event
        loop is held by code that never yields; the stop itself is done on the loop."""
        if self.code is not None:  # asked twice: stop waiting for a clean shutdown
            _exit_now(code)
        self.code = code
        _exit_after(SHUTDOWN_DEADLINE_S, code)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._on_stop, code)


    def __enter__(self) -> SignalStop:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.remove()


ABORT_GRACE_S = 2.0
"""How long a run gets to end by its abort before the task running it is cancelled (a plugin handler
without a time limit, ``plugins.hookTimeoutMs: 0``, may never look at the abort)."""


def abort_session(session: Any, run: asyncio.Future[Any] | None = None) -> Callable[[int], None]:
    """An ``on_stop`` that aborts ``session``'s run and any user shell command, and cancels ``run`` (the
    task awaiting it) if it has not ended :data:`ABORT_GRACE_S` later."""

    def stop(_code: int) -> None:
        session.abort_bash()
        asyncio.ensure_future(session.abort())
        if run is not None:
            asyncio.get_running_loop().call_later(ABORT_GRACE_S, run.cancel)

    return stop


def _exit_after(seconds: float, code: int) -> None:
    """Exit with ``code`` in ``seconds`` unless pi has exited by then (a daemon thread keeps the time)."""

    def late() -> None:
        name = next((n for n, c in SIGNAL_EXIT_CODES.items() if c == code), "the signal")
        try:
            sys.stderr.write(f"pi: still running {seconds:g} s after {name} (something does not return: a "
                             "plugin's handler?); exiting now\n")
        except (OSError, ValueError):
            pass
        _exit_now(code)

    timer = threading.Timer(seconds, late)
    timer.daemon = True
    timer.start()


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


__all__ = ["ABORT_GRACE_S", "SHUTDOWN_DEADLINE_S", "SIGNAL_EXIT_CODES", "SignalStop", "abort_session"]
