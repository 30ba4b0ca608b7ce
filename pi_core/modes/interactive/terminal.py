"""Writing to a real terminal while the editor line is on screen.

Finished rows go into the normal scrollback above the live region: they are batched (at most one
write every :data:`FLUSH_INTERVAL` seconds) and written through prompt_toolkit's ``run_in_terminal``,
which erases only the live region (``CSI J``, erase below), writes, and redraws the live region.
The screen above is never cleared and ``CSI 3J`` (erase scrollback) is never sent. Until a batch is
written, its rows are shown at the top of the live region, so nothing flickers away in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TextIO

FLUSH_INTERVAL = 0.04
RECENT_ROWS = 300


class TerminalOutput:
    """The renderer's :class:`~pi_core.modes.interactive.render.Output` on a terminal."""

    def __init__(self, stream: TextIO | None = None, app: Callable[[], Any] | None = None) -> None:
        self.stream = stream or sys.stdout
        self._app = app or (lambda: None)
        self.pending: list[str] = []
        self.recent: deque[str] = deque(maxlen=RECENT_ROWS)  # the last rows written (what an overlay covers)
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
        """Write the pending rows now (above the live region when an editor is on screen). While a
        full-screen application (an overlay) has the terminal they wait: they show under the overlay
        meanwhile, and are written once it is gone."""
        async with self._lock:
            if not self.pending:
                return
            app = self._app()
            if app is not None and app.is_running and getattr(app, "full_screen", False):
                if not self._scheduled:
                    self._scheduled = True
                    asyncio.get_running_loop().call_later(FLUSH_INTERVAL * 5, self._start_flush)
                return
            if app is not None and app.is_running:
                from prompt_toolkit.application import run_in_terminal
                from prompt_toolkit.application.current import set_app

                _keep_raw_for_next_write(app)
                with set_app(app):  # our task does not run in the app's context
                    done = run_in_terminal(self._write_pending)
                while not done.done():  # the editor may be put away meanwhile: then write directly
                    await asyncio.wait({done}, timeout=0.2)
                    if not app.is_running and not done.done():
                        done.cancel()
                        app.input._pi_raw_writes = 0  # that write will not happen inside prompt_toolkit
                        self._write_pending()
                        return
            else:
                self._write_pending()

    def flush_now(self) -> None:
        """Synchronous flush for when no editor is on screen (start-up, exit)."""
        self._write_pending()

    def _write_pending(self) -> None:
        rows, self.pending = self.pending, []
        self.recent.extend(rows)
        if rows:
            try:
                self.stream.write("".join(f"{row}\n" for row in rows))
                self.stream.flush()
            except OSError:  # the terminal went away (a hangup): there is nowhere to show them
                pass


def _keep_raw_for_next_write(app: Any) -> None:
    """prompt_toolkit's ``run_in_terminal`` puts the terminal into cooked mode around its body. For a
    scrollback write that is wrong: a key typed meanwhile is echoed into the transcript, and a Ctrl+D
    is eaten by the line discipline as end-of-file (so "Ctrl+D exits" would be lost). The next body is
    ours and only writes, so the input stays raw for it (keys wait in the kernel until the editor reads
    them again); any other ``run_in_terminal`` (the external editor) still gets cooked mode."""
    source = app.input
    original = getattr(source, "_pi_cooked_mode", None)
    if original is None:
        original = source._pi_cooked_mode = source.cooked_mode
        source._pi_raw_writes = 0

        def cooked_mode() -> Any:
            if source._pi_raw_writes > 0:
                source._pi_raw_writes -= 1
                return contextlib.nullcontext()
            return original()

        source.cooked_mode = cooked_mode
    source._pi_raw_writes += 1


ENABLE_EXTENDED_KEYS = "\x1b[>1u\x1b[>4;2m"
"""Ask the terminal to report modified keys unambiguously: the kitty keyboard protocol (flag 1,
"disambiguate") and xterm's ``modifyOtherKeys`` level 2 (xterm, tmux with ``extended-keys``). A
terminal that knows neither ignores both."""
DISABLE_EXTENDED_KEYS = "\x1b[<u\x1b[>4;0m"


def install_extended_keys() -> None:
    """Teach prompt_toolkit the sequences terminals send with extended key reporting on (kitty's
    ``CSI code;mods u`` and xterm's ``CSI 27;mods;code ~``): Shift+Enter, Ctrl+Shift+letter, Alt+Enter,
    and the plain Ctrl keys in their new spelling. Keys without a legacy form become the private
    characters the keymap binds (see :mod:`.keybindings`)."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    from .keybindings import extended_sequences

    for sequence, keys in extended_sequences().items():
        ANSI_SEQUENCES[sequence] = tuple(_pt_key(k) for k in keys) if len(keys) > 1 else _pt_key(keys[0])
    for flags in range(32):  # the terminal's answer to a kitty protocol query is not a key
        ANSI_SEQUENCES[f"\x1b[?{flags}u"] = Keys.Ignore


def _pt_key(name: str) -> Any:
    from prompt_toolkit.keys import Keys

    try:
        return Keys(name)
    except ValueError:
        return name


def enable_extended_keys(stream: TextIO) -> None:
    stream.write(ENABLE_EXTENDED_KEYS)
    stream.flush()


def disable_extended_keys(stream: TextIO) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(DISABLE_EXTENDED_KEYS)
        stream.flush()


def set_title(stream: TextIO, title: str) -> None:
    clean = "".join(c for c in title if c.isprintable())
    stream.write(f"\x1b]0;{clean}\x07")
    stream.flush()


@contextlib.contextmanager
def keys_held_for_the_editor(stream: TextIO) -> Iterator[None]:
    """Keep keys typed while no editor is on screen (a command running, a dialog opening) for the next
    editor, byte for byte, instead of letting the terminal's line discipline have them.

    Between two prompts the terminal would otherwise be in cooked mode: typed text is echoed into the
    scrollback, Enter is turned into a newline, and a Ctrl+D on an empty line is swallowed as
    end-of-file (so "Ctrl+D exits" would silently do nothing). Signals stay on: Ctrl+C between two
    prompts still interrupts. prompt_toolkit's own raw mode nests inside this one.
    """
    try:
        import termios

        fd = stream.fileno()
        before = termios.tcgetattr(fd)
    except (ImportError, AttributeError, ValueError, OSError):
        yield
        return
    held = [*before[:6], list(before[6])]
    held[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON)
    held[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
    held[6][termios.VMIN], held[6][termios.VTIME] = 1, 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, held)
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, before)


__all__ = ["FLUSH_INTERVAL", "TerminalOutput", "disable_extended_keys", "enable_extended_keys", "install_extended_keys",
           "keys_held_for_the_editor", "set_title"]
