"""Plugins that shape the terminal (pi_core.tui): pi's examples ported to ``examples/extensions/`` and driven
in a pseudo-terminal — a footer, a header, the working indicator, a component that returns a value."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (the fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
pytestmark = pytest.mark.timeout(90)


def with_examples(*names: str, **script: Any) -> dict[str, Any]:
    return {"extensions": [str(EXAMPLES / f"{name}.py") for name in names], **script}


def test_custom_footer_replaces_and_restores_the_footer(running) -> None:  # noqa: F811
    app = running(**with_examples("custom_footer"))
    assert "thinking" in app.display()[-1]  # pi's footer first
    app.type("/footer")
    app.wait_for(lambda: app.display()[-1].startswith("custom footer"))
    row = app.display()[-2]
    assert row.startswith("◆ faux-1") and row.rstrip().endswith("no branch")
    app.type("/footer")
    app.wait_for("Default footer restored")
    app.wait_for(lambda: "thinking" in app.display()[-1])
    quit_app(app)


def test_custom_header_replaces_the_start_up_header(running) -> None:  # noqa: F811
    app = running(**with_examples("custom_header"))
    screen = app.text()
    assert "π ━━ pi for Python ━━ π" in screen and "version " in screen
    assert "/help for commands" not in screen  # pi's header is gone
    app.type("/builtin-header")
    app.wait_for("Built-in header restored")
    quit_app(app)


def test_working_indicator_message_and_thinking_label(running) -> None:  # noqa: F811
    turns = [{"text": "first " * 400, "delta_delay": 0.01}, {"thinking": "secret plan", "text": "done thinking"}]
    app = running(turns, **with_examples("working_indicator"))
    app.type("/working-indicator none")
    app.wait_for("Working indicator: none")
    app.type("/working-message Crunching numbers")
    app.wait_for("Working message: Crunching numbers")
    app.type("go")
    app.wait_for("esc to interrupt")
    working = next(row for row in app.display() if "esc to interrupt" in row)
    assert working.startswith("Crunching numbers ")  # the plugin's text, no spinner in front of it
    app.wait_for(lambda: "esc to interrupt" not in app.text(), 60)
    app.type("/thinking-label Pondering quietly")
    app.wait_for("Hidden thinking label: Pondering quietly")
    app.send("\x14")  # Ctrl+T hides thinking blocks
    app.type("think")
    app.wait_for("done thinking", 30)
    assert "Pondering quietly" in app.text() and "secret plan" not in app.text()
    quit_app(app)


def test_a_component_takes_the_keys_and_returns_a_value(running, tmp_path: Path) -> None:  # noqa: F811
    ask = {"question": "Which colour?", "options": [{"label": "red"}, {"label": "green", "description": "like grass"},
                                                      {"label": "blue"}]}
    turns = [{"tools": [["question", ask]]}, {"text": "noted"}, {"tools": [["question", ask]]}, {"text": "written"}]
    app = running(turns, **with_examples("question", extra_tools=["question"]))
    app.type("ask me")
    app.wait_for("↑↓ navigate • Enter to select • Esc to cancel")
    assert any(row.startswith("> 1. red") for row in app.display())
    assert any(row.strip() == "like grass" for row in app.display())  # the option's description, under it
    app.send("\x1b[B")
    app.wait_for(lambda: any(row.startswith("> 2. green") for row in app.display()))
    app.send("\r")
    app.wait_for("noted", 30)
    assert "✓ 2. green" in app.text()  # render_result, in the conversation
    results = [e for e in session_lines(tmp_path) if e.get("message", {}).get("role") == "toolResult"]
    assert "User selected: 2. green" in str(results[-1]["message"]["content"])
    app.type("again")
    app.wait_for(lambda: any(row.startswith("  4. Type something.") for row in app.display()))
    for _ in range(3):
        app.send("\x1b[B")
    app.wait_for(lambda: any(row.startswith("> 4. Type something.") for row in app.display()))
    app.send("\r")
    app.wait_for("Your answer:")  # the inline editor (pi_core.tui.Editor)
    app.send("purple")
    app.wait_for(lambda: any("purple" in row for row in app.display()))
    app.send("\x1b")  # back to the options, the text dropped
    app.wait_for(lambda: "Your answer:" not in "\n".join(app.display()))
    app.send("\r")
    app.wait_for("Your answer:")
    app.send("teal, please")
    app.send("\r")
    app.wait_for("written", 30)
    assert "✓ (wrote) teal, please" in app.text()
    results = [e for e in session_lines(tmp_path) if e.get("message", {}).get("role") == "toolResult"]
    assert "User wrote: teal, please" in str(results[-1]["message"]["content"])
    quit_app(app)


def test_status_line_uses_the_theme(running) -> None:  # noqa: F811
    app = running(wait_editor=False, **with_examples("status_line"))
    app.wait_for(lambda: "Ready" in app.display()[-1], 30)  # the status line is the footer's last row
    app.settle(0.2)
    app.type("hello")
    app.wait_for("✓ Turn 1 complete", 30)
    assert "echo: hello" in app.text()
    row = app.screen.buffer[len(app.display()) - 1]  # the status line (checked on screen: the terminal may
    cells = [row[x] for x in range(app.screen.columns)]  # have drawn "● Turn 1..." first and then only the change)
    at = "".join(cell.data for cell in cells).index("✓ Turn 1 complete")
    assert (cells[at].fg, cells[at + 2].fg) == ("green", "brightblack")  # the theme's success and dim tokens
    quit_app(app)


def test_theme_switch_and_list(running) -> None:  # noqa: F811
    app = running(**with_examples("theme_switch"))
    app.type("/themes")
    app.wait_for("Themes: ")
    listed = next(row for row in app.display() if "Themes: " in row)
    assert "dark" in listed and "light" in listed
    app.type("/theme-switch light")
    app.wait_for("Theme: light")
    assert "via get_theme" in next(row for row in app.display() if "Theme: light" in row)  # the Theme object
    app.type("/theme-switch dark")
    app.wait_for("Theme: dark")
    app.type("/theme-switch nope")
    app.wait_for("Theme not switched: no theme named 'nope'")
    quit_app(app)


def test_overlay_returns_its_value_and_a_component_widget(running) -> None:  # noqa: F811
    app = running(**with_examples("overlay_test"))
    app.type("/overlay-test")
    app.wait_for("▶ Search:")
    assert any("╭" in row for row in app.display())  # it draws its own frame (test_overlays.py: where)
    app.send("pi")
    app.wait_for("▶ Search: pi")
    app.send("\r")
    app.wait_for('Search: "pi"')
    app.type("/overlay-test")
    app.wait_for("▶ Search:")
    app.send("\x1b")
    app.wait_for(lambda: not any("Search:" in row for row in app.display()))
    app.type("/counter-widget")
    app.wait_for("[overlay widget: None]··")
    row = next(r for r in app.display() if r.startswith("[overlay widget"))
    assert len(row) == 80  # rendered for the terminal's width
    quit_app(app)


def test_a_plugin_shortcut_runs_its_handler_and_help_lists_it(running) -> None:  # noqa: F811
    app = running(**with_examples("plan_mode"))
    app.send("\x1b\x10")  # Ctrl+Alt+P
    app.wait_for("Plan mode enabled. Built-in write tools disabled.")
    app.wait_for("⏸ plan")
    app.type("/help")
    app.wait_for(lambda: any("Ctrl+Alt+P" in row and "Toggle plan mode" in row for row in app.text().split("\n")))
    app.send("\x1b\x10")
    app.wait_for("Plan mode disabled. Full access restored.")
    quit_app(app)


def test_shortcut_clashes_are_reported_and_the_built_in_key_wins(running) -> None:  # noqa: F811
    clashing = str(Path(__file__).resolve().parents[1] / "fixtures" / "interactive" / "clashing_shortcuts.py")
    app = running(extensions=[clashing])
    app.wait_for("shortcut alt+z registered again; the later one is used")
    app.type("warm up")  # the shortcuts are bound with the editor; the notices come once
    app.wait_for("echo: warm up", 30)
    app.wait_for("shortcut Ctrl+L is the built-in 'app.model.select'; the plugin's is not bound")
    app.send("\x1bz")  # Alt+Z: the later registration runs
    app.wait_for("second alt+z")
    assert "first alt+z" not in app.text()
    app.send("\x0c")  # Ctrl+L: pi's model selector, not the plugin's handler
    app.wait_for("Model")
    app.send("\x1b")
    app.wait_for(lambda: "thinking" in app.display()[-1])
    assert "plugin's ctrl+l ran" not in app.text()
    quit_app(app)


def test_message_renderer_draws_custom_messages(running) -> None:  # noqa: F811
    app = running(**with_examples("message_renderer"))
    app.type("/status-report deploy finished")
    app.wait_for("┃ STATUS [INFO] deploy finished", 30)
    app.wait_for("echo: ", 30)
    assert "[status-report]" not in app.text()  # the default row is replaced
    quit_app(app)


def test_built_in_tool_renderer_restyles_read_and_bash_while_they_run(running) -> None:  # noqa: F811
    slow = "sleep 2; echo finished; exit 3"
    turns = [{"tools": [["read", {"path": "notes.txt", "limit": 5}], ["bash", {"command": slow}]]}, {"text": "all read"}]
    app = running(turns, **with_examples("built_in_tool_renderer", "bash_spawn_hook"))  # it replaces bash
    app.type("look")
    app.wait_for("$ sleep 2; echo finished; exit 3", 30)  # the plugin's call row while it runs...
    app.wait_for("Running...")  # ...and its partial result (is_partial), once output came
    app.wait_for("all read", 30)
    text = app.text()
    assert "read notes.txt (limit=5)" in text and "one" not in text.split("read notes.txt")[1].split("$ ")[0]
    assert re.search(r"\n\s*\d lines\n", text)  # the file counted instead of shown
    assert "exit 3 (2 lines)" in text and "Running..." not in "\n".join(app.display()[-6:])
    app.send("\x0f")  # Ctrl+O: the renderer's expanded form
    app.wait_for(lambda: "finished" in app.text().split("Tool output: expanded")[-1])
    quit_app(app)
