"""Markdown for the terminal: markdown-it-py parses, this module lays the blocks out in rows.

Headings, paragraphs, nested lists, block quotes, tables, rules, fenced code (highlighted by
pygments, see :mod:`.highlight`), emphasis, inline code, strikethrough and links (OSC 8 hyperlinks,
which terminals that know them make clickable). Without colour the text keeps its markdown markers
where they carry meaning (``#`` headings, ``**bold**`` becomes plain).

Streaming (:class:`MarkdownStream`): an answer arrives in small pieces, and the scrollback is
printed once. A block is final once the next one has begun (markdown's block structure is decided
line by line from the top), so every block but the last is rendered and printed as soon as the
following one starts; the last one is drawn in the live region until it is complete too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .style import Palette, char_width, display_width

_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"^\s*$|^ {0,3}(?:[#>*+\-=|_]|\d{1,9}[.)]|`{3}|~{3})")
"""A line that may end the block before it (blank, or a heading, quote, list, rule, table or fence)."""
FREE_PARSE_CHARS = 2_000
"""Below this much pending text every possible block end is checked; above it, checks wait until the
text has grown by half, so a very long list costs linear time, not quadratic."""
LIVE_TAIL_CHARS = 2_500
_parser: Any = None


_block_parser: Any = None


def block_parser() -> Any:
    """A parser that finds blocks only (no inline parsing): enough to see where blocks start."""
    global _block_parser
    if _block_parser is None:
        from markdown_it import MarkdownIt

        _block_parser = MarkdownIt("commonmark", {"html": False}).enable("table").disable("inline")
    return _block_parser


def parser() -> Any:
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt

        _parser = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough")
    return _parser


@dataclass(frozen=True)
class _Span:
    text: str
    styles: tuple[str, ...] = ()
    link: str | None = None


class MarkdownRenderer:
    """Renders markdown text to terminal rows of at most ``width`` columns."""

    def __init__(self, palette: Palette, *, hyperlinks: bool = True, code_indent: str = "  ") -> None:
        self.p = palette
        self.hyperlinks = hyperlinks and palette.colour
        self.code_indent = code_indent

    def render(self, text: str, width: int | None) -> list[str]:
        from markdown_it.tree import SyntaxTreeNode

        tree = SyntaxTreeNode(parser().parse(text))
        return self._blocks(tree.children, width or 10_000, tight=False)

    # -- blocks ------------------------------------------------------------------------------------

    def _blocks(self, nodes: Iterable[Any], width: int, *, tight: bool) -> list[str]:
        rows: list[str] = []
        for node in nodes:
            block = self._block(node, width, tight)
            if not block:
                continue
            if rows and not tight:
                rows.append("")
            rows.extend(block)
        return rows

    def _block(self, node: Any, width: int, tight: bool) -> list[str]:
        kind = node.type
        if kind == "paragraph":
            return self._wrap(self._inline(node), width)
        if kind == "heading":
            return self._heading(node, width)
        if kind in ("bullet_list", "ordered_list"):
            return self._list(node, width)
        if kind == "blockquote":
            return self._quote(node, width)
        if kind in ("fence", "code_block"):
            return self._code(node.content, node.info if kind == "fence" else "", width)
        if kind == "table":
            return self._table(node, width)
        if kind == "hr":
            return [self.p("─" * min(width, 80), "mdHr")]
        if kind == "html_block":
            return [r for line in node.content.rstrip("\n").split("\n") for r in _hard_wrap(line, width)]
        return self._blocks(node.children, width, tight=tight)

    def _heading(self, node: Any, width: int) -> list[str]:
        level = int(node.tag[1:])
        spans = self._inline(node, ("mdHeading", "bold", *(("underline",) if level == 1 else ())))
        if not self.p.colour:
            spans = [_Span("#" * level + " "), *spans]
        return self._wrap(spans, width)

    def _list(self, node: Any, width: int) -> list[str]:
        ordered = node.type == "ordered_list"
        start = int(node.attrs.get("start", 1)) if ordered else 1
        items = node.children
        markers = [f"{start + i}." if ordered else "-" for i in range(len(items))]
        pad = max(len(m) for m in markers) + 1 if markers else 2
        tight = all(getattr(p, "hidden", False) for item in items for p in item.children if p.type == "paragraph")
        rows: list[str] = []
        for marker, item in zip(markers, items, strict=True):
            body = self._blocks(item.children, max(width - pad, 8), tight=tight) or [""]
            if rows and not tight:
                rows.append("")
            bullet = self.p(marker.ljust(pad), "mdListBullet")
            rows.append(bullet + body[0])
            rows.extend((" " * pad + r) if r else "" for r in body[1:])
        return rows

    def _quote(self, node: Any, width: int) -> list[str]:
        bar = self.p("│ ", "mdQuoteBorder") if self.p.colour else "> "
        body = self._blocks(node.children, max(width - 2, 8), tight=False)
        return [bar + (self.p(r, "mdQuote") if r and "\x1b" not in r else r) for r in body]

    def _code(self, code: str, info: str, width: int) -> list[str]:
        from .highlight import highlight_lines

        language = info.strip().split()[0] if info.strip() else ""
        source = code.rstrip("\n")
        lines = highlight_lines(self.p, source, language=language) if language else None
        if lines is None:
            lines = [self.p(line, "mdCodeBlock") for line in source.split("\n")]
        room = max(width - len(self.code_indent), 8)
        rows = [self.p("```" + language, "mdCodeBlockBorder")]
        for line in lines:
            for part in _hard_wrap(line.replace("\t", "    "), room):
                rows.append(self.code_indent + part)
        rows.append(self.p("```", "mdCodeBlockBorder"))
        return rows

    def _table(self, node: Any, width: int) -> list[str]:
        grid: list[list[list[_Span]]] = []
        header_rows = 0
        for section in node.children:
            for row in section.children:
                grid.append([self._inline(cell) for cell in row.children])
                if section.type == "thead":
                    header_rows += 1
        if not grid:
            return []
        columns = max(len(r) for r in grid)
        for row in grid:
            row.extend([] for _ in range(columns - len(row)))
        natural = [max(max((_spans_width(row[c]) for row in grid), default=0), 1) for c in range(columns)]
        widths = _fit_columns(natural, width - 3 * (columns - 1))
        sep = self.p(" │ ", "border")
        out: list[str] = []
        for index, row in enumerate(grid):
            cells = [self._wrap(row[c], widths[c]) or [""] for c in range(columns)]
            height = max(len(c) for c in cells)
            for line in range(height):
                parts = []
                for c in range(columns):
                    text = cells[c][line] if line < len(cells[c]) else ""
                    text = text + " " * (widths[c] - display_width(text))
                    parts.append(self.p(text, "bold") if index < header_rows and text.strip() else text)
                out.append(sep.join(parts).rstrip())
            if index == header_rows - 1:
                out.append(self.p("─┼─".join("─" * w for w in widths), "border"))
        return out

    # -- inline ------------------------------------------------------------------------------------

    def _inline(self, node: Any, styles: tuple[str, ...] = ()) -> list[_Span]:
        spans: list[_Span] = []
        for child in node.children:
            self._inline_node(child, styles, None, spans)
        return spans

    def _inline_node(self, node: Any, styles: tuple[str, ...], link: str | None, out: list[_Span]) -> None:
        kind = node.type
        if kind == "text":
            out.append(_Span(node.content, styles, link))
        elif kind == "softbreak":
            out.append(_Span(" ", styles, link))
        elif kind == "hardbreak":
            out.append(_Span("\n", styles, link))
        elif kind == "code_inline":
            out.append(_Span(node.content if self.p.colour else f"`{node.content}`", (*styles, "mdCode"), link))
        elif kind in ("strong", "em", "s"):
            extra = {"strong": "bold", "em": "italic", "s": "dim"}[kind]
            for child in node.children:
                self._inline_node(child, (*styles, extra), link, out)
        elif kind == "link":
            href = str(node.attrs.get("href", ""))
            before = len(out)
            for child in node.children:
                self._inline_node(child, (*styles, "mdLink", "underline"), href if self.hyperlinks else None, out)
            shown = "".join(s.text for s in out[before:])
            if href and shown != href and not href.startswith("mailto:") and not self.hyperlinks:
                out.append(_Span(f" ({href})", (*styles, "mdLinkUrl"), None))
        elif kind == "image":
            out.append(_Span(f"[image: {node.content or node.attrs.get('alt', '')}]", (*styles, "muted"), link))
        elif kind in ("html_inline",):
            out.append(_Span(node.content, styles, link))
        else:
            for child in node.children:
                self._inline_node(child, styles, link, out)

    # -- wrapping ----------------------------------------------------------------------------------

    def _wrap(self, spans: list[_Span], width: int) -> list[str]:
        """Word-wrap styled spans into rows (hard line breaks kept, long words cut)."""
        rows: list[list[_Span]] = [[]]
        used = 0
        for span in spans:
            for piece in re.findall(r"\n|[^\S\n]+|[^\s]+", span.text):
                if piece == "\n":
                    rows.append([])
                    used = 0
                    continue
                if piece.isspace():
                    if used and used < width:
                        rows[-1].append(_Span(" ", span.styles, span.link))
                        used += 1
                    continue
                w = display_width(piece)
                if used and used + w > width:
                    _trim(rows[-1])
                    rows.append([])
                    used = 0
                while w > width:
                    head, piece = _cut(piece, width - used)
                    rows[-1].append(_Span(head, span.styles, span.link))
                    rows.append([])
                    used, w = 0, display_width(piece)
                rows[-1].append(_Span(piece, span.styles, span.link))
                used += w
        for row in rows:
            _trim(row)
        return [self._join(row) for row in rows]

    def _join(self, row: list[_Span]) -> str:
        out: list[str] = []
        for key, group in _groups(row):
            styles, link = key
            text = self.p("".join(s.text for s in group), *styles) if styles else "".join(s.text for s in group)
            if link:
                text = f"\x1b]8;;{link}\x1b\\{text}\x1b]8;;\x1b\\"
            out.append(text)
        return "".join(out)


def _groups(row: list[_Span]) -> list[tuple[tuple[tuple[str, ...], str | None], list[_Span]]]:
    out: list[tuple[tuple[tuple[str, ...], str | None], list[_Span]]] = []
    for span in row:
        key = (span.styles, span.link)
        if out and out[-1][0] == key:
            out[-1][1].append(span)
        else:
            out.append((key, [span]))
    return out


def _trim(row: list[_Span]) -> None:
    while row and row[-1].text == " ":
        row.pop()


def _cut(text: str, room: int) -> tuple[str, str]:
    used = 0
    for index, char in enumerate(text):
        used += char_width(char)
        if used > max(room, 1):
            return text[:max(index, 1)], text[max(index, 1):]
    return text, ""


def _hard_wrap(line: str, width: int) -> list[str]:
    """Cut an (already styled) line into rows of ``width`` columns, keeping its colours."""
    if display_width(line) <= width:
        return [line]
    rows, current, used, active = [], "", 0, ""
    for piece in re.findall(r"\x1b\[[0-9;:]*m|\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)|.", line, re.S):
        if piece.startswith("\x1b"):
            current += piece
            if piece.startswith("\x1b["):
                active = "" if piece in ("\x1b[0m", "\x1b[m") else active + piece
            continue
        w = char_width(piece)
        if used + w > width:
            rows.append(current + ("\x1b[0m" if active else ""))
            current, used = active, 0
        current += piece
        used += w
    rows.append(current)
    return rows


def _spans_width(spans: list[_Span]) -> int:
    return display_width("".join(s.text for s in spans))


def _fit_columns(natural: list[int], room: int) -> list[int]:
    """Column widths that fit ``room``: narrow columns keep their width, wide ones share the rest."""
    if sum(natural) <= room or room <= len(natural) * 3:
        return natural if sum(natural) <= room else [max(3, room // len(natural))] * len(natural)
    widths = list(natural)
    while sum(widths) > room:
        widest = max(range(len(widths)), key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


class MarkdownStream:
    """One streamed answer: finished blocks come out as rows (once), the open block stays live."""

    def __init__(self, renderer: MarkdownRenderer) -> None:
        self.renderer = renderer
        self._chunks: list[str] = []
        self._fences = 0  # fence lines seen in the pending text (odd: inside a code block)
        self._partial = ""  # the pending text's last, unfinished line
        self._emitted = False
        self._retry = False
        self._after_blank = False
        self._size = 0
        self._checked = 0  # pending size at the last check that found no finished block
        self._live_key: tuple[int, int] | None = None
        self._live_rows: list[str] = []

    @property
    def pending_size(self) -> int:
        return self._size

    @property
    def pending(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def feed(self, text: str, width: int | None) -> list[str]:
        """Add streamed text; returns the rows of blocks that are now complete."""
        if not self._chunks:
            text = text.lstrip("\n")  # blank lines before the first block mean nothing; spaces may
            if not text:
                return []
        self._chunks.append(text)
        self._size += len(text)
        if "\n" not in text:
            self._partial += text
            if self._retry and text.strip():  # the first word after a blank line starts a new block
                self._retry = False
                rows = self._commit(width, partial=True)
                self._checked = 0 if rows else self._checked
                return rows
            return []
        lines = (self._partial + text).split("\n")
        self._partial = lines[-1]
        was_open = self._fences % 2 == 1
        finished = lines[:-1]
        self._fences += sum(1 for line in finished if _FENCE_LINE.match(line))
        if self._fences % 2 and was_open:
            return []  # inside a fenced block: it is not done, and what came before is printed
        if not (self._after_blank or any(_BLOCK_START.match(line) for line in finished)
                or self._fences % 2 != was_open):
            self._after_blank = False
            return []  # a plain line continues the block it follows
        self._after_blank = not finished[-1].strip()
        size = self._size
        if size > FREE_PARSE_CHARS and size < self._checked * 1.5:
            return []
        rows = self._commit(width)
        self._checked = 0 if rows else size
        self._retry = not rows and not self._partial.strip() and self._after_blank
        return rows

    def _commit(self, width: int | None, *, partial: bool = False) -> list[str]:
        """Print the finished blocks: those before the last block that starts on a complete line. A block
        seen starting on the unfinished last line may still turn out to be part of the one before (``*``
        becomes ``**bold**``, a lazy continuation of a list item); only after a blank line (``partial``)
        can it not."""
        text = self.pending
        tokens = block_parser().parse(text)
        last = len(text.split("\n")) if partial or text.endswith("\n") else text.count("\n")
        starts = [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map and t.map[0] < last]
        if len(starts) < 2:
            return []
        cut = starts[-1]
        lines = text.split("\n")
        done, rest = "\n".join(lines[:cut]), "\n".join(lines[cut:])
        self._chunks = [rest]
        self._size = len(rest)
        self._fences = sum(1 for line in lines[cut:-1] if _FENCE_LINE.match(line))
        return self._rows(done, width)

    def _rows(self, text: str, width: int | None) -> list[str]:
        rows = self.renderer.render(text, width)
        if rows and self._emitted:
            rows = ["", *rows]
        self._emitted = self._emitted or bool(rows)
        return rows

    def live(self, width: int | None, limit: int | None = None) -> list[str]:
        """The open block as it would look now (at most its last ``limit`` rows)."""
        text = self.pending
        key = (len(text), width or 0)
        if key != self._live_key:
            self._live_key = key
            if len(text) > LIVE_TAIL_CHARS:  # only the end is shown: lay out only the end
                start = text.find("\n", len(text) - LIVE_TAIL_CHARS)
                text = text[start + 1:] if start >= 0 else text[-LIVE_TAIL_CHARS:]
                if self._fences % 2 and not _FENCE_LINE.match(text):
                    text = "```\n" + text
            rows = self.renderer.render(text, width) if text.strip() else []
            self._live_rows = (["", *rows] if rows and self._emitted else rows)
        return self._live_rows[-limit:] if limit else self._live_rows

    def close(self, width: int | None) -> list[str]:
        """The rest, once the answer is complete."""
        text, self._chunks, self._size = self.pending, [], 0
        return self._rows(text, width) if text.strip() else []


def render_markdown(palette: Palette, text: str, width: int | None, **options: Any) -> list[str]:
    return MarkdownRenderer(palette, **options).render(text, width)


__all__ = ["MarkdownRenderer", "MarkdownStream", "parser", "render_markdown"]
