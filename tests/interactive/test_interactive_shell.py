"""Handing the terminal to a program: pi's interactive-shell example ported (``tui.stop()`` / ``tui.start()`` in a
``ctx.ui.custom`` factory) and driven in a pseudo-terminal — the program reads a line from the real terminal in
cooked mode, pi comes back afterwards and records how it ended."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (the fixture)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "interactive_shell.py"
pytestmark = pytest.mark.timeout(120)

ASK = """import sys
from pathlib import Path
print("NAME?", flush=True)
name = sys.stdin.readline().strip()
Path(sys.argv[1]).write_text(name)
sys.exit(3)
"""


def editor_row(app: Any) -> str:
    return next((row for row in reversed(app.display()) if row.startswith("›")), "")


def test_a_program_gets_the_terminal_and_pi_comes_back(running, tmp_path: Path) -> None:  # noqa: F811
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ask = bin_dir / "ask-name"
    ask.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'ask.py'} \"$@\"\n")
    ask.chmod(0o755)
    (tmp_path / "ask.py").write_text(ASK)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "INTERACTIVE_COMMANDS": "ask-name",
           "SHELL": "/bin/sh"}
    app = running(env=env, extensions=[str(EXAMPLE)])
    app.type(f"!i ask-name {tmp_path / 'first.txt'}")  # forced with !i
    app.wait_for("NAME?", 30)
    app.type("alice")  # Enter is a newline again: the terminal is back in cooked mode
    app.wait_for("(interactive command exited with code 3)", 30)
    assert (tmp_path / "first.txt").read_text() == "alice"
    app.wait_for(lambda: editor_row(app).startswith("›"))
    app.type(f"!ask-name {tmp_path / 'second.txt'}")  # found by name (INTERACTIVE_COMMANDS)
    app.wait_for(lambda: app.text().count("NAME?") == 2, 30)
    app.send("\x03")  # Ctrl+C is the program's: it dies, pi stays
    app.wait_for(lambda: "(interactive command exited with code" in app.text().split("NAME?")[-1], 30)
    assert not (tmp_path / "second.txt").exists()
    app.type("still here")
    app.wait_for("echo: still here", 30)
    assert quit_app(app) == 0
    bash = [e["message"] for e in session_lines(tmp_path) if e.get("message", {}).get("role") == "bashExecution"]
    assert bash[0]["exitCode"] == 3 and bash[0]["output"] == "(interactive command exited with code 3)"
