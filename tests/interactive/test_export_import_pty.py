"""``/export [path]`` and ``/import <path>`` in the real program, in a pseudo-terminal read through pyte: HTML
by default (pi's file name, in the working folder), JSONL for a ``.jsonl`` path (the active branch only, as a
session of its own); importing copies a session file into the session folder, keeping its id, and continues it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(120)


def test_export_writes_html_by_default_and_jsonl_for_a_jsonl_path(running, tmp_path: Path) -> None:
    app = running()
    app.type("first question")
    app.wait_for("echo: first question")
    app.type("/export")
    app.wait_for("Session exported to:")
    app.settle()
    project = tmp_path / "project"
    pages = list(project.glob("pi-session-*.html"))
    assert len(pages) == 1, app.text()
    page = pages[0].read_text()
    assert "first question" in page and "echo: first question" in page
    app.type('/export "out dir/my copy.html"')
    app.wait_for(lambda: app.text().count("Session exported to:") == 2)
    assert (project / "out dir" / "my copy.html").is_file()
    app.type("/export saved/branch.jsonl")
    app.wait_for(lambda: app.text().count("Session exported to:") == 3)
    quit_app(app)
    lines = [json.loads(line) for line in (project / "saved" / "branch.jsonl").read_text().splitlines()]
    original = session_lines(tmp_path)
    assert lines[0]["type"] == "session" and lines[0]["id"] == original[0]["id"]
    assert lines[0]["cwd"] == str(project)
    assert [e["id"] for e in lines[1:]] == [e["id"] for e in original[1:]]
    assert [e["parentId"] for e in lines[1:]] == [None, *[e["id"] for e in lines[1:-1]]]


def test_export_renders_markdown_in_the_terminal_theme(running, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"theme": "light"}))
    app = running([{"text": "## Findings\n\n| file | lines |\n|---|---|\n| notes.txt | 2 |\n\nThat is all."}])
    app.type("look")
    app.wait_for("That is all.")
    app.type("/export themed.html")
    app.wait_for("Session exported to:")
    quit_app(app)
    page = (tmp_path / "project" / "themed.html").read_text()
    assert "<h2>Findings</h2>" in page and "<td>notes.txt</td>" in page
    # the light theme the terminal draws with: pi 1.6's light export colours
    assert "--pageBg:#efeeee;--cardBg:#f7f6f6;--infoBg:#ede3dd" in page


def test_import_continues_a_session_file_keeping_its_id(running, tmp_path: Path) -> None:
    app = running()
    app.type("remember the word kiwi")
    app.wait_for("echo: remember the word kiwi")
    app.type("/export elsewhere/kiwi.jsonl")
    app.wait_for("Session exported to:")
    quit_app(app)
    exported = tmp_path / "project" / "elsewhere" / "kiwi.jsonl"
    session_id = json.loads(exported.read_text().splitlines()[0])["id"]
    before = set((tmp_path / "sessions").glob("*.jsonl"))

    app = running()
    app.type("/import")
    app.wait_for("Usage: /import <path.jsonl>")
    app.type("/import elsewhere/missing.jsonl")
    app.wait_for("Failed to import session")
    app.type("/import elsewhere/kiwi.jsonl")
    app.wait_for("Replace current session with elsewhere/kiwi.jsonl?")
    app.send("\x1b[B")  # No
    app.pump(0.2)
    app.send("\r")
    app.wait_for("Import cancelled")
    assert not (tmp_path / "sessions" / "kiwi.jsonl").exists()
    app.type("/import elsewhere/kiwi.jsonl")
    app.wait_for(lambda: app.text().count("Replace current session with") == 2)
    app.send("\r")  # Yes
    app.wait_for("Session imported from: elsewhere/kiwi.jsonl")
    app.type("what was the word?")
    app.wait_for("echo: what was the word?")
    quit_app(app)
    imported = tmp_path / "sessions" / "kiwi.jsonl"
    records = [json.loads(line) for line in imported.read_text().splitlines()]
    assert records[0]["id"] == session_id
    users = [json.dumps(r["message"]["content"]) for r in records
             if r["type"] == "message" and r["message"]["role"] == "user"]
    assert "kiwi" in users[0] and "what was the word" in users[-1]
    assert exported.read_text().count("\n") < imported.read_text().count("\n")  # the source is left as it was
    assert set((tmp_path / "sessions").glob("*.jsonl")) - before == {imported}
