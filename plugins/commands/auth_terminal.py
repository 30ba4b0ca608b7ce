"""A :class:`~pi_core.ai.LoginInteraction` on the process's terminal, for ``pi auth login``.

Lines are read by one thread for the whole sign-in and handed to whichever prompt is waiting, so a
prompt for a pasted code can be abandoned when the browser redirect arrives first. Secrets are read with
echo off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TextIO

from pi_core.ai import AuthUrlEvent, DeviceCodeEvent, LoginCancelled, LoginEvent, LoginOption


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def can_open_browser() -> bool:
    """A browser can be opened here (a desktop session), so opening one cannot start a text browser
    inside this terminal."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> None:
    if not can_open_browser():
        return
    import webbrowser

    with contextlib.suppress(Exception):
        webbrowser.open(url, new=2)


def safe_url(value: str) -> str:
    """A URL as it may be printed: control characters (which could drive the terminal) replaced."""
    return "".join(c if c.isprintable() else "?" for c in value)


@contextlib.contextmanager
def _no_echo(stream: TextIO) -> Iterator[None]:
    try:
        import termios

        fd = stream.fileno()
        old = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):
        yield
        return
    new = list(old)
    new[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSADRAIN, new)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


class TerminalLogin:
    """The interaction. ``browser`` is ``--no-browser``'s opposite: with it the first (browser) method of a
    provider is chosen and a browser is opened; without it the other method is chosen."""

    def __init__(self, provider: str, *, browser: bool, ask_methods: bool = False,
                 out: TextIO | None = None) -> None:
        self.provider, self.browser, self.ask_methods = provider, browser, ask_methods
        self.out = out or sys.stdout
        self.skipped: list[str] = []
        self._lines: asyncio.Queue[str | None] | None = None

    def write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # -- input ---------------------------------------------------------------------------------------
    def _start_reader(self) -> asyncio.Queue[str | None]:
        if self._lines is None:
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[str | None] = asyncio.Queue()

            def read() -> None:
                while True:
                    line = sys.stdin.readline()
                    loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n") if line else None)
                    if not line:
                        return

            threading.Thread(target=read, daemon=True, name="pi-login-input").start()
            self._lines = queue
        return self._lines

    async def _line(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = await self._start_reader().get()
        if line is None:
            raise LoginCancelled()
        return line

    async def select(self, message: str, options: Sequence[LoginOption]) -> str:
        first, *others = options
        if not self.ask_methods:
            if self.browser or not others:
                self.skipped = [o.label for o in others]
                return first.id
            if len(others) == 1:
                self.write(f"{message} {others[0].label}")
                return others[0].id
            options = others
        self.write(message)
        for number, option in enumerate(options, 1):
            detail = f" - {option.description}" if option.description else ""
            self.write(f"  {number}. {option.label}{detail}")
        while True:
            answer = (await self._line(f"Select 1-{len(options)}: ")).strip()
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1].id
            self.write(f"Enter a number from 1 to {len(options)}.")

    async def secret(self, message: str) -> str:
        with _no_echo(sys.stdin):
            try:
                return await self._line(f"{message}: ")
            finally:
                self.out.write("\n")

    async def text(self, message: str, placeholder: str = "") -> str:
        return await self._line(f"{message}{f' ({placeholder})' if placeholder else ''}: ")

    async def manual_code(self, message: str, placeholder: str = "") -> str:
        return await self.text(message, placeholder)

    # -- output --------------------------------------------------------------------------------------
    def notify(self, event: LoginEvent) -> None:
        if isinstance(event, AuthUrlEvent):
            self.write(f"Open this URL to sign in:\n  {safe_url(event.url)}")
            if event.instructions:
                self.write(event.instructions)
            if self.browser:
                open_browser(event.url)
            rerun = f'"pi auth login {self.provider} --no-browser"'
            if len(self.skipped) == 1:
                self.write(f'To use "{self.skipped[0]}" instead, run {rerun}.')
            elif self.skipped:
                self.write(f"Other sign-in methods: {', '.join(self.skipped)}. Run {rerun} to choose one.")
        elif isinstance(event, DeviceCodeEvent):
            self.write(f"Open {safe_url(event.verification_uri)} and enter the code: {event.user_code}")
            if self.browser:
                open_browser(event.verification_uri)
            self.write("Waiting for the sign-in to be approved...")
        else:
            self.write(event.message)


__all__ = ["TerminalLogin", "can_open_browser", "interactive", "open_browser", "safe_url"]
