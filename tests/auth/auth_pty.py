"""``pi auth login`` in a pseudo-terminal (it refuses to run without one, as pi does)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path


class PtyRun:
    def __init__(self, args: list[str], *, env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        self.master = master
        self.output = ""
        clean = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_core", *args], stdin=slave, stdout=slave,
                                     stderr=slave, cwd=cwd, env={**clean, **env}, start_new_session=True,
                                     close_fds=True)
        os.close(slave)

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.output += data.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output)
            if match:
                return match
            if not self._pump(0.1) and not re.search(pattern, self.output):
                break
        raise AssertionError(f"{pattern!r} not seen; output so far:\n{self.output}")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def wait(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.1)
        while self._pump(0.05):
            pass
        code = self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        os.close(self.master)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
