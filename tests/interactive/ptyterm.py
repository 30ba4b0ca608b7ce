"""A real program in a pseudo-terminal, watched through a virtual terminal (pyte).

The child gets a pty as its controlling terminal (stdin, stdout), so it sees a TTY exactly as in a
terminal emulator; pyte interprets everything it writes, keeps the scrollback, and answers cursor
position requests like a real terminal does. Every byte written is also kept raw for assertions such
as "never sends CSI 3J".
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pyte


class _Screen(pyte.HistoryScreen):
    def __init__(self, columns: int, lines: int, reply: Callable[[str], None]) -> None:
        super().__init__(columns, lines, history=10_000, ratio=0.5)
        self._reply = reply

    def write_process_input(self, data: str) -> None:  # answers to CPR (ESC [ 6 n) and the like
        self._reply(data)


class PtyApp:
    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path, columns: int = 80, lines: int = 24,
                 stderr: Path | None = None) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.master = master
        self.raw = bytearray()
        self.screen = _Screen(columns, lines, self._reply)
        self.stream = pyte.ByteStream(self.screen)
        self._stderr = open(stderr, "wb") if stderr else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=self._stderr, cwd=cwd, env=env,
                                     start_new_session=True, preexec_fn=_take_terminal, close_fds=True)
        os.close(slave)

    def _reply(self, data: str) -> None:
        os.write(self.master, data.encode())

    # -- reading ---------------------------------------------------------------------------------

    def pump(self, timeout: float = 0.05) -> bool:
        """Read what is available (waiting up to ``timeout``); False once the child closed the pty."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.raw.extend(data)
        self.stream.feed(data)
        return True

    def wait_for(self, check: str | Callable[[], bool], timeout: float = 15.0) -> None:
        predicate = (lambda: check in self.text()) if isinstance(check, str) else check
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            if not self.pump() and not predicate():
                raise AssertionError(f"program ended before {check!r} appeared:\n{self.text()}")
        raise AssertionError(f"timed out waiting for {check!r}; screen:\n{self.text()}")

    def settle(self, quiet: float = 0.3, timeout: float = 5.0) -> None:
        """Read until nothing arrives for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        last = len(self.raw)
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            self.pump(0.05)
            if len(self.raw) != last:
                last, quiet_since = len(self.raw), time.monotonic()
            elif time.monotonic() - quiet_since >= quiet:
                return

    def wait_exit(self, timeout: float = 15.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            code = self.proc.poll()
            if code is not None:
                while self.pump(0.05):
                    if not select.select([self.master], [], [], 0)[0]:
                        break
                return code
        raise AssertionError(f"program did not exit; screen:\n{self.text()}")

    # -- what is on screen -----------------------------------------------------------------------

    def _row(self, line: dict) -> str:  # type: ignore[type-arg]
        return "".join(line[x].data for x in range(self.screen.columns)).rstrip()

    def scrollback(self) -> list[str]:
        return [self._row(line) for line in self.screen.history.top]

    def display(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        """Scrollback and screen, as the user would see scrolling up."""
        return "\n".join([*self.scrollback(), *self.display()])

    def resize(self, columns: int, lines: int) -> None:
        """The terminal window changes size: the pty's size, the virtual screen's, and SIGWINCH."""
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.screen.resize(lines, columns)
        os.killpg(self.proc.pid, signal.SIGWINCH)

    # -- typing ----------------------------------------------------------------------------------

    def send(self, data: str | bytes) -> None:
        os.write(self.master, data.encode() if isinstance(data, str) else data)

    def type(self, text: str, enter: bool = True) -> None:
        self.send(text)
        self.pump(0.1)
        if enter:
            self.send("\r")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        os.close(self.master)
        if self._stderr is not subprocess.DEVNULL:
            self._stderr.close()


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
