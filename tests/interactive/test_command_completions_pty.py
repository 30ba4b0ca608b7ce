"""A plugin command's argument completions (pi's ``getArgumentCompletions``) in the real ``pi`` on a terminal:
Tab after ``/commands `` offers the sources the commands example declares, and choosing one fills it in."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from ptyterm import PtyApp

from pi_core.testing import FakeProviderServer

pytestmark = pytest.mark.timeout(120)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "commands.py"


def test_tab_offers_a_commands_arguments(fake_provider_server: FakeProviderServer, pi_project: Path,
                                        pi_agent_dir: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-m", "pi_core", "-e", str(EXAMPLE)], env=env, cwd=pi_project,
                 stderr=tmp_path / "stderr.txt")
    try:
        app.wait_for(lambda: "fake-model" in "\n".join(app.display()), 60)  # the editor and its footer are up
        app.settle(0.2)
        app.type("/commands ", enter=False)
        app.send("\t")
        app.wait_for(lambda: all(w in app.text() for w in ("extension", "Extensions", "Prompts", "Skills")), 30)
        app.send("\x15")  # Ctrl+U: clear the line
        app.type("/commands sk", enter=False)
        app.send("\t")
        app.wait_for(lambda: any(line.rstrip().endswith("/commands skill") for line in app.display()), 30)
    finally:
        app.close()
