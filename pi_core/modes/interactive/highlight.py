"""Syntax highlighting with pygments, coloured by the theme's ``syntax*`` tokens.

Used for fenced code blocks in answers and for the file views of ``read`` and ``write``. The lexer is
found by the fence's language or the file name; unknown code is left plain. pygments is imported on
first use.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .style import Palette

MAX_HIGHLIGHT_CHARS = 200_000
"""Longer texts are shown plain (highlighting them would hold up the terminal)."""


@lru_cache(maxsize=64)
def _lexer(language: str | None, filename: str | None) -> Any:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        if language:
            return get_lexer_by_name(language.strip().lower(), stripnl=False, ensurenl=False)
        if filename:
            return get_lexer_for_filename(filename, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    return None


_STYLES: dict[Any, str | None] = {}


def _token_style(kind: Any) -> str | None:
    style = _STYLES.get(kind, "")
    if style == "":
        style = _STYLES[kind] = _find_style(kind)
    return style


def _find_style(kind: Any) -> str | None:
    from pygments import token as t

    for parent, style in ((t.Comment, "syntaxComment"), (t.Keyword.Type, "syntaxType"), (t.Keyword, "syntaxKeyword"),
                          (t.Name.Function, "syntaxFunction"), (t.Name.Class, "syntaxType"),
                          (t.Name.Builtin, "syntaxFunction"), (t.Name.Decorator, "syntaxFunction"),
                          (t.Name.Variable, "syntaxVariable"), (t.Name.Tag, "syntaxKeyword"),
                          (t.Name.Attribute, "syntaxVariable"), (t.Literal.String, "syntaxString"),
                          (t.Literal.Number, "syntaxNumber"), (t.Operator, "syntaxOperator"),
                          (t.Punctuation, "syntaxPunctuation"), (t.Generic.Inserted, "toolDiffAdded"),
                          (t.Generic.Deleted, "toolDiffRemoved"), (t.Generic.Heading, "mdHeading")):
        if kind in parent:
            return style
    return None


def highlight_lines(palette: Palette, code: str, *, language: str | None = None,
                    filename: str | None = None) -> list[str] | None:
    """``code`` as styled lines (one per source line), or ``None`` when no lexer fits."""
    if not palette.colour or len(code) > MAX_HIGHLIGHT_CHARS:
        return None
    suffix = "x" + filename[filename.rfind("."):] if filename and "." in filename.rsplit("/", 1)[-1] else filename
    lexer = _lexer(language or None, suffix or None)  # cached by extension, not by every path
    if lexer is None:
        return None
    lines: list[str] = [""]
    for kind, value in lexer.get_tokens(code):
        style = _token_style(kind)
        parts = value.split("\n")
        for index, part in enumerate(parts):
            if index:
                lines.append("")
            if part:
                lines[-1] += palette(part, style) if style else part
    if code.endswith("\n") and lines and lines[-1] == "":
        lines.pop()
    return lines


def highlight_tokens(code: str, *, language: str | None = None) -> list[tuple[str | None, str]] | None:
    """``code`` as ``(theme token, text)`` pieces (token ``None`` for plain text), or ``None`` when no
    lexer fits the language or the code is too long; the HTML export colours these by the theme."""
    if not language or len(code) > MAX_HIGHLIGHT_CHARS:
        return None
    lexer = _lexer(language, None)
    if lexer is None:
        return None
    return [(_token_style(kind), value) for kind, value in lexer.get_tokens(code) if value]


def language_known(language: str) -> bool:
    return _lexer(language, None) is not None


__all__ = ["MAX_HIGHLIGHT_CHARS", "highlight_lines", "highlight_tokens", "language_known"]
