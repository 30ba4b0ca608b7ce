"""pi's examples built from pi-tui's widgets (``pi_core.tui``), driven in a pseudo-terminal: questionnaire
(tabs and an inline Editor), preset (a SelectList between DynamicBorder rules, a shortcut), tools (a
SettingsList) and mac-system-theme (a poll of a stand-in ``osascript``)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (the fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
PROBE = Path(__file__).resolve().parents[1] / "fixtures" / "interactive" / "theme_probe.py"
pytestmark = pytest.mark.timeout(120)
DOWN, ENTER, ESC, TAB = "\x1b[B", "\r", "\x1b", "\t"


def with_examples(*names: str, **script: Any) -> dict[str, Any]:
    return {"extensions": [str(EXAMPLES / f"{name}.py") for name in names], **script}


def shown(app: Any, text: str) -> bool:
    return any(text in row for row in app.display())


def tool_results(tmp_path: Path) -> list[str]:
    return [str(e["message"]["content"]) for e in session_lines(tmp_path)
            if e.get("message", {}).get("role") == "toolResult"]


def test_questionnaire_tabs_through_questions_and_takes_a_written_answer(running, tmp_path: Path) -> None:  # noqa: F811
    questions = [
        {"id": "scope", "label": "Scope", "prompt": "How much should change?",
         "options": [{"value": "small", "label": "Small fix"}, {"value": "big", "label": "Rewrite"}]},
        {"id": "priority", "label": "Priority", "prompt": "How urgent is it?",
         "options": [{"value": "low", "label": "Low", "description": "next week"}]},
    ]
    turns = [{"tools": [["questionnaire", {"questions": questions}]]}, {"text": "thanks for answering"}]
    app = running(turns, **with_examples("questionnaire", extra_tools=["questionnaire"]))
    app.type("ask me things")
    app.wait_for(lambda: shown(app, "How much should change?") and shown(app, "□ Scope"))
    assert shown(app, "✓ Submit") and shown(app, "Tab/←→ navigate")
    app.send(DOWN)
    app.wait_for(lambda: shown(app, "> 2. Rewrite"))
    app.send(ENTER)  # answered: on to the next tab
    app.wait_for(lambda: shown(app, "How urgent is it?") and shown(app, "■ Scope"))
    assert shown(app, "next week")
    app.send(DOWN)
    app.send(ENTER)  # "Type something."
    app.wait_for(lambda: shown(app, "Your answer:"))
    app.send("today, please")
    app.send(ENTER)
    app.wait_for(lambda: shown(app, "Ready to submit"))
    assert shown(app, "Scope: Rewrite") and shown(app, "Priority: (wrote) today, please")
    app.send(ENTER)
    app.wait_for("thanks for answering", 30)
    assert "✓ priority: (wrote) today, please" in app.text()  # the result drawn by render_result
    assert "Scope: user selected: 2. Rewrite" in tool_results(tmp_path)[-1]
    assert "Priority: user wrote: today, please" in tool_results(tmp_path)[-1]
    quit_app(app)


def test_questionnaire_escape_cancels(running, tmp_path: Path) -> None:  # noqa: F811
    ask = {"questions": [{"id": "one", "prompt": "Pick", "options": [{"value": "a", "label": "A"}]}]}
    app = running([{"tools": [["questionnaire", ask]]}, {"text": "ok"}],
                  **with_examples("questionnaire", extra_tools=["questionnaire"]))
    app.type("ask")
    app.wait_for(lambda: shown(app, "↑↓ navigate • Enter select • Esc cancel"))
    assert not shown(app, "Submit")  # one question: no tabs
    app.send(ESC)
    app.wait_for("ok", 30)
    assert "User cancelled the questionnaire" in tool_results(tmp_path)[-1] and "Cancelled" in app.text()
    quit_app(app)


def write_presets(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    presets = {"plan": {"tools": ["read", "ls"], "instructions": "You are in PLANNING MODE."},
               "build": {"tools": ["read", "bash", "nope"]}}
    (agent / "presets.json").write_text(json.dumps(presets))


def test_preset_picker_applies_a_preset_and_the_shortcut_cycles(running, tmp_path: Path) -> None:  # noqa: F811
    write_presets(tmp_path)
    app = running([{"text": "planned"}], **with_examples("preset"))
    app.type("/preset")
    app.wait_for(lambda: shown(app, "Select Preset") and shown(app, "(none)"))
    assert any(row.startswith("→ plan") and "tools:read,ls" in row for row in app.display())
    assert shown(app, "↑↓ navigate • enter select • esc cancel") and shown(app, "─" * 80)
    app.send(DOWN)
    app.wait_for(lambda: any(row.startswith("→ build") for row in app.display()))
    app.send(ENTER)
    app.wait_for('Preset "build": Unknown tools: nope')
    app.wait_for('Preset "build" activated')
    app.wait_for(lambda: "preset:build" in "\n".join(app.display()[-3:]))
    app.send("\x1b[117;6u")  # Ctrl+Shift+U: the next preset in name order
    app.wait_for('Preset "plan" activated')
    app.type("hello")
    app.wait_for("planned", 30)
    states = [e["data"] for e in session_lines(tmp_path) if e.get("customType") == "preset-state"]
    assert states == [{"name": "plan"}]  # the system prompt's part: tests/examples/test_terminal_examples.py
    app.type("/preset")
    app.wait_for(lambda: shown(app, "plan (active)"))
    app.send(ESC)
    app.wait_for(lambda: not shown(app, "Select Preset"))
    quit_app(app)


def test_tools_settings_list_switches_tools_and_keeps_the_choice(running, tmp_path: Path) -> None:  # noqa: F811
    app = running([{"text": "first"}], **with_examples("tools"))
    app.type("hi")
    app.wait_for("first", 30)
    app.type("/tools")
    app.wait_for(lambda: shown(app, "Tool Configuration") and shown(app, "Enter/Space to change · Esc to cancel"))
    rows = [row for row in app.display() if "enabled" in row or "disabled" in row]
    bash = next(index for index, row in enumerate(rows) if row[2:].startswith("bash"))
    assert rows[0].startswith("→ ") and rows[bash].rstrip().endswith(" enabled")
    for _ in range(bash):
        app.send(DOWN)
    app.wait_for(lambda: any(row.startswith("→ bash") for row in app.display()))
    app.send(" ")
    app.wait_for(lambda: any(row.startswith("→ bash") and "disabled" in row for row in app.display()))
    app.send(ESC)
    app.wait_for(lambda: not shown(app, "Tool Configuration"))
    saved = [e["data"]["enabledTools"] for e in session_lines(tmp_path) if e.get("customType") == "tools-config"]
    assert saved and "bash" not in saved[-1] and "read" in saved[-1]
    app.type("/tools")
    app.wait_for(lambda: any(row[2:].startswith("bash") and "disabled" in row for row in app.display()))
    app.send(ESC)
    app.wait_for(lambda: not shown(app, "Tool Configuration"))
    quit_app(app)


def test_mac_system_theme_follows_a_stand_in_osascript(running, tmp_path: Path) -> None:  # noqa: F811
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    answer = tmp_path / "dark-mode"
    answer.write_text("true\n")
    script = bin_dir / "osascript"
    script.write_text(f"#!/bin/sh\ncat {answer}\n")
    script.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    app = running(env=env, extensions=[str(EXAMPLES / "mac_system_theme.py"), str(PROBE)])
    app.type("/theme-name")
    app.wait_for("theme is dark")
    answer.write_text("false\n")  # the system switched to light: the next poll (every 2 s) follows
    deadline = time.monotonic() + 15
    while "theme is light" not in app.text():
        assert time.monotonic() < deadline, app.text()
        app.type("/theme-name")
        with contextlib.suppress(AssertionError):
            app.wait_for("theme is light", 1.5)
    quit_app(app)


def test_qna_shows_a_loader_and_loads_the_questions_into_the_editor(running) -> None:  # noqa: F811
    turns = [{"text": "Which database do you use? And which language?"},
             {"text": "Q: Which database do you use?\nA: \n\nQ: Which language?\nA: ", "delta_delay": 0.2}]
    app = running(turns, **with_examples("qna"))
    app.type("help me")
    app.wait_for("And which language?", 30)
    app.type("/qna")
    app.wait_for(lambda: shown(app, "Extracting questions using faux-1...") and shown(app, "esc cancel"))
    assert shown(app, "─" * 80)  # between two rules (BorderedLoader)
    app.wait_for("Questions loaded. Edit and submit when ready.", 30)
    app.wait_for(lambda: shown(app, "Q: Which database do you use?"))  # in the editor now
    app.send("\x03")  # Ctrl+C clears the editor
    app.wait_for(lambda: not shown(app, "Q: Which database"))
    quit_app(app)


def test_qna_loader_is_cancelled_with_escape(running) -> None:  # noqa: F811
    turns = [{"text": "Which database?"}, {"text": "Q: Which database?\nA: " + " and more" * 200, "delta_delay": 0.05}]
    app = running(turns, **with_examples("qna"))
    app.type("help me")
    app.wait_for("Which database?", 30)
    app.type("/qna")
    app.wait_for(lambda: shown(app, "Extracting questions"))
    app.send(ESC)
    app.wait_for("Cancelled")
    app.wait_for(lambda: not shown(app, "Extracting questions"))
    quit_app(app)


def test_summarize_shows_the_summary_as_markdown(running) -> None:  # noqa: F811
    turns = [{"text": "We picked Postgres."}, {"text": "# Summary\n\n**Goal**: pick a database\n\n- Postgres chosen"}]
    app = running(turns, env={"PI_SUMMARY_MODEL": "faux/faux-1"}, **with_examples("summarize"))
    app.type("which database?")
    app.wait_for("We picked Postgres.", 30)
    app.type("/summarize")
    app.wait_for(lambda: shown(app, "Conversation Summary") and shown(app, "Press Enter or Esc to close"))
    assert shown(app, "Goal: pick a database")  # markdown rendered: no ** left
    assert any(row.strip().startswith("•") and "Postgres chosen" in row or "- Postgres" in row
               for row in app.display())
    app.send(ENTER)
    app.wait_for(lambda: not shown(app, "Press Enter or Esc to close"))
    quit_app(app)
