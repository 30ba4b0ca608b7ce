"""Components that arrange and show text (pi-tui's ``Container``, ``Box``, ``Spacer``, ``Text``,
``TruncatedText`` and pi's ``DynamicBorder``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .width import truncate_to_width, visible_width, wrap_text_with_ansi

Style = Callable[[str], str]


def render_child(component: Any, width: int) -> list[str]:
    return [str(row) for row in component.render(width)]


def _invalidate(component: Any) -> None:
    invalidate = getattr(component, "invalidate", None)
    if callable(invalidate):
        invalidate()


def _background(line: str, width: int, style: Style | None) -> str:
    padded = line + " " * max(width - visible_width(line), 0)
    return style(padded) if style is not None else padded


class Container:
    """Children drawn one under the other (pi's ``Container``)."""

    def __init__(self, children: Sequence[Any] = ()) -> None:
        self.children: list[Any] = list(children)

    def add_child(self, component: Any) -> None:
        self.children.append(component)

    def remove_child(self, component: Any) -> None:
        if component in self.children:
            self.children.remove(component)

    def clear(self) -> None:
        self.children = []

    def invalidate(self) -> None:
        for child in self.children:
            _invalidate(child)

    def render(self, width: int) -> list[str]:
        rows: list[str] = []
        for child in self.children:
            rows.extend(render_child(child, width))
        return rows


class Box(Container):
    """Children with padding around them and an optional background over the whole width (pi's
    ``Box``: ``padding_x`` columns left and right, ``padding_y`` rows above and below)."""

    def __init__(self, padding_x: int = 1, padding_y: int = 1, bg_fn: Style | None = None) -> None:
        super().__init__()
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.bg_fn = bg_fn

    def set_bg_fn(self, bg_fn: Style | None) -> None:
        self.bg_fn = bg_fn

    def set_padding_x(self, padding_x: int) -> None:
        self.padding_x = padding_x

    def render(self, width: int) -> list[str]:
        if not self.children:
            return []
        inner = max(1, width - 2 * self.padding_x)
        content = super().render(inner)
        if not content:
            return []
        left = " " * self.padding_x
        blank = [_background("", width, self.bg_fn)] * self.padding_y
        return [*blank, *(_background(left + row, width, self.bg_fn) for row in content), *blank]


class Spacer:
    """``lines`` empty rows (pi's ``Spacer``)."""

    def __init__(self, lines: int = 1) -> None:
        self.lines = lines

    def set_lines(self, lines: int) -> None:
        self.lines = lines

    def render(self, width: int) -> list[str]:
        return [""] * self.lines

    def invalidate(self) -> None:
        return None


class Text:
    """Text wrapped to the width, keeping its styling (pi's ``Text``): ``text`` is a string (``\\n``
    starts a row) or a list of rows; ``padding_x`` columns left and right, ``padding_y`` empty rows
    above and below (pi's defaults are 1 and 1; here 0 and 0, so ``Text(lines)`` shows just the
    lines), ``custom_bg_fn`` a background over the whole width. Empty text draws nothing."""

    def __init__(self, text: str | Sequence[str] = "", padding_x: int = 0, padding_y: int = 0,
                 custom_bg_fn: Style | None = None) -> None:
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.custom_bg_fn = custom_bg_fn
        self.text = ""
        self.set_text(text)
        self._cache: tuple[str, int, list[str]] | None = None

    def set_text(self, text: str | Sequence[str]) -> None:
        self.text = text if isinstance(text, str) else "\n".join(str(line) for line in text)
        self._cache = None

    set_lines = set_text

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def set_custom_bg_fn(self, custom_bg_fn: Style | None) -> None:
        self.custom_bg_fn = custom_bg_fn
        self._cache = None

    def set_padding_x(self, padding_x: int) -> None:
        self.padding_x = padding_x
        self._cache = None

    def invalidate(self) -> None:
        self._cache = None

    def render(self, width: int) -> list[str]:
        if self._cache is not None and self._cache[:2] == (self.text, width):
            return list(self._cache[2])
        rows = self._rows(width)
        self._cache = (self.text, width, rows)
        return list(rows)

    def _rows(self, width: int) -> list[str]:
        if not self.text.strip():
            return []
        pad = min(self.padding_x, max(0, (width - 1) // 2))
        inner = max(1, width - 2 * pad)
        margin = " " * pad
        rows = [f"{margin}{row}" for row in wrap_text_with_ansi(self.text.replace("\t", "   "), inner)]
        if self.custom_bg_fn is not None:
            rows = [_background(row + margin, width, self.custom_bg_fn) for row in rows]
        blank = [_background("", width, self.custom_bg_fn) if self.custom_bg_fn else ""] * self.padding_y
        return [*blank, *rows, *blank]


class TruncatedText:
    """One row of text cut to the width with an ellipsis, never wrapped (pi's ``TruncatedText``)."""

    def __init__(self, text: str = "", padding_x: int = 0, padding_y: int = 0) -> None:
        self.text = text
        self.padding_x = padding_x
        self.padding_y = padding_y

    def set_text(self, text: str) -> None:
        self.text = text

    def invalidate(self) -> None:
        return None

    def render(self, width: int) -> list[str]:
        first = self.text.split("\n", 1)[0]
        margin = " " * self.padding_x
        row = margin + truncate_to_width(first, max(1, width - 2 * self.padding_x))
        return [*[""] * self.padding_y, row, *[""] * self.padding_y]


class DynamicBorder:
    """A horizontal rule across the whole width (pi's ``DynamicBorder``); ``color`` styles it (pi's
    default is the theme's ``border`` colour: pass ``lambda s: theme.fg("border", s)``)."""

    def __init__(self, color: Style | None = None) -> None:
        self.color: Style = color or (lambda text: text)

    def invalidate(self) -> None:
        return None

    def render(self, width: int) -> list[str]:
        return [self.color("─" * max(1, width))]


__all__ = ["Box", "Container", "DynamicBorder", "Spacer", "Text", "TruncatedText"]
