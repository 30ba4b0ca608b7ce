"""Light markdown styling for streamed assistant text, one finished row at a time.

A full markdown renderer needs the whole block; the stream gives us rows as they finish, and each
row is printed once. So this styles what a row can tell on its own plus a little state carried
along: fenced code blocks, headings, quotes, inline ``code`` and ``**bold**``. Without colour the
text stays exactly as the model wrote it (markdown source is readable).
"""

from __future__ import annotations

import re

from .style import Palette

_INLINE = re.compile(r"(\*\*|`)")


class MarkdownRows:
    """Styles the rows of one assistant text block, in order."""

    def __init__(self, palette: Palette) -> None:
        self.palette = palette
        self.in_fence = False
        self._line_kind = "text"
        self._in_code = False
        self._in_bold = False

    def row(self, text: str, *, first: bool) -> str:
        """Style one finished row; ``first`` marks the first row of a logical line."""
        if first:
            self._start_line(text)
        kind = self._line_kind
        if kind == "fence":
            return self.palette(text, "gray")
        if kind == "code":
            return self.palette(text, "cyan")
        if kind == "heading":
            return self.palette(text, "bold", "magenta")
        styled = self._inline(text)
        return self.palette(styled, "gray") if kind == "quote" else styled

    def end_line(self) -> None:
        self._in_code = self._in_bold = False

    def _start_line(self, text: str) -> None:
        self.end_line()
        stripped = text.lstrip()
        if stripped.startswith(("```", "~~~")):
            self._line_kind = "fence"
            self.in_fence = not self.in_fence
        elif self.in_fence:
            self._line_kind = "code"
        elif re.match(r"#{1,6}\s", stripped):
            self._line_kind = "heading"
        elif stripped.startswith(">"):
            self._line_kind = "quote"
        else:
            self._line_kind = "text"

    def _inline(self, text: str) -> str:
        if not self.palette.colour or ("`" not in text and "**" not in text and not self._in_code
                                       and not self._in_bold):
            return text
        out = []
        for part in _INLINE.split(text):
            if part == "`":
                self._in_code = not self._in_code
            elif part == "**" and not self._in_code:
                self._in_bold = not self._in_bold
            elif part:
                out.append(self._span(part))
        return "".join(out)

    def _span(self, text: str) -> str:
        if self._in_code:
            return self.palette(text, "cyan")
        if self._in_bold:
            return self.palette(text, "bold")
        return text


__all__ = ["MarkdownRows"]
