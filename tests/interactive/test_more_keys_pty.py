"""Keys and commands that exist but had no test of their own: Ctrl+J, Esc giving queued messages back to the
editor, /quit, a finished /fork in the terminal, and the context figure after /compact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(90)


def editor_rows(app) -> list[str]:  # type: ignore[no-untyped-def]
    rows = app.display()
    start = max(i for i, row in enumerate(rows) if row.startswith("›"))  # the editor is the last one
    return rows[start:start + 3]


def test_ctrl_j_adds_a_line(running) -> None:
    app = running()
    app.type("first", enter=False)
    app.send("\n")  # Ctrl+J
    app.type("second", enter=False)
    app.wait_for(lambda: editor_rows(app)[:2] == ["› first", "  second"])
    app.send("\r")
    app.wait_for("echo: first second")  # one prompt of two lines (markdown joins them in the answer)
    assert "› first\n  second" in app.text()
    quit_app(app)


def test_escape_gives_queued_messages_back_to_the_editor(running, tmp_path: Path) -> None:
    app = running([{"text": "word " * 300, "delta_delay": 0.03}])
    app.type("long answer please")
    app.wait_for("Working")
    app.type("then also this")  # queued as steering
    app.wait_for("queued steer: then also this")
    app.send("\x1b")
    app.wait_for("Aborted", 15)
    app.wait_for(lambda: editor_rows(app)[0] == "› then also this")  # back in the editor, not sent
    app.send("\x15")
    quit_app(app)
    users = [r["message"]["content"][0]["text"] for r in session_lines(tmp_path)
             if r.get("message", {}).get("role") == "user"]
    assert users == ["long answer please"]


def test_quit_ends_pi_cleanly(running, tmp_path: Path) -> None:
    app = running()
    app.type("/quit")
    assert app.wait_exit() == 0
    assert (tmp_path / "agent" / "shutdown.log").read_text() == "shutdown quit\n"


def test_fork_continues_in_a_new_file_with_the_message_in_the_editor(running, tmp_path: Path) -> None:
    app = running()
    app.type("first question")
    app.wait_for("echo: first question")
    app.type("second question")
    app.wait_for("echo: second question")
    app.type("/fork")
    app.wait_for("Fork before which message?")
    app.send("second")
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Forked into")
    app.wait_for(lambda: editor_rows(app)[0] == "› second question")
    app.send("\x15")
    quit_app(app)
    files = sorted((tmp_path / "sessions").glob("*.jsonl"))
    assert len(files) == 2
    fork = [json.loads(line) for line in max(files, key=lambda f: f.stat().st_mtime).read_text().splitlines()]
    texts = [r["message"]["content"][0]["text"] for r in fork if r.get("message", {}).get("role") == "user"]
    assert texts == ["first question"]  # the fork holds the conversation before the chosen message
