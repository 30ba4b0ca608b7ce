"""``/hotkeys``, ``/changelog``, ``/debug``, ``/trust`` and an unknown ``/word`` in the real program, in a
pseudo-terminal read through pyte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(90)


def screen(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display())


SHORTCUT_PLUGIN = '''
from pi_core import hookimpl

@hookimpl
def session_start(event, ctx):
    ctx.register_shortcut("ctrl+alt+p", lambda c: None, description="Toggle plan mode")
'''


def test_hotkeys_lists_remapped_keys_and_plugin_shortcuts(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(parents=True, exist_ok=True)
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps(
        {"app.model.select": ["ctrl+k", "alt+m"], "app.tools.expand": [], "app.session.tree": "ctrl+shift+t"}))
    plugin = tmp_path / "shortcut.py"
    plugin.write_text(SHORTCUT_PLUGIN)
    app = running(extensions=[str(plugin)])
    app.type("/hotkeys")
    app.wait_for("Toggle plan mode")
    app.settle()
    text = app.text()
    assert re.search(r"Ctrl\+K, Alt\+M +Open the model selector", text), text
    assert re.search(r"\(unbound\) +Expand or collapse tool output", text), text
    assert re.search(r"Ctrl\+Shift\+T +Open the session tree", text), text
    assert re.search(r"Shift\+Tab +Cycle the thinking level", text), text  # a default stays as pi binds it
    assert re.search(r"Ctrl\+Alt\+P +Toggle plan mode", text), text
    assert "Extensions" in text and "Keyboard shortcuts" in text
    quit_app(app)
    assert not list((tmp_path / "sessions").glob("*.jsonl")), "nothing was sent to the model (pi saves from then)"


def test_unknown_command_is_not_sent_and_names_the_closest(running, tmp_path: Path) -> None:
    app = running()
    app.type("/hotkey")
    app.wait_for("Unknown command /hotkey")
    app.settle()
    assert "/hotkeys" in app.text()
    app.type("/zzqqxx")
    app.wait_for("Unknown command /zzqqxx")
    app.type("hello")
    app.wait_for("echo: hello")  # the model saw only the real prompt
    quit_app(app)
    users = [r["message"]["content"] for r in session_lines(tmp_path)
             if r["type"] == "message" and r["message"]["role"] == "user"]
    assert len(users) == 1 and "hello" in json.dumps(users[0])


def test_changelog_shows_the_entries(running) -> None:
    app = running()
    app.type("/changelog")
    app.wait_for("What's New")
    app.wait_for("[0.1.0]")
    quit_app(app)


def test_debug_writes_the_screen_and_messages(running, tmp_path: Path) -> None:
    app = running()
    app.type("say something")
    app.wait_for("echo: say something")
    app.type("/debug")
    app.wait_for("Debug log written")
    log = (tmp_path / "agent" / "pi-debug.log").read_text()
    assert "=== All rendered lines with visible widths ===" in log
    assert "=== Agent messages (JSONL) ===" in log
    messages = [json.loads(line) for line in log.split("=== Agent messages (JSONL) ===\n", 1)[1].splitlines()
                if line.strip()]
    assert [m["role"] for m in messages][-2:] == ["user", "assistant"]
    assert re.search(r"^\[\d+\] \(w=\d+\) \".*thinking", log, re.M), log  # the footer's row is recorded
    quit_app(app)


def test_trust_saves_the_decision_for_the_next_start(running, tmp_path: Path) -> None:
    app = running()
    app.type("/trust")
    app.wait_for("Do not trust")
    assert "Saved decision: none" in app.text() and "Current session: untrusted" in app.text()
    app.send("\x1b[B")  # down: "Trust parent folder (...)"
    app.pump(0.2)
    app.send("\x1b[B")  # down: "Do not trust"
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Saved trust decision: untrusted")
    store = json.loads((tmp_path / "agent" / "trust.json").read_text())
    assert store == {str((tmp_path / "project").resolve()): False}
    app.type("/trust")
    app.wait_for(lambda: "Do not trust  (saved)" in app.text())
    assert "Saved decision: untrusted (/" in app.text()
    app.send("\r")  # "Trust"
    app.wait_for("Saved trust decision: trusted")
    assert json.loads((tmp_path / "agent" / "trust.json").read_text()) == {str((tmp_path / "project").resolve()): True}
    quit_app(app)
