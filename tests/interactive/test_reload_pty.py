"""``/reload`` in a pseudo-terminal re-reads what pi's docs tell users to reload after editing: keybindings.json,
themes, skills and prompt templates; and the active theme file is reloaded by itself when it changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

from pi_core.modes.interactive.theme import TOKENS

pytestmark = pytest.mark.timeout(120)

SHIFT_TAB = "\x1b[Z"
TRUECOLOUR = {"COLORTERM": "truecolor"}


def footer(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display()[-3:])


def theme_file(path: Path, name: str, colour: str) -> None:
    """A theme drawing everything in ``colour``."""
    colours = {t: colour for t in TOKENS if t not in ("scrollbarTrack", "scrollbarThumb", "searchMatchBg",
                                                      "searchMatchText", "thinkingMax")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "vars": {}, "colors": colours}))


def sgr(hex_colour: str) -> bytes:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"38;2;{r};{g};{b}".encode()


def test_reload_reads_keybindings_json_again(running, tmp_path: Path) -> None:
    app = running()
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps({"app.thinking.cycle": "ctrl+k"}))
    app.send(SHIFT_TAB)  # still pi's key until /reload
    app.wait_for(lambda: "minimal" in footer(app))
    app.type("/reload")
    app.wait_for("Reloaded keybindings")
    app.send("\x0b")  # Ctrl+K now cycles the thinking level
    app.wait_for(lambda: "• low" in footer(app) or "thinking low" in footer(app))
    app.send(SHIFT_TAB)  # and Shift+Tab no longer does
    app.pump(0.4)
    assert "low" in footer(app) and "medium" not in footer(app)
    quit_app(app)


def test_reload_chooses_the_theme_again(running, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    theme_file(agent / "themes" / "cold.json", "cold", "#102030")
    theme_file(agent / "themes" / "warm.json", "warm", "#c08040")
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"theme": "cold"}))
    app = running(env=TRUECOLOUR)
    assert sgr("#102030") in app.raw and sgr("#c08040") not in app.raw
    (agent / "settings.json").write_text(json.dumps({"theme": "warm"}))
    app.type("/reload")
    app.wait_for("Reloaded keybindings")
    app.wait_for(lambda: sgr("#c08040") in app.raw)  # the footer redrawn in the new theme's colours
    quit_app(app)


def test_the_active_theme_file_reloads_when_it_changes(running, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    theme_file(agent / "themes" / "hot.json", "hot", "#102030")
    (agent / "settings.json").write_text(json.dumps({"theme": "hot"}))
    app = running(env=TRUECOLOUR)
    assert sgr("#102030") in app.raw
    app.pump(1.0)  # the file as it was is noted
    theme_file(agent / "themes" / "hot.json", "hot", "#a0b0c0")
    app.pump(1.2)  # no /reload: pi watches its theme file
    app.type("/name Hot")  # a notice, drawn in the theme's colours
    app.wait_for("Session name set: Hot")
    app.wait_for(lambda: sgr("#a0b0c0") in app.raw)
    (agent / "themes" / "hot.json").write_text("{ half written")  # a file being edited keeps the theme
    app.pump(1.2)
    app.type("still here")
    app.wait_for("echo: still here")
    assert "not valid JSON" not in app.text() and sgr("#a0b0c0") in app.raw[-3000:]  # quietly kept
    quit_app(app)


def test_reload_finds_new_skills_and_prompt_templates(running, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    app = running()
    (agent / "prompts").mkdir(parents=True, exist_ok=True)
    (agent / "prompts" / "greet.md").write_text("---\ndescription: Say hello\n---\nSay hello to $1\n")
    (agent / "skills" / "tidy").mkdir(parents=True, exist_ok=True)
    (agent / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up\n---\nTidy steps.\n")
    app.type("/greet Ada")
    app.wait_for("Unknown command /greet")  # not there before /reload
    app.type("/reload")
    app.wait_for("Reloaded keybindings")
    app.wait_for("[Prompts]")  # the listing of what is loaded comes again, as pi's does
    app.type("/greet Ada")
    app.wait_for("echo: Say hello to Ada")
    app.type("/skill:tidy now")
    app.wait_for(lambda: "echo: " in app.text() and "Tidy steps." in app.text())
    quit_app(app)
