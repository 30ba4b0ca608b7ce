"""``ctx.ui`` inside ``project_trust`` through the real ``pi`` in a terminal: the hook's dialog is asked before
the interface starts (pi's project-trust example), and its answer decides and is remembered."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from ptyterm import PtyApp

pytestmark = pytest.mark.timeout(120)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "project_trust.py"


def test_a_project_trust_hook_asks_in_the_terminal(tmp_path: Path) -> None:
    project, agent, err = tmp_path / "project", tmp_path / "agent", tmp_path / "stderr.txt"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "marker.py").write_text("from pi_core import hookimpl\n")
    agent.mkdir()
    env = {**os.environ, "TERM": "xterm", "PI_CODING_AGENT_DIR": str(agent), "HOME": str(tmp_path)}
    app = PtyApp([sys.executable, "-m", "pi_core", "-e", str(EXAMPLE)], env=env, cwd=project, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while "choose 1-5" not in err.read_text() and time.monotonic() < deadline:
            app.pump(0.1)
        shown = err.read_text()
        assert f"Project trust for:\n{project}\n  1. Trust and remember" in shown, shown
        app.send("1\r")
        app.wait_exit(60)  # no model is configured: pi stops after the trust question, as it would anyway
    finally:
        app.close()
    assert json.loads((agent / "trust.json").read_text()) == {str(project): True}
    assert "project_trust fired for" in err.read_text()
