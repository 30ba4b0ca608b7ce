"""Terminal geometry of styled text: how many columns a row takes, cutting and wrapping it to a width.

Escape sequences (SGR styling, OSC 8 hyperlinks, APC markers such as :data:`~pi_core.tui.CURSOR_MARKER`)
take no columns. Widths are counted per grapheme cluster, as terminals draw them: East Asian wide
characters and emoji take two columns, and so do emoji built of several code points (``👍🏽``,
``👨‍👩‍👧‍👦``, flags); combining marks take none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: styling, cursor moves
    r"|\x1b[\]_P^][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (hyperlinks), APC (markers), DCS, PM
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
RESET = "\x1b[0m"
TAB = "   "
"""A tab is drawn as three spaces (pi's width)."""


def _graphemes(text: str) -> Iterator[str]:
    try:
        from wcwidth import iter_graphemes
    except ImportError:  # an older wcwidth: combining marks and joiners stay with what they follow
        yield from _simple_graphemes(text)
        return
    yield from iter_graphemes(text)


def _simple_graphemes(text: str) -> Iterator[str]:
    import unicodedata

    cluster = ""
    for char in text:
        joins = cluster and (unicodedata.combining(char) or char in "\u200d\ufe0f\ufe0e"
                             or cluster.endswith("\u200d") or "\U0001f3fb" <= char <= "\U0001f3ff")
        if joins:
            cluster += char
            continue
        if cluster:
            yield cluster
        cluster = char
    if cluster:
        yield cluster


def grapheme_width(cluster: str) -> int:
    """Columns one grapheme cluster takes."""
    if len(cluster) == 1 and " " <= cluster < "\x7f":
        return 1
    if cluster == "\t":
        return len(TAB)
    try:
        from wcwidth import width
    except ImportError:
        from wcwidth import wcswidth

        return max(wcswidth(cluster[0]), 0) if cluster else 0
    return max(int(width(cluster)), 0)


def strip_escapes(text: str) -> str:
    """``text`` without escape sequences."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


def visible_width(text: str) -> int:
    """Columns ``text`` takes on screen: escape sequences count zero, wide characters and emoji two,
    per grapheme cluster (``"👍🏽"`` is 2); a tab counts as three."""
    plain = strip_escapes(text)
    if plain.isascii() and plain.isprintable():
        return len(plain)
    return sum(grapheme_width(cluster) for cluster in _graphemes(plain.replace("\t", TAB)))


def tokens(text: str) -> Iterator[tuple[str, int]]:
    """``text`` as (piece, columns): escape sequences (0 columns) and grapheme clusters."""
    position = 0
    for match in _ESCAPE.finditer(text) if "\x1b" in text else ():
        if match.start() > position:
            yield from ((c, grapheme_width(c)) for c in _graphemes(text[position:match.start()]))
        yield match.group(), 0
        position = match.end()
    if position < len(text):
        yield from ((c, grapheme_width(c)) for c in _graphemes(text[position:]))


def truncate_to_width(text: str, width: int, ellipsis: str = "…", pad: bool = False) -> str:
    """``text`` cut to ``width`` columns (ending in ``ellipsis`` when cut); escape sequences are kept
    and a reset follows a cut, so a styled row never bleeds into the next. ``pad`` fills with spaces
    up to ``width`` (pi's ``truncateToWidth``; its default ellipsis is ``"..."``)."""
    if width <= 0:
        return ""
    used = visible_width(text)
    if used <= width:
        return text + " " * (width - used) if pad else text
    if visible_width(ellipsis) >= width:
        ellipsis = ""
    room = width - visible_width(ellipsis)
    out: list[str] = []
    kept = 0
    for piece, columns in tokens(text):
        if kept + columns > room:
            break
        out.append(piece)
        kept += columns
    styled = "\x1b" in text
    cut = "".join(out) + (RESET if styled else "") + ellipsis
    return cut + " " * (width - kept - visible_width(ellipsis)) if pad else cut


def slice_by_column(text: str, start: int, length: int, strict: bool = False) -> str:
    """The part of ``text`` drawn in columns ``start`` to ``start + length``, with the styling in force
    there (pi's ``sliceByColumn``). A wide character cut by an edge is left out with ``strict``, kept
    otherwise."""
    if length <= 0:
        return ""
    end = start + length
    out: list[str] = []
    carried: list[str] = []
    column = 0
    for piece, columns in tokens(text):
        if columns == 0:
            if piece.startswith("\x1b["):
                (out if start <= column < end or out else carried).append(piece)
            elif start <= column < end:
                out.append(piece)
            continue
        if column >= end:
            break
        inside = column >= start and (column + columns <= end or not strict)
        if inside:
            if not out:
                out.extend(carried)
            out.append(piece)
        column += columns
    return "".join(out)


class SgrState:
    """The SGR codes in force after some text (to carry styling onto the next row)."""

    def __init__(self) -> None:
        self.codes: list[str] = []

    def feed(self, piece: str) -> None:
        if not _SGR.fullmatch(piece):
            return
        if piece in ("\x1b[0m", "\x1b[m"):
            self.codes.clear()
        else:
            self.codes.append(piece)

    def prefix(self) -> str:
        return "".join(self.codes)


def wrap_text_with_ansi(text: str, width: int) -> list[str]:
    """``text`` word-wrapped to rows of at most ``width`` columns, keeping its styling: a row that ends
    styled is reset, and the next row starts with the styles still in force (pi's ``wrapTextWithAnsi``).
    Newlines start new rows; a word longer than the width is broken."""
    if not text:
        return [""]
    width = max(width, 1)
    state = SgrState()
    rows: list[str] = []
    for line in re.split(r"\r\n|\r|\n", text):
        rows.extend(_wrap_line(line, width, state))
    return rows or [""]


def _wrap_line(line: str, width: int, state: SgrState) -> list[str]:
    prefix = state.prefix()
    pieces = list(tokens(line))
    if sum(columns for _, columns in pieces) <= width:
        return [_emit(prefix, pieces, state, trim=False)]
    rows: list[str] = []
    row: list[tuple[str, int]] = []
    used = 0
    breaks = -1  # index in ``row`` just after the last space
    for piece, columns in pieces:
        if columns and used + columns > width and used > 0:
            rest: list[tuple[str, int]] = []
            if piece != " " and 0 < breaks < len(row):
                row, rest = row[:breaks], row[breaks:]
            rows.append(_emit(prefix, row, state, trim=True))
            prefix, row = state.prefix(), rest
            used = sum(c for _, c in row)
            breaks = -1
            if piece == " ":
                continue  # the space the row broke at is not drawn
        row.append((piece, columns))
        used += columns
        if piece == " ":
            breaks = len(row)
    rows.append(_emit(prefix, row, state, trim=True))
    return rows


def _emit(prefix: str, row: list[tuple[str, int]], state: SgrState, *, trim: bool) -> str:
    """One finished row: the styles in force first, a reset when styling is still on at its end;
    ``trim``: without the spaces it broke at."""
    while trim and row and row[-1][0] == " ":
        row.pop()
    for piece, _ in row:
        state.feed(piece)
    text = prefix + "".join(piece for piece, _ in row)
    return text + RESET if state.codes else text


__all__ = ["grapheme_width", "slice_by_column", "strip_escapes", "tokens", "truncate_to_width", "visible_width",
           "wrap_text_with_ansi"]
