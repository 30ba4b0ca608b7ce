"""Plugins' editors (``ctx.ui.set_editor_component`` with a ``pi_core.tui.CustomEditor``): pi's modal-editor,
rainbow-editor and border-status-editor ported to ``examples/extensions/`` and driven in a pseudo-terminal."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (the fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
pytestmark = pytest.mark.timeout(120)


def with_examples(*names: str, **script: Any) -> dict[str, Any]:
    return {"extensions": [str(EXAMPLES / f"{name}.py") for name in names], **script}


def user_texts(tmp_path: Path) -> list[str]:
    messages = [e["message"] for e in session_lines(tmp_path)
                if e.get("type") == "message" and e["message"].get("role") == "user"]
    return [m["content"] if isinstance(m["content"], str) else "".join(part.get("text", "") for part in m["content"])
            for m in messages]


def border_with(app: Any, label: str) -> str:
    return next((row for row in app.display() if row.startswith("─") and label in row), "")


def editor_row(app: Any) -> str:
    return next((row for row in reversed(app.display()) if row.startswith("›")), "")


def test_modal_editor_normal_and_insert_modes(running, tmp_path: Path) -> None:  # noqa: F811
    turns = [{"text": "got it"}, {"text": "word " * 400, "delta_delay": 0.05}]
    app = running(turns, wait_editor=False, **with_examples("modal_editor"))
    app.wait_for(lambda: border_with(app, "INSERT").endswith("INSERT"), 30)
    app.settle(0.2)
    rows = app.display()
    at = rows.index(editor_row(app))
    assert rows[at - 1].startswith("────") and rows[at + 1].rstrip().endswith("INSERT")  # borders hug the text
    app.type("hello", enter=False)
    app.wait_for(lambda: editor_row(app) == "› hello")
    app.send("\x1b")  # insert → normal
    app.wait_for(lambda: bool(border_with(app, "NORMAL")))
    app.send("q")  # printable keys do nothing in normal mode
    app.send("0")  # line start
    app.send("i")
    app.wait_for(lambda: bool(border_with(app, "INSERT")))
    app.send("X")
    app.wait_for(lambda: editor_row(app) == "› Xhello")
    app.send("\x1b")
    app.wait_for(lambda: bool(border_with(app, "NORMAL")))
    for key in "$hx":  # end, left onto the "o", delete it
        app.send(key)
        app.settle(0.1)
    app.wait_for(lambda: editor_row(app) == "› Xhell")
    app.send("\r")  # Enter still sends, in normal mode too
    app.wait_for("got it", 30)
    assert user_texts(tmp_path)[-1] == "Xhell"
    app.send("i")
    app.type("scratch", enter=False)
    app.wait_for(lambda: editor_row(app) == "› scratch")
    app.send("\x03")  # Ctrl+C clears the editor, as pi's does
    app.wait_for(lambda: editor_row(app) == "›")
    app.type("write a lot")
    app.wait_for("word word word", 30)
    app.send("\x1b")  # insert → normal: the run goes on
    app.wait_for(lambda: bool(border_with(app, "NORMAL")))
    assert "Aborted" not in app.text()
    app.send("\x1b")  # in normal mode Esc is pi's: it interrupts
    app.wait_for("Aborted", 15)
    assert quit_app(app) == 0
    assistant = [r["message"] for r in session_lines(tmp_path) if r.get("message", {}).get("role") == "assistant"]
    assert assistant[-1]["stopReason"] == "aborted"


def test_rainbow_editor_colours_ultrathink_and_animates(running, tmp_path: Path) -> None:  # noqa: F811
    app = running([{"text": "thinking hard"}], wait_editor=False, **with_examples("rainbow_editor"))
    app.wait_for(lambda: bool(border_with(app, "────")), 30)
    app.settle(0.2)
    app.type("please ultrathink now", enter=False)
    app.wait_for(lambda: editor_row(app) == "› please ultrathink now")
    typed = len(app.raw)
    for _ in range(40):  # no key is pressed now: what arrives is the animation redrawing the word
        app.pump(0.05)
    drawn = bytes(app.raw[typed:]).decode(errors="replace")
    colours = set(re.findall(r"\x1b\[(?:[0-9;]*;)?38;[25];([\d;]+)m", drawn))
    assert len(colours) > 7, colours  # the seven base colours and the shine's brighter ones
    row = next(line for line in app.screen.buffer.values() if "".join(c.data for c in line.values()).startswith("› please"))
    assert {row[x].fg for x in range(9, 19)} != {"default"}  # the word is coloured on screen
    assert all(row[x].fg == "default" for x in range(2, 8))  # "please" is not
    app.send("\r")
    app.wait_for("thinking hard", 30)
    assert user_texts(tmp_path)[-1] == "please ultrathink now"
    assert quit_app(app) == 0


def test_border_status_editor_shows_the_status_in_its_borders(running, tmp_path: Path) -> None:  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "topic", str(project)], check=True)
    turns = [{"text": "slow " * 200, "delta_delay": 0.02}]
    app = running(turns, wait_editor=False, columns=200, **with_examples("border_status_editor"))
    app.wait_for(lambda: bool(border_with(app, "faux/faux-1 · off")), 30)
    app.wait_for(lambda: "(topic)" in border_with(app, "faux/faux-1"))
    bottom = border_with(app, "faux/faux-1")
    assert "ctx ?" in bottom and bottom.rstrip().endswith("─")
    assert app.display()[-1].strip() == "" or app.display()[-1] == bottom  # pi's footer is gone
    assert "thinking off" not in app.text()
    app.type("go")
    def spinning() -> bool:
        return any(row.startswith("─ ") and row[2] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" for row in app.display())

    app.wait_for(spinning, 30)
    assert "Working" not in "\n".join(app.display())  # the working row is hidden: the border spins instead
    # settled: the context use is known and the spinner is gone (one screen showing both)
    app.wait_for(lambda: "slow slow" in app.text() and not spinning()
                 and re.search(r"ctx \d+%/\d+k", border_with(app, "faux/faux-1")) is not None, 60)
    assert quit_app(app) == 0
