"""pi 1.6's terminal detection and display settings, read as pi reads them (pi-tui's ``detectCapabilities``,
``resolveEscapeTimeoutMs`` and the settings manager's getters): the decisions themselves, without a terminal.
The pty tests in test_terminal_settings_pty.py check that the program follows them."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.modes.interactive.capabilities import (
    Capabilities,
    code_block_indent,
    detect,
    editor_padding,
    escape_timeout,
    hardware_cursor,
    menu_rows,
    output_pad,
    resolve,
)


def no_tmux() -> bool:
    raise AssertionError("tmux is only asked inside tmux")


@pytest.mark.parametrize(("env", "expected"), [
    ({"TERM": "xterm-256color"}, Capabilities(False, False)),  # unknown: no hyperlinks, 256 colours
    ({"TERM": "xterm-256color", "COLORTERM": "truecolor"}, Capabilities(False, True)),
    ({"TERM": "xterm-direct"}, Capabilities(False, True)),
    ({"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, Capabilities(True, True)),
    ({"TERM_PROGRAM": "WezTerm"}, Capabilities(True, True)),
    ({"TERM_PROGRAM": "vscode"}, Capabilities(True, True)),
    ({"TERM": "xterm-ghostty"}, Capabilities(True, True)),
    ({"WT_SESSION": "x"}, Capabilities(True, True)),
    ({"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, Capabilities(False, True)),
    ({"TERM": "screen-256color", "KITTY_WINDOW_ID": "1"}, Capabilities(False, False)),  # screen drops OSC 8
    ({"TERM_PROGRAM": "herdr", "KITTY_WINDOW_ID": "1"}, Capabilities(True, False)),
])
def test_pis_table_of_terminals(env: dict[str, str], expected: Capabilities) -> None:
    assert detect(env, tmux_hyperlinks=no_tmux, platform="linux") == expected


def test_inside_tmux_hyperlinks_follow_what_its_client_forwards() -> None:
    env = {"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "tmux-256color", "KITTY_WINDOW_ID": "1"}
    assert detect(env, tmux_hyperlinks=lambda: True) == Capabilities(True, False)
    assert detect(env, tmux_hyperlinks=lambda: False) == Capabilities(False, False)


class FakeSettings:
    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


def test_variables_override_the_detection_and_settings_override_the_variables() -> None:
    unknown = {"TERM": "xterm"}
    assert resolve(None, {**unknown, "PI_HYPERLINKS": "1", "PI_TRUE_COLOR": "1"}) == Capabilities(True, True)
    assert resolve(None, {"TERM_PROGRAM": "kitty", "PI_HYPERLINKS": "0", "PI_TRUE_COLOR": "0"}) == \
        Capabilities(False, False)
    assert resolve(None, {**unknown, "PI_HYPERLINKS": "auto", "PI_TRUE_COLOR": "yes"}) == Capabilities(False, False)
    settings = FakeSettings({"terminal.hyperlinks": False, "terminal.trueColor": True})
    assert resolve(settings, {**unknown, "PI_HYPERLINKS": "1", "PI_TRUE_COLOR": "0"}) == Capabilities(False, True)
    auto = FakeSettings({"terminal.hyperlinks": "auto", "terminal.trueColor": "auto"})
    assert resolve(auto, {**unknown, "PI_HYPERLINKS": "1"}) == Capabilities(True, False)


def test_a_decided_hyperlink_setting_skips_the_tmux_question() -> None:
    inside = {"TMUX": "x", "TERM": "tmux-256color"}
    assert resolve(None, {**inside, "PI_HYPERLINKS": "1"}, tmux_hyperlinks=no_tmux).hyperlinks is True
    assert resolve(FakeSettings({"terminal.hyperlinks": False}), inside, tmux_hyperlinks=no_tmux).hyperlinks is False


def test_escape_timeout_is_pis() -> None:
    assert escape_timeout({}) == pytest.approx(0.010)
    assert escape_timeout({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}) == pytest.approx(0.100)
    assert escape_timeout({"PI_TUI_ESC_TIMEOUT": "250", "SSH_TTY": "/dev/pts/1"}) == pytest.approx(0.250)
    for ignored in ("0", "-5", "soon", "", "inf"):
        assert escape_timeout({"PI_TUI_ESC_TIMEOUT": ignored}) == pytest.approx(0.010)


def test_display_settings_are_read_as_pi_reads_them() -> None:
    assert [menu_rows(v) for v in (None, 3, 12.7, 1, 50, "8", True)] == [5, 3, 12, 3, 20, 5, 5]
    assert [editor_padding(v, 80) for v in (None, 2, 2.9, -1, "3", True)] == [0, 2, 2, 0, 0, 0]
    assert editor_padding(100, 9) == 4  # never more than leaves the text a column
    assert [output_pad(v) for v in (None, 0, 1, 1.0, True, "1")] == [0, 0, 1, 1, 0, 0]
    assert [code_block_indent(v) for v in (None, "    ", "", 4)] == ["  ", "    ", "", "  "]


def test_hardware_cursor_setting_wins_over_the_variable() -> None:
    assert hardware_cursor(FakeSettings({}), {}) is False
    assert hardware_cursor(FakeSettings({}), {"PI_HARDWARE_CURSOR": "1"}) is True
    assert hardware_cursor(FakeSettings({"showHardwareCursor": False}), {"PI_HARDWARE_CURSOR": "1"}) is False
    assert hardware_cursor(FakeSettings({"showHardwareCursor": True}), {}) is True
