"""pi 1.6's display settings and terminal variables in the real program, in a pseudo-terminal read through pyte:
``editorPaddingX``, ``autocompleteMaxVisible``, ``outputPad``, ``markdown.codeBlockIndent``,
``showHardwareCursor`` / ``PI_HARDWARE_CURSOR``, ``terminal.hyperlinks`` / ``PI_HYPERLINKS``,
``terminal.trueColor`` / ``PI_TRUE_COLOR`` and ``PI_TUI_ESC_TIMEOUT``. Each test fails if its setting is ignored."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(120)

OUTER_TERMINAL = ("TERM_PROGRAM", "KITTY_WINDOW_ID", "WEZTERM_PANE", "ITERM_SESSION_ID", "WT_SESSION", "TMUX",
                  "GHOSTTY_RESOURCES_DIR", "WARP_SESSION_ID", "WARP_TERMINAL_SESSION_UUID", "ALACRITTY_WINDOW_ID",
                  "TERMINAL_EMULATOR", "COLORTERM", "PI_HYPERLINKS", "PI_TRUE_COLOR", "PI_HARDWARE_CURSOR",
                  "PI_TUI_ESC_TIMEOUT", "SSH_CONNECTION", "SSH_TTY")


def plain_terminal(**variables: str) -> dict[str, str]:
    """An xterm pi knows nothing more about (whatever terminal runs the tests), plus ``variables``."""
    return {**{name: "" for name in OUTER_TERMINAL}, **variables}


def settings(tmp_path: Path, values: dict[str, Any]) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(values))


def editor_row(app) -> int:  # type: ignore[no-untyped-def]
    """The editor's first row: the last one with the marker (the transcript's prompts are above it)."""
    return max(i for i, row in enumerate(app.display()) if row.lstrip().startswith("› "))


def menu(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The completion menu's rows: what is drawn between the editor's text and its bottom rule."""
    rows = app.display()
    start = editor_row(app) + 1
    end = next(i for i in range(start, len(rows)) if rows[i].startswith("─"))
    return [row for row in rows[start:end] if row.strip()]


def test_autocomplete_max_visible_sets_the_menus_rows(running, tmp_path: Path) -> None:
    settings(tmp_path, {"autocompleteMaxVisible": 3})
    app = running(env=plain_terminal())
    app.type("/", enter=False)
    app.wait_for(lambda: len(menu(app)) >= 3 and "/login" in menu(app)[0])
    app.settle(0.3)
    assert len(menu(app)) == 3, menu(app)  # prompt_toolkit's own menu shows 16, pi's default 5
    app.send("\x15")
    quit_app(app)


def test_autocomplete_menu_shows_pis_five_rows_by_default(running) -> None:
    app = running(env=plain_terminal())
    app.type("/", enter=False)
    app.wait_for(lambda: len(menu(app)) >= 5 and "/login" in menu(app)[0])
    app.settle(0.3)
    assert len(menu(app)) == 5, menu(app)
    app.send("\x15")
    quit_app(app)


def test_editor_padding_x_keeps_columns_free_on_both_sides(running, tmp_path: Path) -> None:
    settings(tmp_path, {"editorPaddingX": 2})
    app = running(env=plain_terminal())
    app.type("x" * 80, enter=False)
    app.wait_for(lambda: app.display()[editor_row(app) + 1].strip() == "x" * 6)
    rows = app.display()
    at = editor_row(app)
    # two free columns, the marker, 74 columns of text, two free columns (80 in all)
    assert rows[at] == "  › " + "x" * 74, rows[at]
    assert rows[at + 1] == " " * 4 + "x" * 6
    app.send("\x15")
    quit_app(app)


def test_output_pad_and_code_block_indent(running, tmp_path: Path) -> None:
    settings(tmp_path, {"outputPad": 1, "markdown": {"codeBlockIndent": "    "}})
    app = running([{"text": "Look:\n\n```python\ndef f():\n    return 1\n```\n\nThat is all."}], env=plain_terminal())
    app.type("show me")
    app.wait_for("That is all.")
    app.settle()
    rows = app.text().split("\n")
    for expected in (" › show me", " Look:", " ```python", "     def f():", "         return 1", " ```",
                     " That is all."):
        assert expected in rows, (expected, rows)
    assert quit_app(app) == 0


def test_hardware_cursor_is_hidden_and_drawn_unless_asked_for(running, tmp_path: Path) -> None:
    settings(tmp_path, {"showHardwareCursor": False})  # the setting wins over the variable
    app = running(env=plain_terminal(PI_HARDWARE_CURSOR="1"))
    app.type("abc", enter=False)
    app.wait_for(lambda: app.display()[editor_row(app)] == "› abc")
    app.settle(0.3)
    cursor = app.screen.cursor
    assert cursor.hidden, "pi hides the terminal's cursor and draws its own"
    assert (cursor.y, cursor.x) == (editor_row(app), 5)
    assert app.screen.buffer[cursor.y][cursor.x].reverse, "the drawn cursor: the cell in reverse video"
    assert not app.screen.buffer[cursor.y][cursor.x - 1].reverse
    app.send("\x15")
    quit_app(app)
    assert not app.screen.cursor.hidden, "the terminal gets its cursor back"


def test_pi_hardware_cursor_shows_the_terminals_cursor(running) -> None:
    app = running(env=plain_terminal(PI_HARDWARE_CURSOR="1"))
    app.type("abc", enter=False)
    app.wait_for(lambda: app.display()[editor_row(app)] == "› abc")
    app.settle(0.3)
    cursor = app.screen.cursor
    assert not cursor.hidden
    assert (cursor.y, cursor.x) == (editor_row(app), 5)
    assert not app.screen.buffer[cursor.y][cursor.x].reverse
    app.send("\x15")
    quit_app(app)


LINKED = "See [the docs](https://example.com/docs) now."


def test_pi_hyperlinks_turns_osc8_links_on_for_an_unknown_terminal(running) -> None:
    app = running([{"text": LINKED}], env=plain_terminal(PI_HYPERLINKS="1"))
    app.type("link please")
    app.wait_for("now.")
    quit_app(app)
    assert b"\x1b]8;;https://example.com/docs\x1b\\" in app.raw
    assert "See the docs now." in app.text()


def test_terminal_hyperlinks_setting_wins_and_links_show_their_address(running, tmp_path: Path) -> None:
    settings(tmp_path, {"terminal": {"hyperlinks": False}})
    app = running([{"text": LINKED}], env=plain_terminal(PI_HYPERLINKS="1"))
    app.type("link please")
    app.wait_for("now.")
    quit_app(app)
    assert b"\x1b]8;;https" not in app.raw
    assert "See the docs (https://example.com/docs) now." in app.text()


HEADING_24 = re.compile(rb"\x1b\[38;2;\d+;\d+;\d+;1;4mBig heading")
HEADING_256 = re.compile(rb"\x1b\[38;5;\d+;1;4mBig heading")


def test_pi_true_color_writes_24_bit_colours(running, tmp_path: Path) -> None:
    settings(tmp_path, {"theme": "dark"})
    app = running([{"text": "# Big heading"}], env=plain_terminal(PI_TRUE_COLOR="1"))
    app.type("show me")
    app.wait_for("Big heading")
    quit_app(app)
    assert HEADING_24.search(bytes(app.raw))


def test_terminal_true_color_setting_wins(running, tmp_path: Path) -> None:
    settings(tmp_path, {"theme": "dark", "terminal": {"trueColor": False}})
    app = running([{"text": "# Big heading"}], env=plain_terminal(PI_TRUE_COLOR="1", COLORTERM="truecolor"))
    app.type("show me")
    app.wait_for("Big heading")
    quit_app(app)
    raw = bytes(app.raw)
    assert HEADING_256.search(raw) and not HEADING_24.search(raw)


def test_pi_tui_esc_timeout_lets_a_slow_alt_enter_arrive(running) -> None:
    """Esc and Enter 0.4 s apart: with a 3 s escape timeout they are still Alt+Enter (a new line), where pi's
    default 10 ms would take an Escape and then send the text."""
    app = running(env=plain_terminal(PI_TUI_ESC_TIMEOUT="3000"))
    app.type("hello", enter=False)
    app.wait_for(lambda: app.display()[editor_row(app)] == "› hello")
    app.send("\x1b")
    time.sleep(0.4)
    app.send("\r")
    app.type("world", enter=False)
    app.wait_for(lambda: app.display()[editor_row(app) + 1] == "  world")
    assert app.display()[editor_row(app)] == "› hello"
    assert "echo: hello" not in app.text()
