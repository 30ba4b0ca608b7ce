"""Markdown drawn as the terminal draws answers (pi-tui's ``Markdown``): headings, emphasis, lists,
quotes, tables and highlighted code blocks, wrapped to the width."""

from __future__ import annotations

from typing import Any


class Markdown:
    """``text`` as markdown (pi's ``Markdown``), ``padding_x`` columns left and right and ``padding_y``
    empty rows above and below, in ``theme``'s markdown colours (``mdHeading``, ``mdCode``...; pass
    ``ctx.ui.theme`` or :func:`~pi_core.tui.get_markdown_theme`'s; without one: the terminal's colours).
    The rows are cached per width until :meth:`set_text` or :meth:`invalidate`."""

    def __init__(self, text: str = "", padding_x: int = 1, padding_y: int = 1, theme: Any = None) -> None:
        self.text = text
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.theme = theme
        self._cache: tuple[int, list[str]] | None = None

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self._cache = None

    def invalidate(self) -> None:
        self._cache = None

    def render(self, width: int) -> list[str]:
        if self._cache is None or self._cache[0] != width:
            self._cache = (width, self._rows(width))
        return list(self._cache[1])

    def _rows(self, width: int) -> list[str]:
        if not self.text.strip():
            return []
        from ..modes.interactive.capabilities import hyperlinks
        from ..modes.interactive.markdown import render_markdown
        from ..modes.interactive.style import Palette

        colour = bool(getattr(self.theme, "colour", True))
        palette = Palette(colour, theme=self.theme) if self.theme is not None else Palette(colour)
        pad = min(self.padding_x, max(0, (width - 1) // 2))
        margin = " " * pad
        rows = render_markdown(palette, self.text, max(1, width - 2 * pad), hyperlinks=hyperlinks())
        return [*[""] * self.padding_y, *(margin + row for row in rows), *[""] * self.padding_y]


__all__ = ["Markdown"]
