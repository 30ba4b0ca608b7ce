"""Ctrl+Z suspends pi to the background and ``fg`` brings it back, as in pi: the program really stops (its
shell runs the next command), the terminal's extended keys are turned off while it is stopped and on again
after, and the editor takes keys again.

pi runs under ``bash -m`` (job control): a program in a process group of its own whose parent is a shell of
the same session — as in a user's terminal. Started as the session leader, the kernel would discard the stop."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from ptyterm import PtyApp
from test_interactive_pty import DRIVER

pytestmark = pytest.mark.timeout(120)

EXTENDED_KEYS_OFF = b"\x1b[<u"  # the kitty keyboard protocol popped...
EXTENDED_KEYS_ON = b"\x1b[>1u"  # ...and pushed again


def test_ctrl_z_stops_pi_and_fg_brings_it_back(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"cwd": str(project), "agent_dir": str(tmp_path / "agent"),
                                  "session_dir": str(tmp_path / "sessions"), "turns": []}))
    pi = f"{shlex.quote(sys.executable)} {shlex.quote(str(DRIVER))} {shlex.quote(str(script))}"
    # the shell's job control needs the terminal on its stderr: the outer shell gives it that
    inner = f"{pi} 2>{shlex.quote(str(tmp_path / 'stderr.txt'))}; echo \"STOPPED-$?\"; fg; echo DONE-$?"
    shell = f"exec bash --norc -m -c {shlex.quote(inner)} 2>&1"
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_NO_OSC52": "1"})
    app = PtyApp(["bash", "--norc", "-c", shell], env=env, cwd=project)
    try:
        app.wait_for(lambda: "thinking" in app.display()[-1], 30)
        app.settle(0.2)
        app.send("\x1a")  # Ctrl+Z
        app.wait_for("STOPPED-148")  # 128 + SIGTSTP: the shell saw pi stop and went on
        off = app.raw.rfind(EXTENDED_KEYS_OFF)
        assert off >= 0, "extended key reporting stays on while pi is stopped"
        app.wait_for(lambda: app.raw.find(EXTENDED_KEYS_ON, off) >= 0)  # back in the foreground: on again
        app.type("after the break", enter=False)
        app.wait_for(lambda: any("after the break" in row for row in app.display()))
        app.send("\x15")  # Ctrl+U: the editor is empty again
        app.wait_for(lambda: not any("after the break" in row for row in app.display()))
        app.send("\x04")  # Ctrl+D ends pi; the shell reports how it ended
        app.wait_for("DONE-0")
    finally:
        app.close()
