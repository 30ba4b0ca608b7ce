"""Terminal styling and text geometry: ANSI colours (off under ``NO_COLOR`` or without a TTY), display
width of text (wide CJK characters count two), greedy word wrapping.

Nothing here imports prompt_toolkit or rich: the renderer builds plain strings with SGR codes, which
both the scrollback writer and the live region (parsed by prompt_toolkit's ``ANSI``) understand.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any

_SGR = re.compile(r"\x1b\[[0-9;:]*m|\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)")
"""SGR codes and OSC 8 hyperlinks: they take no columns."""

_ATTRIBUTES: dict[str, str] = {"bold": "1", "dim": "2", "italic": "3", "underline": "4", "inverse": "7"}
# The renderer's colour names, as theme tokens (the system theme gives the 16 basic colours).
_ALIASES: dict[str, str] = {"red": "error", "green": "success", "yellow": "warning", "blue": "border",
                            "magenta": "mdHeading", "cyan": "accent", "gray": "muted",
                            "dimText": "dim"}  # the theme's dim colour ("dim" alone is the faint attribute)


def colour_wanted(stream: object = None) -> bool:
    """Colours unless ``NO_COLOR`` is set (any value, see no-color.org) or output is not a terminal."""
    if os.environ.get("NO_COLOR", "") != "":
        return False
    stream = stream if stream is not None else sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def unicode_wanted(stream: object = None) -> bool:
    encoding = getattr(stream if stream is not None else sys.stdout, "encoding", None) or ""
    return encoding.lower().replace("-", "") in ("utf8", "utf16", "utf32")


@dataclass(frozen=True)
class Glyphs:
    """The few symbols the renderer draws, with ASCII fallbacks for non-UTF-8 terminals."""

    user: str = "›"
    tool: str = "●"
    failed: str = "✗"
    ellipsis: str = "…"
    bullet: str = "•"
    spinner: tuple[str, ...] = ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")


ASCII_GLYPHS = Glyphs(user=">", tool="*", failed="x", ellipsis="...", bullet="-", spinner=("-", "\\", "|", "/"))


class Palette:
    """Wraps text in SGR codes from the theme, or returns it unchanged when colour is off.

    Styles are attributes (``bold``, ``dim``, ``italic``, ``underline``, ``inverse``), the renderer's
    colour names (``red``, ``gray``...) or any theme token (``mdHeading``, ``toolDiffAdded``...);
    a name ending in ``Bg`` is a background.
    """

    def __init__(self, colour: bool = True, glyphs: Glyphs | None = None, theme: Any = None) -> None:
        self.colour = colour
        self.glyphs = glyphs or Glyphs()
        if theme is None:
            from .theme import builtin_theme

            theme = builtin_theme("system", colour=colour)
        self.theme = theme
        self._cache: dict[tuple[str, ...], str] = {}

    def __call__(self, text: str, *styles: str) -> str:
        if not self.colour or not styles or not text:
            return text
        codes = self._cache.get(styles)
        if codes is None:
            codes = self._cache[styles] = ";".join(c for c in (self._code(s) for s in styles) if c)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    def _code(self, style: str) -> str:
        attribute = _ATTRIBUTES.get(style)
        if attribute is not None:
            return attribute
        token = _ALIASES.get(style, style)
        return self.theme.code(token, background=token.endswith("Bg"))

    def with_theme(self, theme: Any) -> Palette:
        return Palette(self.colour, self.glyphs, theme)

    @classmethod
    def for_stream(cls, stream: object = None, theme: Any = None) -> Palette:
        return cls(colour_wanted(stream), Glyphs() if unicode_wanted(stream) else ASCII_GLYPHS, theme)


def strip_ansi(text: str) -> str:
    return _SGR.sub("", text)


def char_width(char: str) -> int:
    if char < "\u0300":  # ASCII and Latin: the common case, no table lookup
        return 0 if char < " " else 1
    from wcwidth import wcwidth

    return max(wcwidth(char), 0)


def display_width(text: str) -> int:
    """Columns ``text`` takes on screen (SGR codes ignored)."""
    if "\x1b" in text:
        text = strip_ansi(text)
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """Plain ``text`` cut to ``width`` columns, ending in ``ellipsis`` when something was cut."""
    if display_width(text) <= width:
        return text
    room = max(width - display_width(ellipsis), 0)
    used, out = 0, []
    for char in text:
        w = char_width(char)
        if used + w > room:
            break
        out.append(char)
        used += w
    return "".join(out) + ellipsis


def wrap(line: str, width: int | None) -> list[str]:
    """Greedy word wrap of one logical line (no newlines) into rows of at most ``width`` columns.

    Prefix-stable: for a growing ``line``, every row but the last never changes once produced, which
    lets the streaming renderer print finished rows to the scrollback while the line is still
    arriving. Words longer than a row are cut. ``width=None`` means no wrapping.
    """
    if width is None or width <= 0 or display_width(line) <= width:
        return [line]
    rows: list[str] = []
    rest = line
    while display_width(rest) > width:
        row, rest = _split_row(rest, width)
        rows.append(row)
    rows.append(rest)
    return rows


def _split_row(text: str, width: int) -> tuple[str, str]:
    used, cut, last_space = 0, len(text), -1
    for index, char in enumerate(text):
        w = char_width(char)
        if used + w > width:
            cut = index
            break
        if char == " ":
            last_space = index
        used += w
    if text[cut:cut + 1] == " ":  # the break falls exactly on a space
        return text[:cut].rstrip(" "), text[cut:].lstrip(" ")
    if last_space > 0 and text[:last_space].strip():
        return text[:last_space].rstrip(" "), text[last_space + 1:]
    return text[:cut], text[cut:]


__all__ = ["ASCII_GLYPHS", "Glyphs", "Palette", "clip", "colour_wanted", "display_width", "strip_ansi", "wrap"]
