"""Code as the terminal highlights it (pygments), for renderers."""

from __future__ import annotations

from typing import Any


def highlight_code(code: str, language: str | None = None, *, path: str | None = None,
                   theme: Any = None) -> list[str]:
    """``code`` as styled lines (pygments), by ``language`` or by the file name in ``path``; plain lines
    when no lexer fits or colour is off."""
    from ..modes.interactive.highlight import highlight_lines
    from ..modes.interactive.style import Palette

    palette = Palette(True, theme=theme) if theme is None or getattr(theme, "colour", True) else Palette(False)
    lines = highlight_lines(palette, code, language=language, filename=path)
    return lines if lines is not None else code.rstrip("\n").split("\n")


__all__ = ["highlight_code"]
