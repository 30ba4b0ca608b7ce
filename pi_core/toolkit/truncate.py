"""Cutting tool output down to what a model should see: pi's limits and truncation records.

Two independent limits apply, whichever is hit first: a number of lines and a number of UTF-8 bytes.
``truncate_head`` keeps the start (file reads), ``truncate_tail`` keeps the end, and
``truncate_head_tail`` keeps both ends with a marker in between (command output, where both the
first error and the final summary matter).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500

TruncatedBy = Literal["lines", "bytes"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _details(obj: Any, exclude: tuple[str, ...]) -> dict[str, Any]:
    return {_camel(k): v for k, v in asdict(obj).items() if k not in exclude}


@dataclass(kw_only=True)
class Truncation:
    """What a truncation kept and dropped; its JSON (``details()``) is pi's ``details.truncation``.

    ``content`` is the kept text; it is left out of :meth:`details` because the result's text
    already carries it. (A dataclass, not a pydantic model: tool plugins import this module at
    start-up, and the record is only ever written out through :meth:`details`.)
    """

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int
    max_bytes: int

    def details(self) -> dict[str, Any]:
        """The record as stored in a tool result's ``details`` (camelCase, without ``content``)."""
        return _details(self, ("content",))


def byte_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``3.2MB`` — the size format used in tool notices."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def count_lines(text: str) -> int:
    """Lines as tools count them: a trailing newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _untruncated(text: str, lines: int, size: int, max_lines: int, max_bytes: int) -> Truncation:
    return Truncation(content=text, truncated=False, truncated_by=None, total_lines=lines,
                      total_bytes=size, output_lines=lines, output_bytes=size,
                      max_lines=max_lines, max_bytes=max_bytes)


def truncate_head(text: str, max_lines: int = DEFAULT_MAX_LINES,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> Truncation:
    """Keep whole lines from the start. A first line over ``max_bytes`` keeps nothing and sets
    ``first_line_exceeds_limit`` (the caller should point at another way to see it)."""
    lines = _lines(text)
    size = byte_len(text)
    if len(lines) <= max_lines and size <= max_bytes:
        return _untruncated(text, len(lines), size, max_lines, max_bytes)
    if byte_len(lines[0]) > max_bytes:
        return Truncation(content="", truncated=True, truncated_by="bytes", total_lines=len(lines),
                          total_bytes=size, output_lines=0, output_bytes=0,
                          first_line_exceeds_limit=True, max_lines=max_lines, max_bytes=max_bytes)
    kept: list[str] = []
    used = 0
    by: TruncatedBy = "lines"
    for i, line in enumerate(lines[:max_lines]):
        cost = byte_len(line) + (1 if i else 0)
        if used + cost > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += cost
    content = "\n".join(kept)
    return Truncation(content=content, truncated=True, truncated_by=by, total_lines=len(lines),
                      total_bytes=size, output_lines=len(kept), output_bytes=byte_len(content),
                      max_lines=max_lines, max_bytes=max_bytes)


def tail_bytes(text: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``text``, starting on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def head_bytes(text: str, max_bytes: int) -> str:
    """The first ``max_bytes`` bytes of ``text``, ending on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    end = max_bytes
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end].decode("utf-8", "replace")


def truncate_tail(text: str, max_lines: int = DEFAULT_MAX_LINES,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> Truncation:
    """Keep whole lines from the end; a single last line over ``max_bytes`` keeps its end
    (``last_line_partial``)."""
    lines = _lines(text)
    size = byte_len(text)
    if len(lines) <= max_lines and size <= max_bytes:
        return _untruncated(text, len(lines), size, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    by: TruncatedBy = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = byte_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            by = "bytes"
            if not kept:
                kept.append(tail_bytes(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += cost
    kept.reverse()
    content = "\n".join(kept)
    return Truncation(content=content, truncated=True, truncated_by=by, total_lines=len(lines),
                      total_bytes=size, output_lines=len(kept), output_bytes=byte_len(content),
                      last_line_partial=partial, max_lines=max_lines, max_bytes=max_bytes)


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters with a ``... [truncated]`` marker."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True


@dataclass(kw_only=True)
class HeadTail:
    """Both ends of a text that is over the limits; ``text()`` joins them around a marker."""

    head: str
    tail: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    head_lines: int
    tail_lines: int
    omitted_lines: int
    omitted_bytes: int
    max_lines: int
    max_bytes: int

    @property
    def tail_start_line(self) -> int:
        return self.total_lines - self.tail_lines + 1

    def text(self) -> str:
        if not self.truncated:
            return self.head
        lines = f"{self.omitted_lines} lines, " if self.omitted_lines > 0 else ""
        marker = f"[... {lines}{format_size(self.omitted_bytes)} omitted ...]"
        return f"{self.head}\n\n{marker}\n\n{self.tail}"

    def details(self) -> dict[str, Any]:
        """camelCase JSON for ``details.truncation`` (without the kept text)."""
        return _details(self, ("head", "tail"))


HEAD_SHARE = 0.25
"""Part of the limits given to the start of the output; the rest goes to the end."""


def head_tail_budgets(max_lines: int, max_bytes: int) -> tuple[int, int, int, int]:
    head_lines = max(1, int(max_lines * HEAD_SHARE))
    head_bytes_ = max(1, int(max_bytes * HEAD_SHARE))
    return head_lines, head_bytes_, max(1, max_lines - head_lines), max(1, max_bytes - head_bytes_)


def take_head(text: str, max_lines: int, max_bytes: int) -> tuple[str, int]:
    """Whole lines from the start within both limits; a first line over the byte limit is cut.
    Returns the kept text (no trailing newline) and how many lines it spans."""
    kept: list[str] = []
    used = 0
    for line in _lines(text)[:max_lines]:
        cost = byte_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            if not kept:
                kept.append(head_bytes(line, max_bytes))
            break
        kept.append(line)
        used += cost
    return "\n".join(kept), len(kept)


def take_tail(text: str, max_lines: int, max_bytes: int, *, first_is_partial: bool = False) -> tuple[str, int]:
    """Whole lines from the end within both limits; a last line over the byte limit keeps its end.
    ``first_is_partial`` says the text starts mid-line: that fragment is kept only if it is all."""
    lines = _lines(text)
    if first_is_partial and len(lines) > 1:
        lines = lines[1:]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = byte_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            if not kept:
                kept.append(tail_bytes(line, max_bytes))
            break
        kept.append(line)
        used += cost
    kept.reverse()
    return "\n".join(kept), len(kept)


def truncate_head_tail(text: str, max_lines: int = DEFAULT_MAX_LINES,
                       max_bytes: int = DEFAULT_MAX_BYTES) -> HeadTail:
    """Keep the first quarter and the last three quarters of the limits when ``text`` is over them."""
    total_lines, size = count_lines(text), byte_len(text)
    if total_lines <= max_lines and size <= max_bytes:
        return HeadTail(head=text, tail="", truncated=False, truncated_by=None, total_lines=total_lines,
                        total_bytes=size, head_lines=total_lines, tail_lines=0, omitted_lines=0,
                        omitted_bytes=0, max_lines=max_lines, max_bytes=max_bytes)
    hl, hb, tl, tb = head_tail_budgets(max_lines, max_bytes)
    head, head_n = take_head(text, hl, hb)
    rest = text.encode("utf-8", "surrogatepass")[byte_len(head):].decode("utf-8", "replace")
    partial = not (head_n == 0 or text[len(head):len(head) + 1] == "\n")
    if rest.startswith("\n"):
        rest = rest[1:]
    tail, tail_n = take_tail(rest, tl, tb, first_is_partial=partial)
    return build_head_tail(head, head_n, tail, tail_n, total_lines, size, max_lines, max_bytes)


def build_head_tail(head: str, head_n: int, tail: str, tail_n: int, total_lines: int, total_bytes: int,
                    max_lines: int, max_bytes: int) -> HeadTail:
    """Assemble a :class:`HeadTail` from parts taken by :func:`take_head` / :func:`take_tail`."""
    kept = byte_len(head) + byte_len(tail)
    omitted_lines = max(0, total_lines - head_n - tail_n)
    by: TruncatedBy = "lines" if total_lines > max_lines else "bytes"
    return HeadTail(head=head, tail=tail, truncated=True, truncated_by=by, total_lines=total_lines,
                    total_bytes=total_bytes, head_lines=head_n, tail_lines=tail_n,
                    omitted_lines=omitted_lines, omitted_bytes=max(0, total_bytes - kept - 1),
                    max_lines=max_lines, max_bytes=max_bytes)


__all__ = [
    "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "GREP_MAX_LINE_LENGTH", "HeadTail", "Truncation",
    "byte_len", "count_lines", "format_size", "truncate_head", "truncate_head_tail", "truncate_line",
    "truncate_tail",
]
