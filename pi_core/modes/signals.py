"""SIGTERM and SIGHUP end a run the way Ctrl-C does, in every mode.

``timeout``, CI cancellation, ``systemd`` and a closing terminal send these; the default action
would kill pi on the spot and orphan the bash tool's process tree. Instead the run is aborted (the
model stream stops, tool process groups are killed), the mode returns, the session shuts down
(``session_shutdown`` hooks), and pi exits with the shell's code for the signal: 143 for SIGTERM,
129 for SIGHUP. A second signal while that is going on exits at once with the same code.
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


class SignalStop:
    """While installed, SIGTERM/SIGHUP call ``on_stop(code)`` once; ``code`` then holds the exit code."""

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self.code: int | None = None
        self._on_stop = on_stop
        self._installed: list[int] = []
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
                self._loop.add_signal_handler(number, self._received, code)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            self._installed.append(number)
        return self

    def remove(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            for number in self._installed:
                self._loop.remove_signal_handler(number)
        self._installed.clear()

    def _received(self, code: int) -> None:
        if self.code is not None:  # asked twice: stop waiting for a clean shutdown
            _exit_now(code)
        self.code = code
        self._on_stop(code)

    def __enter__(self) -> SignalStop:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.remove()


def abort_session(session: Any) -> Callable[[int], None]:
    """An ``on_stop`` that aborts ``session``'s run and any user shell command."""

    def stop(_code: int) -> None:
        session.abort_bash()
        asyncio.ensure_future(session.abort())

    return stop


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


__all__ = ["SIGNAL_EXIT_CODES", "SignalStop", "abort_session"]
