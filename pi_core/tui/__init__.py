"""The component model plugins draw the terminal with (pi's ``@mariozechner/pi-tui``, small).

A component is any object with ``render(width) -> list[str]`` (rows of at most ``width`` columns, ANSI
styling allowed), and optionally ``handle_input(data)`` (raw key bytes as text, e.g. ``"\\x1b"`` for
Escape, ``"\\r"`` for Enter) and ``invalidate()`` (drop cached rows). ``ctx.ui.custom``,
``ctx.ui.set_widget``, ``set_footer`` and ``set_header`` take factories that build one, with pi's
arguments in pi's order: ``(tui, theme, keybindings, done)``, ``(tui, theme)``,
``(tui, theme, footer_data)``. ``tui.request_render()`` asks for a redraw after a state change.

``ctx.ui.set_editor_component(factory)`` replaces the editor with ``factory(tui, theme, keybindings)``'s
:class:`CustomEditor`: a subclass sees every key first and hands on what pi should handle as usual.

``ctx.ui.add_autocomplete_provider(factory)`` stacks an :class:`AutocompleteProvider` on the editor's
completion (``factory(current)`` gets the provider below it, to delegate to).

Helpers: :func:`visible_width` and :func:`truncate_to_width` (wide characters and ANSI codes
handled), :func:`highlight_code` (pygments, by language or file name), :func:`matches_key`, and
:class:`Text`, a component of fixed lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")

__all__ = ["AppliedCompletion", "AutocompleteItem", "AutocompleteOptions", "AutocompleteProvider",
           "AutocompleteSuggestions", "Component", "CustomEditor", "Text", "fuzzy_filter", "highlight_code", "matches_key", "truncate_to_width", "visible_width"]

KEYS = {
    "escape": "\x1b", "enter": "\r", "return": "\r", "tab": "\t", "space": " ", "backspace": "\x7f",
    "up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D", "home": "\x1b[H", "end": "\x1b[F",
    "delete": "\x1b[3~", "pageup": "\x1b[5~", "pagedown": "\x1b[6~", "shift+tab": "\x1b[Z",
}
_ALTERNATIVES = {"\x1bOA": "\x1b[A", "\x1bOB": "\x1b[B", "\x1bOC": "\x1b[C", "\x1bOD": "\x1b[D",
                 "\x1bOH": "\x1b[H", "\x1bOF": "\x1b[F", "\n": "\r", "\x08": "\x7f"}


@runtime_checkable
class Component(Protocol):
    """What the terminal draws: rows for a width. ``handle_input``/``invalidate`` are optional."""

    def render(self, width: int) -> list[str]: ...


class Text:
    """A component showing fixed lines (each cut to the width)."""

    def __init__(self, lines: str | Sequence[str] = ()) -> None:
        self.set_lines(lines)

    def set_lines(self, lines: str | Sequence[str]) -> None:
        self.lines = lines.split("\n") if isinstance(lines, str) else [str(line) for line in lines]

    def render(self, width: int) -> list[str]:
        return [truncate_to_width(line, width) for line in self.lines]

    def invalidate(self) -> None:
        return None


class EditorHost(Protocol):
    """What the terminal gives a :class:`CustomEditor` (set when the editor is on screen)."""

    def feed(self, data: str) -> None: ...
    def rows(self, width: int) -> list[str]: ...
    def get_text(self) -> str: ...
    def set_text(self, text: str) -> None: ...
    def insert_text(self, text: str) -> None: ...


class CustomEditor:
    """The base of a plugin's editor (pi's ``CustomEditor``), for ``ctx.ui.set_editor_component``.

    Every key reaches :meth:`handle_input` first, as raw terminal input; ``super().handle_input(data)``
    gives it to pi's editor, which keeps all its bindings (Enter sends, history, Ctrl+C, Esc interrupts,
    the app's keys and the plugins' shortcuts). A key not handed on does nothing. ``data`` may be any
    key's sequence, so a subclass can translate (vim's ``h`` → ``"\x1b[D"``, Left).

    :meth:`render` returns the editor's rows for ``width``: a top border, one row per line of text and
    a bottom border. A subclass may replace the borders (a status in them) and restyle the text rows;
    a text row is shown restyled as long as its visible text stays the same (the cursor stays pi's).
    """

    def __init__(self, tui: Any, theme: Any, keybindings: Any, options: dict[str, Any] | None = None) -> None:
        self.tui = tui
        self.theme = theme
        self.keybindings = keybindings
        self.options = dict(options or {})
        self._host: EditorHost | None = None

    def handle_input(self, data: str) -> None:
        """Give ``data`` to pi's editor (what a subclass calls for keys it does not handle itself)."""
        if self._host is not None:
            self._host.feed(data)

    def render(self, width: int) -> list[str]:
        """Top border, the text's rows, bottom border (nothing while the editor is not on screen)."""
        return self._host.rows(width) if self._host is not None else []

    def get_text(self) -> str:
        return self._host.get_text() if self._host is not None else ""

    def set_text(self, text: str) -> None:
        if self._host is not None:
            self._host.set_text(text)

    def insert_text(self, text: str) -> None:
        """Type ``text`` at the cursor."""
        if self._host is not None:
            self._host.insert_text(text)

    def border_color(self, text: str) -> str:
        """``text`` in the editor border's colour."""
        theme = self.theme
        return theme.fg("border", text) if theme is not None and hasattr(theme, "fg") else text

    def invalidate(self) -> None:
        return None


@dataclass
class AutocompleteItem:
    """One suggestion: ``value`` replaces the typed prefix; ``label`` (default: the value) and
    ``description`` are what the menu shows."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass
class AutocompleteSuggestions:
    """What a provider suggests: ``items`` and the ``prefix`` before the cursor they replace."""

    items: list[AutocompleteItem]
    prefix: str


@dataclass
class AppliedCompletion:
    """The editor's lines and cursor after a suggestion was chosen."""

    lines: list[str]
    cursor_line: int
    cursor_col: int


@dataclass
class AutocompleteOptions:
    """``signal.aborted`` turns true when the text changed meanwhile (the answer is not wanted);
    ``force`` is true when the user asked with Tab."""

    signal: Any = None
    force: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class AutocompleteProvider(Protocol):
    """pi's ``AutocompleteProvider``, snake_cased. ``get_suggestions`` may be sync or async and returns
    ``None`` for "nothing here" (delegate to the provider below first, as pi's examples do).
    ``trigger_characters`` and ``should_trigger_file_completion`` are optional (the editor asks for
    suggestions at every change of the text)."""

    def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                        options: AutocompleteOptions) -> Any: ...

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: AutocompleteItem,
                         prefix: str) -> AppliedCompletion: ...


def fuzzy_filter(items: Sequence[T], query: str, text: Callable[[T], str] | None = None) -> list[T]:
    """``items`` matching ``query`` fuzzily, best first (pi's ``fuzzyFilter``): those whose text starts with
    it, then those containing its characters in order, then close misspellings; scored with rapidfuzz.
    An empty query keeps every item in its order."""
    key = text or str
    wanted = query.strip().lower()
    if not wanted:
        return list(items)
    score = _scorer()
    ranked: list[tuple[int, float, int, T]] = []
    for index, item in enumerate(items):
        candidate = key(item).lower()
        if candidate.startswith(wanted):
            ranked.append((0, 0.0, index, item))
        elif _in_order(wanted, candidate):
            ranked.append((1, -score(wanted, candidate), index, item))
        else:
            similarity = score(wanted, candidate)
            if len(wanted) >= 3 and similarity >= TYPO_SCORE:
                ranked.append((2, -similarity, index, item))
    return [item for *_, item in sorted(ranked, key=lambda r: r[:3])]


TYPO_SCORE = 75.0
"""How similar (0-100) a text must be to a query it does not contain to be offered as a misspelling."""


def _in_order(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True


def _scorer() -> Callable[[str, str], float]:
    try:
        from rapidfuzz import fuzz
    except ImportError:  # an environment without the dependency still completes (difflib's ratio)
        from difflib import SequenceMatcher

        return lambda a, b: 100.0 * SequenceMatcher(None, a, b).ratio()
    return lambda a, b: float(fuzz.WRatio(a, b))


def visible_width(text: str) -> int:
    """Columns ``text`` takes on screen: ANSI codes count zero, East Asian wide characters two."""
    from ..modes.interactive.style import display_width

    return display_width(text)


def truncate_to_width(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` cut to ``width`` columns (ending in ``ellipsis`` when cut); ANSI codes are kept and a
    reset is added after a cut, so a styled row never bleeds into the next."""
    if visible_width(text) <= width:
        return text
    room = max(width - visible_width(ellipsis), 0)
    from ..modes.interactive.style import char_width

    out: list[str] = []
    used = index = 0
    while index < len(text):
        if text[index] == "\x1b":
            end = _escape_end(text, index)
            out.append(text[index:end])
            index = end
            continue
        w = char_width(text[index])
        if used + w > room:
            break
        out.append(text[index])
        used += w
        index += 1
    styled = "\x1b" in text
    return "".join(out) + ("\x1b[0m" if styled else "") + ellipsis


def _escape_end(text: str, start: int) -> int:
    index = start + 1
    if index < len(text) and text[index] == "[":
        index += 1
        while index < len(text) and not ("@" <= text[index] <= "~"):
            index += 1
    return min(index + 1, len(text))


def highlight_code(code: str, language: str | None = None, *, path: str | None = None,
                   theme: Any = None) -> list[str]:
    """``code`` as styled lines (pygments), by ``language`` or by the file name in ``path``; plain lines
    when no lexer fits or colour is off."""
    from ..modes.interactive.highlight import highlight_lines
    from ..modes.interactive.style import Palette

    palette = Palette(True, theme=theme) if theme is None or getattr(theme, "colour", True) else Palette(False)
    lines = highlight_lines(palette, code, language=language, filename=path)
    return lines if lines is not None else code.rstrip("\n").split("\n")


def matches_key(data: str, key: str) -> bool:
    """Whether raw input ``data`` is the key named ``key`` (``"escape"``, ``"enter"``, ``"up"``,
    ``"ctrl+c"``, ``"a"``...)."""
    data = _ALTERNATIVES.get(data, data)
    name = key.lower()
    if name in KEYS:
        return data == KEYS[name]
    if name.startswith("ctrl+") and len(name) == 6 and name[5].isalpha():
        return data == chr(ord(name[5]) - 96)
    if name.startswith("alt+") and len(name) == 5:
        return data == "\x1b" + name[4]
    return data == key
