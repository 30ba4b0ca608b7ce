"""Writing to a real terminal while the editor line is on screen.

Finished rows go into the normal scrollback above the live region: they are batched (at most one
write every :data:`FLUSH_INTERVAL` seconds) and written through prompt_toolkit's ``run_in_terminal``,
which erases only the live region (``CSI J``, erase below), writes, and redraws the live region.
The screen above is never cleared and ``CSI 3J`` (erase scrollback) is never sent. Until a batch is
written, its rows are shown at the top of the live region, so nothing flickers away in between.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, TextIO

FLUSH_INTERVAL = 0.04


class TerminalOutput:
    """The renderer's :class:`~pi_core.modes.interactive.render.Output` on a terminal."""

    def __init__(self, stream: TextIO | None = None, app: Callable[[], Any] | None = None) -> None:
        self.stream = stream or sys.stdout
        self._app = app or (lambda: None)
        self.pending: list[str] = []
        self._scheduled = False
        self._lock = asyncio.Lock()

    def scroll(self, rows: list[str]) -> None:
        self.pending.extend(rows)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(FLUSH_INTERVAL, self._start_flush)
        self.live_changed()

    def live_changed(self) -> None:
        app = self._app()
        if app is not None and app.is_running:
            app.invalidate()

    def _start_flush(self) -> None:
        self._scheduled = False
        asyncio.ensure_future(self.flush())

    async def flush(self) -> None:
        """Write the pending rows now (above the live region when an editor is on screen)."""
        async with self._lock:
            if not self.pending:
                return
            app = self._app()
            if app is not None and app.is_running:
                from prompt_toolkit.application import run_in_terminal
                from prompt_toolkit.application.current import set_app

                with set_app(app):  # our task does not run in the app's context
                    done = run_in_terminal(self._write_pending)
                await done
            else:
                self._write_pending()

    def flush_now(self) -> None:
        """Synchronous flush for when no editor is on screen (start-up, exit)."""
        self._write_pending()

    def _write_pending(self) -> None:
        rows, self.pending = self.pending, []
        if rows:
            self.stream.write("".join(f"{row}\n" for row in rows))
            self.stream.flush()


def install_extended_keys() -> None:
    """Teach prompt_toolkit the sequences terminals with extended key reporting send for Shift+Enter
    and Alt+Enter (xterm ``modifyOtherKeys`` and the kitty protocol). Shift+Enter becomes Ctrl+J (a new
    line); Alt+Enter becomes Esc, Enter."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    for sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
        ANSI_SEQUENCES.setdefault(sequence, Keys.ControlJ)
    for sequence in ("\x1b[13;3u", "\x1b[27;3;13~"):
        ANSI_SEQUENCES.setdefault(sequence, (Keys.Escape, Keys.ControlM))


def set_title(stream: TextIO, title: str) -> None:
    clean = "".join(c for c in title if c.isprintable())
    stream.write(f"\x1b]0;{clean}\x07")
    stream.flush()


__all__ = ["FLUSH_INTERVAL", "TerminalOutput", "install_extended_keys", "set_title"]
