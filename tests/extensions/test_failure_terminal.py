"""A failing plugin in the terminal interface (the real ``pi`` in a pty): a ``session_start`` that raises and
a ``context`` handler that blocks are shown as notices naming the plugin, and the prompt still gets its
answer."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
from ptyterm import PtyApp  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PLUGIN = textwrap.dedent("""\
    import threading
    from pi_core import hookimpl

    @hookimpl
    def session_start(event, ctx):
        raise RuntimeError("start failed")

    @hookimpl
    def context(event, ctx):
        threading.Event().wait()
    """)


def test_hook_errors_and_timeouts_are_notices_in_the_terminal(tmp_path: Path) -> None:
    project, agent = tmp_path / "project", tmp_path / "agent"
    project.mkdir()
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"plugins": {"hookTimeoutMs": 500}}))
    plugin = tmp_path / "flaky_plugin.py"
    plugin.write_text(PLUGIN)
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm",
           "PI_CODING_AGENT_DIR": str(agent), "PI_NO_OSC52": "1"}
    app = PtyApp([sys.executable, "-m", "pi_core", "-e", str(plugin), "--provider", "faux", "--model", "echo",
                  "--no-session"], env=env, cwd=project, stderr=tmp_path / "stderr.txt", columns=200)
    try:
        app.wait_for("failed in hook 'session_start': RuntimeError: start failed", 60)
        assert "flaky_plugin.py" in app.text()
        app.settle(0.5)  # the editor is up
        app.type("echo this back")
        app.wait_for("failed in hook 'context': HookTimeoutError", 60)
        app.wait_for(lambda: app.text().count("echo this back") >= 2, 30)  # the prompt and its answer
    finally:
        app.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
