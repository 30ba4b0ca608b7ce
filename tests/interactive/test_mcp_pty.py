"""``/mcp`` in the terminal: the real program in a pseudo-terminal with a real MCP server (the SDK demo server of
tests/mcp). The menu lists the servers, one server's actions, its exposure; picking ``direct`` saves it to
``mcp.json`` and the next request declares the server's tools."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from ptyterm import PtyApp

from pi_core.testing import FakeProviderServer

DEMO = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "demo_server.py"
ENTER, ESC = "\r", "\x1b"
pytestmark = pytest.mark.timeout(180)


def screen(app: PtyApp) -> str:
    return "\n".join(app.display())


def selected(app: PtyApp) -> str:
    """The open menu's selected row (the last ``›`` row: the ones above are the conversation's prompts)."""
    return next((row for row in reversed(app.display()) if row.startswith("› ") and len(row) > 2), "")


def choose(app: PtyApp, filter_text: str, expected: str) -> None:
    """Type ``filter_text`` into the open menu's filter, wait until ``expected`` is the selected row, pick it."""
    app.type(filter_text, enter=False)
    app.wait_for(lambda: expected in selected(app), 30)
    app.send(ENTER)


def wait_connected(app: PtyApp, timeout: float = 60) -> None:
    """Ask ``/mcp status`` until the server is connected (it connects in the background at start)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.wait_for(lambda: any(row.rstrip() == "›" for row in app.display()), 30)
        app.type("/mcp status")
        app.settle(0.5)
        if "demo: connected · 13 tools" in app.text():
            return
    raise AssertionError(f"the demo server did not connect; screen:\n{app.text()}")


def test_mcp_menu_changes_a_servers_exposure_and_the_next_request_declares_its_tools(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path, tmp_path: Path) -> None:
    fake_provider_server.script("hello back")
    config = pi_agent_dir / "mcp.json"
    server = {"command": sys.executable, "args": [str(DEMO)]}
    config.write_text(json.dumps({"mcpServers": {"demo": server, "other": {**server, "enabled": False}}}))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-m", "pi_core"], env=env, cwd=pi_project, stderr=tmp_path / "stderr.txt",
                 columns=200)  # wide enough for the menu titles, which name the config file
    try:
        app.wait_for(lambda: "fake-model" in screen(app), 60)
        app.settle(0.5)
        wait_connected(app)
        app.type("/mcp")
        app.wait_for("MCP servers  (type to filter, Enter to choose, Esc to cancel)", 30)
        app.wait_for(lambda: "other — disabled · codemode · global" in screen(app), 30)
        assert selected(app).startswith("› demo — ")
        app.send(ENTER)
        app.wait_for(lambda: "Exposure: codemode" in screen(app) and "Tools (13)" in screen(app), 30)
        choose(app, "expo", "Exposure: codemode")
        app.wait_for(f"Exposure of demo (saved to {config})", 30)
        assert "✓ codemode — not declared; codemode scripts call the tools" in screen(app)
        choose(app, "direct", "direct — declared to the model like built-in tools")
        app.wait_for(lambda: "demo: exposure direct · connected · 13 tools" in screen(app), 60)
        app.wait_for(lambda: "Exposure: direct" in screen(app), 30)  # back in the server's menu
        assert json.loads(config.read_text())["mcpServers"]["demo"]["exposure"] == "direct"
        app.send(ESC)
        app.wait_for(lambda: "demo — connected · 13 tools · resources · direct · global" in screen(app), 30)
        app.send(ESC)
        app.wait_for(lambda: any(row.rstrip() == "›" for row in app.display()), 30)  # the empty editor again
        app.type("hi", enter=False)
        app.wait_for(lambda: any(row.rstrip() == "› hi" for row in app.display()), 30)
        app.send(ENTER)
        app.wait_for("hello back", 60)
        app.send("\x04")  # Ctrl+D on the empty editor
        assert app.wait_exit(60) == 0
    finally:
        app.close()
    declared = [t["function"]["name"] for t in fake_provider_server.requests[0].body["tools"]]
    assert "mcp__demo__echo" in declared and not [n for n in declared if n.startswith("mcp__other__")]
    assert json.loads(config.read_text())["mcpServers"]["other"]["enabled"] is False  # untouched
    assert b"\x1b[3J" not in app.raw and b"\x1b[2J" not in app.raw  # the menus never clear the screen
