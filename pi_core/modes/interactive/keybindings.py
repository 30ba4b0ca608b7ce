"""Named key actions as pi binds them, remappable through ``<agent dir>/keybindings.json``.

pi's file maps an action id to one key or a list of keys (``"app.model.select": "ctrl+l"``); an
empty list unbinds the action. Keys are written ``modifier+key`` with the modifiers ``ctrl``,
``shift``, ``alt`` and ``super``. This module knows pi's action ids and defaults, reads the file
(reporting what it cannot use instead of failing), and turns a key into the key sequence
prompt_toolkit matches.

Keys that a legacy terminal cannot send (``ctrl+shift+p``, ``shift+enter``, ``super+k``) arrive only
through extended key reporting (the kitty protocol or xterm's ``modifyOtherKeys``, see
:mod:`.terminal`); they are mapped to private-use characters that :func:`extended_sequences`
produces for the matching escape sequences, so one binding serves both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...safejson import parse_json

KEYBINDINGS_FILE = "keybindings.json"
MODIFIERS = ("ctrl", "shift", "alt", "super")


@dataclass(frozen=True)
class Action:
    id: str
    keys: tuple[str, ...]
    description: str
    group: str


def _actions(group: str, *rows: tuple[str, tuple[str, ...], str]) -> list[Action]:
    return [Action(id_, keys, description, group) for id_, keys, description in rows]


#: pi 1.6's application actions this terminal implements, with pi's default keys.
ACTIONS: tuple[Action, ...] = tuple([
    *_actions(
        "Editor",
        ("tui.input.submit", ("enter",), "Send (while the agent works: queue as steering)"),
        ("tui.input.newLine", ("shift+enter", "ctrl+j"), "Insert a new line"),
        ("tui.input.tab", ("tab",), "Complete /commands and @paths"),
        ("tui.editor.cursorUp", ("up",), "Cursor up; history at the first line"),
        ("tui.editor.cursorDown", ("down",), "Cursor down; history at the last line"),
        ("tui.editor.historyPrevious", (), "Previous prompt from the history"),
        ("tui.editor.historyNext", (), "Next prompt from the history"),
    ),
    *_actions(
        "Application",
        ("app.interrupt", ("escape",), "Interrupt the agent; twice on an empty editor: doubleEscapeAction"),
        ("app.clear", ("ctrl+c",), "Clear the editor (first) / exit (second)"),
        ("app.exit", ("ctrl+d",), "Exit (when the editor is empty)"),
        ("app.suspend", ("ctrl+z",), "Suspend to the background (fg resumes)"),
        ("app.editor.external", ("ctrl+g",), "Edit the prompt in $VISUAL / $EDITOR (externalEditor)"),
        ("app.clipboard.pasteImage", ("ctrl+v",), "Paste an image or file paths from the clipboard"),
    ),
    *_actions(
        "Sessions",
        ("app.session.new", (), "Start a new session (/new)"),
        ("app.session.tree", (), "Open the session tree (/tree)"),
        ("app.session.fork", (), "Fork the session (/fork)"),
        ("app.session.resume", (), "Resume another session (/resume)"),
    ),
    *_actions(
        "Models and thinking",
        ("app.model.select", ("ctrl+l",), "Open the model selector"),
        ("app.model.cycleForward", ("ctrl+p",), "Next model (scoped models first)"),
        ("app.model.cycleBackward", ("shift+ctrl+p",), "Previous model"),
        ("app.thinking.cycle", ("shift+tab",), "Cycle the thinking level"),
        ("app.thinking.toggle", ("ctrl+t",), "Show or hide thinking blocks"),
    ),
    *_actions(
        "Display and message queue",
        ("app.tools.expand", ("ctrl+o",), "Expand or collapse tool output"),
        ("app.message.copy", ("ctrl+x",), "Copy the last assistant message"),
        ("app.message.followUp", ("alt+enter",), "Queue a follow-up message (while the agent works)"),
        ("app.message.dequeue", ("alt+up",), "Take queued messages back into the editor"),
    ),
])
ACTION_IDS = {action.id: action for action in ACTIONS}

_NAMED = {
    "esc": "escape", "return": "enter", "pageup": "pageUp", "pagedown": "pageDown",
    "escape": "escape", "enter": "enter", "tab": "tab", "space": "space", "backspace": "backspace",
    "delete": "delete", "insert": "insert", "clear": "clear", "home": "home", "end": "end",
    "up": "up", "down": "down", "left": "left", "right": "right",
    **{f"f{n}": f"f{n}" for n in range(1, 13)},
}
_SYMBOLS = set("`-=[]\\;',./!@#$%^&*()_+|~{}:<>?")


class KeyError_(ValueError):
    """A key string that is not in pi's key syntax."""


def normalize(spec: str) -> str:
    """A key in pi's syntax as one canonical string: modifiers in the order ctrl, shift, alt, super,
    then the key (``"Shift+Ctrl+P"`` → ``"ctrl+shift+p"``). Raises :class:`KeyError_`."""
    text = spec.strip()
    if not text:
        raise KeyError_("an empty key")
    parts = text.split("+")
    if text.endswith("+"):  # "ctrl++" is ctrl and the plus key
        parts = [*text[:-1].rstrip("+").split("+"), "+"] if text != "+" else ["+"]
    *mods, key = parts
    seen: set[str] = set()
    for mod in mods:
        low = mod.strip().lower()
        if low not in MODIFIERS:
            raise KeyError_(f"unknown modifier {mod!r} in {spec!r} (use ctrl, shift, alt, super)")
        seen.add(low)
    base = _base_key(key.strip(), spec)
    ordered = [m for m in MODIFIERS if m in seen]
    return "+".join([*ordered, base])


def _base_key(key: str, spec: str) -> str:
    low = key.lower()
    if len(key) == 1 and (key.isalnum() and key.isascii() or key in _SYMBOLS):
        return low
    if low in _NAMED:
        return _NAMED[low]
    raise KeyError_(f"unknown key {key!r} in {spec!r}")


# -------------------------------------------------------------------------------------------------
# canonical key → prompt_toolkit key sequence

_PRIVATE_BASE = 0xE000
_private: dict[str, str] = {}

_PT_NAMED = {"escape": "escape", "enter": "c-m", "tab": "c-i", "space": " ", "backspace": "c-h",
             "delete": "delete", "insert": "insert", "home": "home", "end": "end", "pageUp": "pageup",
             "pageDown": "pagedown", "up": "up", "down": "down", "left": "left", "right": "right",
             **{f"f{n}": f"f{n}" for n in range(1, 13)}}
_CTRL_SYMBOLS = {"]": "c-]", "\\": "c-\\", "^": "c-^", "_": "c-_", "-": "c-_", "@": "c-@", "space": "c-@"}
_NAVIGATION = ("up", "down", "left", "right", "home", "end", "delete", "insert", "pageUp", "pageDown")


def _split(canonical: str) -> list[str]:
    if canonical == "+":
        return ["+"]
    if canonical.endswith("++"):
        return [*canonical[:-2].split("+"), "+"]
    return canonical.split("+")


def private_char(name: str) -> str:
    """The private-use character standing for a key no legacy terminal sends (stable per process)."""
    char = _private.get(name)
    if char is None:
        char = _private[name] = chr(_PRIVATE_BASE + len(_private))
    return char


def private_chars() -> list[str]:
    """Every private character handed out so far."""
    return list(_private.values())


def is_private(char: str) -> bool:
    return len(char) == 1 and _PRIVATE_BASE <= ord(char) < _PRIVATE_BASE + 0x1000


def to_prompt_toolkit(canonical: str) -> tuple[str, ...]:
    """The key sequence prompt_toolkit matches for a canonical key (see :func:`normalize`)."""
    *mods, key = _split(canonical)
    m = set(mods)
    if "super" in m:
        return (private_char(canonical),)
    alt = ("escape",) if "alt" in m else ()
    m.discard("alt")
    if key in _PT_NAMED:
        if not m:
            return (*alt, _PT_NAMED[key])
        if m == {"shift"} and key == "tab" and not alt:
            return ("s-tab",)
        if key in _NAVIGATION and not alt:
            prefix = {frozenset({"shift"}): "s-", frozenset({"ctrl"}): "c-",
                      frozenset({"ctrl", "shift"}): "c-s-"}.get(frozenset(m))
            if prefix is not None:
                return (prefix + _PT_NAMED[key],)
        if m == {"ctrl"} and key == "space":
            return (*alt, "c-@")
        return (private_char(canonical),)
    if len(key) == 1 and key.isalpha():
        if not m:
            return (*alt, key)
        if m == {"shift"}:
            return (*alt, key.upper())
        if m == {"ctrl"}:
            return (*alt, f"c-{key}")
        return (private_char(canonical),)
    if not m:
        return (*alt, key)
    if m == {"ctrl"} and key in _CTRL_SYMBOLS:
        return (*alt, _CTRL_SYMBOLS[key])
    return (private_char(canonical),)


# -------------------------------------------------------------------------------------------------
# extended key reporting: escape sequences → the same keys


def _canonical_from(code: int, modifier_mask: int) -> str | None:
    names = {9: "tab", 13: "enter", 27: "escape", 32: "space", 127: "backspace"}
    if code in names:
        key = names[code]
    elif 33 <= code < 127:
        char = chr(code)
        key = char.lower() if char.isalpha() else char
        if char.isupper():
            modifier_mask |= 1
    else:
        return None
    mods = [name for bit, name in ((4, "ctrl"), (1, "shift"), (2, "alt"), (8, "super")) if modifier_mask & bit]
    return "+".join([*[m for m in MODIFIERS if m in mods], key])


def extended_sequences() -> dict[str, tuple[str, ...]]:
    """Escape sequences of the kitty protocol (``CSI code;mods u``) and of xterm's
    ``modifyOtherKeys`` (``CSI 27;mods;code ~``), each with the prompt_toolkit keys it stands for."""
    table: dict[str, tuple[str, ...]] = {}
    codes = [9, 13, 27, 32, 127, *range(33, 127)]
    for code in codes:
        for param in range(1, 17):
            canonical = _canonical_from(code, param - 1)
            if canonical is None:
                continue
            keys = to_prompt_toolkit(canonical)
            if param == 1:
                if code in (9, 13, 27, 32, 127):
                    table[f"\x1b[{code}u"] = keys
                continue
            table[f"\x1b[{code};{param}u"] = keys
            table[f"\x1b[27;{param};{code}~"] = keys
    return table


# -------------------------------------------------------------------------------------------------
# the keymap


@dataclass
class Keymap:
    """Keys per action: pi's defaults with the user's ``keybindings.json`` applied."""

    bindings: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    path: Path | None = None

    @classmethod
    def defaults(cls) -> Keymap:
        return cls({a.id: [normalize(k) for k in a.keys] for a in ACTIONS})

    @classmethod
    def load(cls, agent_dir: Path | str | None) -> Keymap:
        """The defaults, then ``<agent dir>/keybindings.json`` if there is one. Unknown actions and
        keys are reported in :attr:`errors` and skipped; a broken file leaves the defaults."""
        keymap = cls.defaults()
        if agent_dir is None:
            return keymap
        path = Path(agent_dir) / KEYBINDINGS_FILE
        keymap.path = path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return keymap
        except OSError as exc:
            keymap.errors.append(f"{path}: cannot read ({exc.strerror or exc})")
            return keymap
        try:
            data = parse_json(text) if text.strip() else {}
        except ValueError as exc:
            keymap.errors.append(f"{path}: not valid JSON ({exc}); defaults used")
            return keymap
        if not isinstance(data, dict):
            keymap.errors.append(f"{path}: expected a JSON object of action ids; defaults used")
            return keymap
        keymap.apply(data, str(path))
        return keymap

    def apply(self, data: dict[str, Any], source: str = KEYBINDINGS_FILE) -> None:
        for action, value in data.items():
            if action.startswith("$"):
                continue
            if not isinstance(value, (str, list)) or (isinstance(value, list)
                                                      and not all(isinstance(v, str) for v in value)):
                self.errors.append(f"{source}: {action}: expected a key or a list of keys")
                continue
            keys: list[str] = []
            for spec in [value] if isinstance(value, str) else value:
                try:
                    keys.append(normalize(spec))
                except KeyError_ as exc:
                    self.errors.append(f"{source}: {action}: {exc}")
            if action not in ACTION_IDS:
                if not _known_elsewhere(action):
                    self.errors.append(f"{source}: unknown action {action!r}")
                self.bindings[action] = keys  # kept: a plugin or a later version may use it
                continue
            self.bindings[action] = keys

    def keys(self, action: str) -> list[str]:
        return list(self.bindings.get(action, ()))

    def sequences(self, action: str) -> list[tuple[str, ...]]:
        return [to_prompt_toolkit(key) for key in self.keys(action)]

    def action_for(self, key: str) -> str | None:
        """The first action bound to ``key`` (any spelling pi accepts), or ``None``."""
        canonical = normalize(key)
        return next((a for a, keys in self.bindings.items() if canonical in keys), None)

    def describe(self, action: str) -> str:
        return ", ".join(display(k) for k in self.keys(action)) or "(none)"

    def matches(self, data: str, action: str) -> bool:
        """Whether raw input ``data`` is one of ``action``'s keys, as bound now (pi's
        ``keybindings.matches``, for components): the app's actions, and pi's component actions
        (``tui.select.up``, ``tui.select.confirm``...) with pi's keys unless ``keybindings.json`` sets them."""
        from ...tui.keys import DEFAULT_BINDINGS, matches_key

        keys = self.bindings.get(action)
        return any(matches_key(data, key) for key in (DEFAULT_BINDINGS.get(action, ()) if keys is None else keys))


def _known_elsewhere(action: str) -> bool:
    """pi action ids this terminal does not implement (tree, picker and fullscreen keys) are not
    errors: the same file serves pi."""
    return action.startswith(("tui.", "app.tree.", "app.session.", "app.models.", "app.thinking.",
                              "app.message.", "app.altScreen."))


def display(canonical: str) -> str:
    """``ctrl+shift+p`` → ``Ctrl+Shift+P`` for help screens."""
    out = []
    parts = _split(canonical)
    for part in parts:
        if part in MODIFIERS:
            out.append(part.capitalize())
        elif len(part) == 1:
            out.append(part.upper())
        else:
            out.append({"pageUp": "PageUp", "pageDown": "PageDown"}.get(part, part.capitalize()))
    return "+".join(out)


def editor_command(settings: Any = None, env: dict[str, str] | None = None) -> str:
    """The external editor: the ``externalEditor`` setting, ``$VISUAL``, ``$EDITOR``, else ``nano``
    (``notepad`` on Windows), as pi chooses it."""
    env = dict(os.environ) if env is None else env
    configured = settings.get("externalEditor") if settings is not None and hasattr(settings, "get") else None
    for candidate in (configured, env.get("VISUAL"), env.get("EDITOR")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return "notepad" if os.name == "nt" else "nano"


def actions_in(group: str) -> Iterable[Action]:
    return (a for a in ACTIONS if a.group == group)


__all__ = ["ACTIONS", "ACTION_IDS", "Action", "KeyError_", "Keymap", "display", "editor_command",
           "extended_sequences", "is_private", "normalize", "private_char", "private_chars", "to_prompt_toolkit"]
