"""Naming keys in raw terminal input (pi's ``matchesKey``, ``parseKey``, ``Key``, ``isKeyRelease``).

A component's ``handle_input(data)`` gets what the terminal sent for one key: a character, a control
character, or an escape sequence — legacy (``"\\x1b[A"``), xterm's ``modifyOtherKeys``
(``"\\x1b[27;5;97~"``) or the kitty keyboard protocol (``"\\x1b[97;5u"``, and with event types
``"\\x1b[97;1:3u"`` for a release). Key names are pi's: ``"escape"``, ``"enter"``, ``"up"``,
``"pageUp"``, ``"f5"``, ``"a"``, ``"ctrl+c"``, ``"shift+tab"``, ``"ctrl+shift+u"``, ``"alt+x"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SHIFT, ALT, CTRL, SUPER = 1, 2, 4, 8
_MODIFIER_NAMES = {"shift": SHIFT, "alt": ALT, "ctrl": CTRL, "super": SUPER}

_NAMED = {"escape": "escape", "esc": "escape", "enter": "enter", "return": "enter", "tab": "tab", "space": "space",
          "backspace": "backspace", "delete": "delete", "insert": "insert", "clear": "clear", "home": "home",
          "end": "end", "pageup": "pageUp", "pagedown": "pageDown", "up": "up", "down": "down", "left": "left",
          "right": "right", **{f"f{n}": f"f{n}" for n in range(1, 13)}}
_CODEPOINTS = {27: "escape", 13: "enter", 9: "tab", 32: "space", 127: "backspace", 8: "backspace",
               57399: "0", 57414: "enter"}
_FUNCTIONAL = {2: "insert", 3: "delete", 5: "pageUp", 6: "pageDown", 1: "home", 7: "home", 4: "end", 8: "end",
               11: "f1", 12: "f2", 13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9",
               21: "f10", 23: "f11", 24: "f12"}
_CSI_LETTERS = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end", "E": "clear",
                "P": "f1", "Q": "f2", "R": "f3", "S": "f4"}
_LEGACY = {"\x1b[Z": ("tab", SHIFT), "\x1b[a": ("up", SHIFT), "\x1b[b": ("down", SHIFT),
           "\x1b[c": ("right", SHIFT), "\x1b[d": ("left", SHIFT), "\x1bOa": ("up", CTRL), "\x1bOb": ("down", CTRL),
           "\x1bOc": ("right", CTRL), "\x1bOd": ("left", CTRL), "\x1b[[5~": ("pageUp", 0),
           "\x1b[[6~": ("pageDown", 0), "\x1b[[A": ("f1", 0), "\x1b[[B": ("f2", 0), "\x1b[[C": ("f3", 0),
           "\x1b[[D": ("f4", 0), "\x1b[[E": ("f5", 0)}

_KITTY = re.compile(r"^\x1b\[(\d+)(?::(\d*))?(?::(\d+))?(?:;(\d+))?(?::(\d+))?u$")
_MODIFIED_LETTER = re.compile(r"^\x1b\[1;(\d+)(?::(\d+))?([A-FHPQRS])$")
_TILDE = re.compile(r"^\x1b\[(\d+)(?:;(\d+))?(?::(\d+))?~$")
_OTHER_KEYS = re.compile(r"^\x1b\[27;(\d+);(\d+)~$")
_EVENT = re.compile(r"^\x1b\[[\d:;]*:([23])[u~A-FHPQRS]$")

Parsed = tuple[str, int]
"""A key and its modifiers (the ``SHIFT | ALT | CTRL | SUPER`` bits)."""


def _key_of_codepoint(code: int) -> str | None:
    if code in _CODEPOINTS:
        return _CODEPOINTS[code]
    if 32 < code < 0x110000 and not 57344 <= code <= 63743:  # not kitty's private-use functional keys
        return chr(code).lower() if chr(code).isalpha() else chr(code)
    return None


def _modifiers(value: str | None) -> int:
    return (int(value) - 1) & 0b1111 if value else 0  # caps and num lock do not count


def _decode(data: str) -> set[Parsed]:
    """What ``data`` may mean; legacy control characters are ambiguous (``"\\t"``: tab or ctrl+i)."""
    if not data:
        return set()
    if data in _LEGACY:
        return {_LEGACY[data]}
    if data.startswith("\x1b[") or data.startswith("\x1bO"):
        return _decode_sequence(data)
    if data.startswith("\x1b") and len(data) > 1:
        return {(key, mods | ALT) for key, mods in _decode(data[1:])}
    if len(data) != 1:
        return set()
    return _decode_char(data)


def _decode_char(char: str) -> set[Parsed]:
    code = ord(char)
    if char == "\x1b":
        return {("escape", 0)}
    if char in ("\r", "\n"):
        return {("enter", 0), ("j" if char == "\n" else "m", CTRL)} | ({("enter", SHIFT)} if char == "\n" else set())
    if char == "\t":
        return {("tab", 0), ("i", CTRL)}
    if char in ("\x7f", "\x08"):
        return {("backspace", 0)} | ({("h", CTRL)} if char == "\x08" else set())
    if char == " ":
        return {("space", 0)}
    if code == 0:
        return {("space", CTRL)}
    if code < 27:
        return {(chr(code + 96), CTRL)}
    if code < 32:
        return {({28: "\\", 29: "]", 30: "^", 31: "-"}[code], CTRL)}
    if char.isalpha() and char != char.lower():
        return {(char.lower(), SHIFT), (char, 0)}
    return {(char, 0)}


def _decode_sequence(data: str) -> set[Parsed]:
    match = _KITTY.match(data)
    if match:
        key = _key_of_codepoint(int(match.group(1)))
        return {(key, _modifiers(match.group(4)))} if key else set()
    match = _OTHER_KEYS.match(data)
    if match:
        key = _key_of_codepoint(int(match.group(2)))
        return {(key, _modifiers(match.group(1)))} if key else set()
    match = _MODIFIED_LETTER.match(data)
    if match:
        return {(_CSI_LETTERS[match.group(3)], _modifiers(match.group(1)))}
    match = _TILDE.match(data)
    if match:
        key = _FUNCTIONAL.get(int(match.group(1)))
        return {(key, _modifiers(match.group(2)))} if key else set()
    if len(data) == 3 and data[2] in _CSI_LETTERS:  # "\x1b[A", "\x1bOA", "\x1bOP"
        return {(_CSI_LETTERS[data[2]], 0)}
    return set()


def _parse_name(key: str) -> Parsed | None:
    parts = key.split("+")
    if key.endswith("++"):  # "ctrl++": the plus key
        parts = [*key[:-2].split("+"), "+"]
    mods = 0
    for part in parts[:-1]:
        bit = _MODIFIER_NAMES.get(part.lower())
        if bit is None:
            return None
        mods |= bit
    name = parts[-1]
    if not name:
        return None
    base = _NAMED.get(name.lower())
    if base is not None:
        return base, mods
    if len(name) == 1 and name.isalpha() and name != name.lower():
        return name.lower(), mods | SHIFT
    return (name.lower() if len(name) == 1 else name), mods


def matches_key(data: str, key: str) -> bool:
    """Whether raw input ``data`` is the key ``key`` names (pi's ``matchesKey``): ``"escape"``,
    ``"enter"`` (``"return"``), ``"up"``, ``"pageUp"``, ``"a"``, ``"ctrl+c"``, ``"shift+tab"``,
    ``"ctrl+shift+u"``... Legacy, ``modifyOtherKeys`` and kitty sequences are understood; a kitty
    release or repeat event matches its key too (:func:`is_key_release` tells them apart)."""
    wanted = _parse_name(key)
    if wanted is None:
        return data == key
    return wanted in _decode(data) or (wanted[1] == 0 and data == key)


def parse_key(data: str) -> str | None:
    """The name of the key ``data`` is (``"ctrl+shift+u"``, ``"enter"``, ``"a"``), or ``None`` when it is
    not a key (pi's ``parseKey``)."""
    meanings = _decode(data)
    if not meanings:
        return None
    key, mods = min(meanings, key=lambda m: (m[1] != 0 and len(meanings) > 1, m[1], m[0]))
    prefix = "".join(f"{name}+" for name, bit in (("ctrl", CTRL), ("shift", SHIFT), ("alt", ALT),
                                                  ("super", SUPER)) if mods & bit)
    return prefix + key


def is_key_release(data: str) -> bool:
    """Whether ``data`` is a key release (the kitty protocol's event type 3). Components only get
    releases when they ask (``wants_key_release = True``; see :mod:`pi_core.tui`)."""
    if "\x1b[200~" in data:  # pasted text is never a key event
        return False
    match = _EVENT.match(data)
    return bool(match and match.group(1) == "3")


def is_key_repeat(data: str) -> bool:
    """Whether ``data`` is a key held down and repeating (the kitty protocol's event type 2)."""
    if "\x1b[200~" in data:
        return False
    match = _EVENT.match(data)
    return bool(match and match.group(1) == "2")


DEFAULT_BINDINGS: dict[str, tuple[str, ...]] = {
    "tui.select.up": ("up",), "tui.select.down": ("down",), "tui.select.pageUp": ("pageUp",),
    "tui.select.pageDown": ("pageDown",), "tui.select.confirm": ("enter",), "tui.select.cancel": ("escape", "ctrl+c"),
    "tui.input.submit": ("enter",), "tui.input.newLine": ("shift+enter", "ctrl+j"), "tui.input.tab": ("tab",),
    "tui.input.copy": ("ctrl+c",), "tui.editor.cursorUp": ("up",), "tui.editor.cursorDown": ("down",),
    "tui.editor.cursorLeft": ("left", "ctrl+b"), "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+a"), "tui.editor.cursorLineEnd": ("end", "ctrl+e"),
    "tui.editor.pageUp": ("pageUp", "ctrl+pageUp"), "tui.editor.pageDown": ("pageDown", "ctrl+pageDown"),
    "tui.editor.deleteCharBackward": ("backspace",), "tui.editor.deleteCharForward": ("delete", "ctrl+d"),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"), "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",), "tui.editor.deleteToLineEnd": ("ctrl+k",),
    "tui.editor.yank": ("ctrl+y",), "tui.editor.yankPop": ("alt+y",), "tui.editor.undo": ("ctrl+-",),
}
"""pi's default keys of the actions its components use (``tui.select.*``, ``tui.input.*``, ``tui.editor.*``)."""


def matches_action(data: str, action: str) -> bool:
    """Whether ``data`` is one of the keys of pi's component ``action`` (``"tui.select.up"``...)."""
    return any(matches_key(data, key) for key in DEFAULT_BINDINGS.get(action, ()))


def _join(*modifiers: str) -> Callable[[str], str]:
    return lambda key: "+".join((*modifiers, key))


class Key:
    """pi's ``Key``: names for :func:`matches_key` (``Key.escape``, ``Key.ctrl("c")``,
    ``Key.shift("tab")``, ``Key.ctrl_shift("u")``)."""

    escape = "escape"
    esc = "esc"
    enter = "enter"
    return_ = "return"
    tab = "tab"
    space = "space"
    backspace = "backspace"
    delete = "delete"
    insert = "insert"
    clear = "clear"
    home = "home"
    end = "end"
    page_up = "pageUp"
    page_down = "pageDown"
    up = "up"
    down = "down"
    left = "left"
    right = "right"
    f1, f2, f3, f4, f5, f6 = "f1", "f2", "f3", "f4", "f5", "f6"
    f7, f8, f9, f10, f11, f12 = "f7", "f8", "f9", "f10", "f11", "f12"
    ctrl = staticmethod(_join("ctrl"))
    shift = staticmethod(_join("shift"))
    alt = staticmethod(_join("alt"))
    super = staticmethod(_join("super"))
    ctrl_shift = staticmethod(_join("ctrl", "shift"))
    ctrl_alt = staticmethod(_join("ctrl", "alt"))
    shift_alt = staticmethod(_join("shift", "alt"))
    ctrl_super = staticmethod(_join("ctrl", "super"))
    ctrl_shift_alt = staticmethod(_join("ctrl", "shift", "alt"))


__all__ = ["DEFAULT_BINDINGS", "Key", "is_key_release", "is_key_repeat", "matches_action", "matches_key", "parse_key"]
