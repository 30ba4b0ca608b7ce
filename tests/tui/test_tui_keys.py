"""Naming keys in raw terminal input (``pi_core.tui.matches_key`` and friends): legacy sequences, xterm's
modifyOtherKeys and the kitty keyboard protocol, with its key-release events."""

from __future__ import annotations

import pytest

from pi_core.tui import Key, is_key_release, is_key_repeat, matches_key, parse_key


@pytest.mark.parametrize(("data", "key"), [
    ("\x1b", "escape"), ("\x1b[27u", "escape"), ("\r", "enter"), ("\r", "return"), ("\n", "enter"),
    ("\x1b[A", "up"), ("\x1bOA", "up"), ("\x1b[1;5A", "ctrl+up"), ("\x1b[Z", "shift+tab"), ("\t", "tab"),
    ("\x7f", "backspace"), ("\x1b[3~", "delete"), ("\x1b[5~", "pageUp"), ("\x1b[H", "home"), ("\x1b[1~", "home"),
    ("\x03", "ctrl+c"), ("\x1b[99;5u", "ctrl+c"), ("\x1b[27;5;99~", "ctrl+c"), ("\x1bx", "alt+x"),
    ("\x1b[117;6u", "ctrl+shift+u"), ("\x1b[27;6;85~", Key.ctrl_shift("u")), ("a", "a"), ("A", "shift+a"),
    (" ", "space"), ("\x1b[97;1:3u", "a"), ("\x1b[15~", "f5"), ("\x1bOP", "f1"), ("+", "+"),
])
def test_matches_key_understands_each_spelling(data: str, key: str) -> None:
    assert matches_key(data, key)


@pytest.mark.parametrize(("data", "key"), [
    ("\x1b[B", "up"), ("a", "ctrl+a"), ("\x1b[99;5u", "c"), ("\x1bx", "x"), ("\r", "tab"), ("A", "a"),
])
def test_matches_key_tells_keys_apart(data: str, key: str) -> None:
    assert not matches_key(data, key)


def test_parse_key_names_what_was_pressed() -> None:
    assert parse_key("\x1b[1;5A") == "ctrl+up"
    assert parse_key("\x1b[117;6u") == "ctrl+shift+u"
    assert parse_key("\x1bx") == "alt+x"
    assert parse_key("\r") == "enter"
    assert parse_key("\x1b[Z") == "shift+tab"
    assert parse_key("\x1b[999999zz") is None


def test_key_releases_and_repeats_are_told_apart_from_presses() -> None:
    assert is_key_release("\x1b[119;1:3u") and not is_key_repeat("\x1b[119;1:3u")
    assert is_key_repeat("\x1b[119;1:2u") and not is_key_release("\x1b[119;1:2u")
    assert is_key_release("\x1b[1;1:3A")  # an arrow let go
    assert not is_key_release("w") and not is_key_release("\x1b[119u")
    assert not is_key_release("\x1b[200~90:62:3F:A5\x1b[201~")  # pasted text is never a key event
