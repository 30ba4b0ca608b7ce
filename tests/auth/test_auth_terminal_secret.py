"""An API key typed into ``/login`` in the terminal is masked: the real program in a pseudo-terminal,
every byte it wrote checked for the key."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))

pytestmark = pytest.mark.timeout(120)

KEY = "sk-typed-in-the-terminal-4f9a"


def test_the_key_typed_into_login_is_masked(tmp_path: Path) -> None:
    from ptyterm import PtyApp

    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GROQ_API_KEY")}
    env.update({"TERM": "xterm", "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-m", "pi_core", "--provider", "faux", "--no-session"], env=env, cwd=project,
                 stderr=tmp_path / "stderr.txt")
    try:
        app.wait_for(lambda: "faux" in app.display()[-1] or "thinking" in app.display()[-1], 40)
        app.settle(0.3)
        app.send("/login groq")
        app.settle(0.3)
        app.send("\r")
        app.wait_for("API key", 20)
        app.settle(0.3)
        app.send(KEY)
        app.wait_for("*" * len(KEY), 10)  # one star per character typed
        assert KEY not in app.text()
        app.send("\r")
        app.wait_for("Saved API key for", 20)
        app.settle(0.3)
        app.send("\x04")
        app.wait_exit()
    finally:
        app.close()
    assert json.loads((agent / "auth.json").read_text())["groq"] == {"type": "api_key", "key": KEY}
    raw = bytes(app.raw)
    assert KEY.encode() not in raw and KEY[:12].encode() not in raw  # not even drawn and erased
