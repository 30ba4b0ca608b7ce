"""Behaviour that existed without a pty test of its own: Ctrl+V pasting copied files (``text/uri-list`` from a
stand-in ``xclip`` or ``wl-paste``), the footer's context figure after ``/compact`` (``?`` until the next answer,
as in pi), and ``/settings`` switching the theme changing the colours on screen, not only the saved setting."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(120)

UP, DOWN, ENTER, ESC = "\x1b[A", "\x1b[B", "\r", "\x1b"


def screen(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(app.display())


def footer_tokens(app) -> str:  # type: ignore[no-untyped-def]
    """The footer's row with the token figures and the model (the last row naming the model)."""
    return next((row for row in reversed(app.display()) if "faux-1" in row), "")


def script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def clipboard_with_files(tmp_path: Path, tool: str, uris: str) -> Path:
    """A stand-in ``xclip`` or ``wl-paste`` whose clipboard holds copied files (as a file manager puts them)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    listing = tmp_path / "uris.txt"
    listing.write_text(uris)
    if tool == "xclip":
        body = f"""case "$*" in
  *TARGETS*) printf 'TARGETS\\ntext/uri-list\\nUTF8_STRING\\n' ;;
  *text/uri-list*) cat "{listing}" ;;
  *UTF8_STRING*) printf 'not the files' ;;
  *) exit 1 ;;
esac
"""
    else:
        body = f"""case "$*" in
  *--list-types*) printf 'text/uri-list\\ntext/plain\\n' ;;
  *text/uri-list*) cat "{listing}" ;;
  *text/plain*) printf 'not the files' ;;
  *) exit 1 ;;
esac
"""
    script(bin_dir / tool, body)
    return bin_dir


def clear_editor(app) -> None:  # type: ignore[no-untyped-def]
    """Ctrl+C empties the editor (the first press only clears, as in pi); wait until it is empty."""
    app.send("\x03")
    app.wait_for(lambda: editor_rows(app)[0].rstrip() == "›")


def editor_rows(app) -> list[str]:  # type: ignore[no-untyped-def]
    rows = app.display()
    start = max(i for i, row in enumerate(rows) if row.startswith(("›", "!")) or row.startswith("› !"))
    return rows[start:start + 3]


def test_ctrl_v_pastes_copied_files_as_their_paths(running, tmp_path: Path) -> None:
    bin_dir = clipboard_with_files(tmp_path, "xclip", "file:///srv/my%20notes.txt\r\nfile:///tmp/plain.txt\r\n")
    app = running(env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":0", "WAYLAND_DISPLAY": ""})
    app.type("compare", enter=False)
    app.send("\x16")  # Ctrl+V
    # one path a line, the spaces decoded, a space after the word before them (pi's paste)
    app.wait_for(lambda: editor_rows(app)[:2] == ["› compare /srv/my notes.txt", "  /tmp/plain.txt"])
    assert "not the files" not in screen(app)
    clear_editor(app)
    quit_app(app)


def test_ctrl_v_in_a_shell_command_quotes_the_paths_on_one_line(running, tmp_path: Path) -> None:
    bin_dir = clipboard_with_files(tmp_path, "wl-paste", "file:///srv/my%20notes.txt\nfile:///tmp/plain.txt\n")
    app = running(env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ""})
    app.type("!wc -l", enter=False)
    app.send("\x16")
    # bash mode: the paths as shell words, quoted where they need it, as pi pastes them
    app.wait_for(lambda: "!wc -l '/srv/my notes.txt' /tmp/plain.txt" in screen(app))
    clear_editor(app)
    quit_app(app)


def test_the_context_figure_is_unknown_after_compact_until_the_next_answer(running, tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    app = running()
    for question in ("a first question " * 10, "a second question " * 10):
        app.type(question.strip())
        app.wait_for(f"echo: {question.strip()[:30]}")
        app.settle(1.0, timeout=15)
    app.wait_for(lambda: re.search(r"\d+\.\d%/200k", footer_tokens(app)) is not None)
    app.type("/compact")
    app.wait_for("Compacted:", 30)
    assert "Compaction failed" not in app.text()
    app.wait_for(lambda: "?/200k" in footer_tokens(app))
    assert not re.search(r"\d+\.\d%/200k", footer_tokens(app))
    app.type("after the compaction")
    app.wait_for("echo: after the compaction")
    app.wait_for(lambda: re.search(r"\d+\.\d%/200k", footer_tokens(app)) is not None)
    assert "?/200k" not in footer_tokens(app)
    quit_app(app)


def rule_colour(app) -> str:  # type: ignore[no-untyped-def]
    """The colour of the rule over the editor (the thinking level's token: ``thinkingOff`` here)."""
    rows = app.display()
    editor = max(i for i, row in enumerate(rows) if row.startswith("›"))  # the editor, under the typed prompts
    return str(app.screen.buffer[editor - 1][0].fg)


def footer_colour(app) -> str:  # type: ignore[no-untyped-def]
    """The colour of the footer's first letter (the folder, in the ``dim`` token)."""
    rows = app.display()
    row = max((i for i, text in enumerate(rows) if "faux-1" in text), default=0) - 1
    if row < 0:  # no footer on screen (a dialog is open)
        return ""
    return str(app.screen.buffer[row][0].fg)


def selected(app) -> str:  # type: ignore[no-untyped-def]
    """The list's selected row (the last one marked: the prompt typed earlier is marked too)."""
    return next((r for r in reversed(app.display()) if r.startswith("› ")), "")


def move_to(app, pattern: str) -> None:  # type: ignore[no-untyped-def]
    """Down through a list until the selected row matches ``pattern``, waiting for each move to show
    (keys sent faster than the list redraws would overshoot)."""
    for _ in range(40):
        row = selected(app)
        if re.match(pattern, row):
            return
        app.send(DOWN)
        app.wait_for(lambda: selected(app) != row)
    raise AssertionError(f"no row matching {pattern!r}:\n{screen(app)}")


def choose_theme(app, name: str) -> None:  # type: ignore[no-untyped-def]
    app.type("/settings")
    app.wait_for("Enter/Space to change · Esc to cancel")
    move_to(app, r"› Theme\s")
    app.send(ENTER)
    app.wait_for(lambda: "Enter/Space to change" not in screen(app))
    move_to(app, rf"› {name}\s*$")
    app.send(ENTER)
    app.wait_for(lambda: any(re.match(rf"› Theme\s+{name}$", r) for r in app.display()))
    app.send(ESC)
    app.wait_for(lambda: "Enter/Space to change" not in screen(app))


def test_switching_the_theme_in_settings_recolours_the_screen(running) -> None:
    app = running(env={"COLORTERM": "truecolor"})
    assert rule_colour(app) == "brightblack"  # system: the terminal's ANSI colours
    choose_theme(app, "light")
    app.wait_for(lambda: rule_colour(app) == "c2c8ca")  # pi's light thinkingOff, as 24-bit colour
    app.wait_for(lambda: footer_colour(app) == "879095")  # the footer's dim text too
    choose_theme(app, "dark")
    app.wait_for(lambda: rule_colour(app) == "6c767b" and footer_colour(app) == "7e888e")  # and pi's dark one
    quit_app(app)
