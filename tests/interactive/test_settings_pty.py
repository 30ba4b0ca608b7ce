"""``/settings`` and ``/scoped-models`` in the real program, in a pseudo-terminal read through pyte: the
settings list writes the global settings.json at once and the session uses each change; the scoped-models
selector changes what Ctrl+P cycles through and saves ``enabledModels`` with Ctrl+S."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running, session_lines  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(120)

UP, DOWN, ENTER, ESC = "\x1b[A", "\x1b[B", "\r", "\x1b"


def screen(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display())


def footer(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display()[-3:])


def press(app, key: str, times: int = 1) -> None:  # type: ignore[no-untyped-def]
    for _ in range(times):
        app.send(key)
        app.pump(0.1)
    app.settle(0.2)


def selected(app) -> str:  # type: ignore[no-untyped-def]
    return next((row for row in app.display() if row.startswith("› ") and "  " in row[2:]), "")


def global_settings(tmp_path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((tmp_path / "agent" / "settings.json").read_text())


def test_settings_list_writes_each_change_and_the_session_uses_it(running, tmp_path: Path) -> None:
    app = running([{"thinking": "secret reasoning", "text": "visible answer"}])
    assert "(auto)" in footer(app)
    app.type("/settings")
    app.wait_for("Enter/Space to change · Esc to cancel")
    assert selected(app).split() == ["›", "Auto-compact", "true"]
    assert "Automatically compact context when it gets too large" in screen(app)
    press(app, ENTER)  # Auto-compact: true → false, saved at once
    app.wait_for(lambda: selected(app).split() == ["›", "Auto-compact", "false"])
    assert global_settings(tmp_path) == {"compaction": {"enabled": False}}
    press(app, DOWN, 4)  # Steering mode
    assert selected(app).split()[1:3] == ["Steering", "mode"]
    press(app, " ")  # Space changes too
    app.wait_for(lambda: selected(app).split()[-1] == "all")
    press(app, DOWN, 2)  # Thinking level (faux-1 reasons): off → minimal
    press(app, ENTER)
    app.wait_for(lambda: selected(app).split()[-1] == "minimal")
    press(app, DOWN)  # Hide thinking
    press(app, ENTER)
    app.wait_for(lambda: selected(app).split()[-1] == "true")
    press(app, ESC)
    app.wait_for(lambda: "Enter/Space to change" not in screen(app))
    assert global_settings(tmp_path) == {"compaction": {"enabled": False}, "steeringMode": "all",
                                         "defaultThinkingLevel": "minimal", "hideThinkingBlock": True}
    app.wait_for(lambda: "(auto)" not in footer(app) and "minimal" in footer(app))
    app.type("go")
    app.wait_for("visible answer")
    assert "secret reasoning" not in app.text() and "Thinking…" in app.text()  # hidden from now on
    quit_app(app)
    levels = [r["thinkingLevel"] for r in session_lines(tmp_path) if r["type"] == "thinking_level_change"]
    assert levels[-1] == "minimal"


def test_settings_theme_submenu_switches_and_saves_the_theme(running, tmp_path: Path) -> None:
    app = running()
    app.type("/settings")
    app.wait_for("Enter/Space to change · Esc to cancel")
    press(app, UP)  # from the first item up to the last: Theme
    assert selected(app).split()[1] == "Theme"
    press(app, ENTER)
    app.wait_for(lambda: "Enter to choose · Esc to go back" in screen(app))
    rows = app.display()
    assert any(r.strip() in ("light", "› light") for r in rows) and any(r.strip().endswith("dark") for r in rows)
    while not any(r == "› light" for r in app.display()):
        press(app, DOWN)
    press(app, ENTER)
    app.wait_for(lambda: selected(app).split()[1:] == ["Theme", "light"])
    assert global_settings(tmp_path) == {"theme": "light"}
    press(app, ESC)
    quit_app(app)


def test_settings_esc_in_a_submenu_goes_back_without_a_change(running, tmp_path: Path) -> None:
    app = running()
    app.type("/settings")
    app.wait_for("Enter/Space to change · Esc to cancel")
    press(app, UP, 2)  # Default thinking level per model
    assert "Default thinking level per model" in selected(app)
    press(app, ENTER)
    app.wait_for("Per-Model Thinking Level")
    assert "faux/faux-1" in screen(app) and "faux/faux-2" not in screen(app)  # only models that reason
    press(app, ENTER)  # faux-1
    app.wait_for("Thinking level for faux/faux-1")
    while not any(r == "› high" for r in app.display()):
        press(app, DOWN)
    press(app, ENTER)
    app.wait_for(lambda: selected(app).split()[-2:] == ["1", "model"])
    assert global_settings(tmp_path) == {"modelThinkingLevels": {"faux/faux-1": "high"}}
    app.wait_for(lambda: "high" in footer(app))  # the current model's override applies now
    press(app, ENTER)
    app.wait_for("Per-Model Thinking Level")
    press(app, ESC)
    app.wait_for(lambda: "Default thinking level per model" in selected(app))
    press(app, ESC)
    assert global_settings(tmp_path) == {"modelThinkingLevels": {"faux/faux-1": "high"}}
    quit_app(app)


def test_scoped_models_change_what_ctrl_p_cycles_and_ctrl_s_saves(running, tmp_path: Path) -> None:
    app = running()
    app.type("/scoped-models")
    app.wait_for("Model Configuration")
    assert "[✓] faux/faux-1" in screen(app) and "[✓] faux/faux-2" in screen(app)
    assert "2 of 2 enabled" in screen(app)
    press(app, DOWN)
    press(app, ENTER)  # faux-2 off: the session cycles through faux-1 only
    app.wait_for("[ ] faux/faux-2")
    assert "1 of 2 enabled" in screen(app)
    assert not (tmp_path / "agent" / "settings.json").exists()  # session-only until Ctrl+S
    press(app, "\x13")  # Ctrl+S
    app.wait_for("Model selection saved to settings")
    assert global_settings(tmp_path) == {"enabledModels": ["faux/faux-1"]}
    press(app, ESC)
    app.wait_for(lambda: "Model Configuration" not in screen(app))
    app.send("\x10")  # Ctrl+P
    app.wait_for("No other model to switch to")
    assert "faux-1" in footer(app)
    app.type("/scoped-models")
    app.wait_for("Model Configuration")
    app.type("two", enter=False)  # search
    app.wait_for(lambda: "] faux/faux-1" not in screen(app) and "] faux/faux-2" in screen(app))
    press(app, "\x01")  # Ctrl+A: enable every match
    app.wait_for("2 of 2 enabled")
    press(app, ESC)
    app.send("\x10")
    app.wait_for(lambda: "faux-2" in footer(app))
    quit_app(app)


def test_reload_applies_settings_edited_since_the_start(running, tmp_path: Path) -> None:
    app = running()
    assert "(auto)" in footer(app)
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    app.type("/reload")
    app.wait_for("Reloaded")
    app.wait_for(lambda: "(auto)" not in footer(app))
    quit_app(app)
