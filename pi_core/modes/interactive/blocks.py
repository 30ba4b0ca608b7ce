"""Compact blocks for tool calls: a header (tool name and its key arguments) and a short preview of
the result. A command's output shows its *last* lines (where a test summary or an error is), a
file's its first ones; Ctrl+O shows everything. Errors are red; an edit shows its diff.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .style import Palette, clip

PREVIEW_LINES = 6
"""Result lines shown under a finished tool call (collapsed)."""
TAIL_LINES = 5
"""Output lines a collapsed command shows: its last ones, as pi shows them."""
HEAD_TOOLS = frozenset({"read", "write", "ls", "find", "grep"})
"""Tools whose result reads from the top (a file, a listing); the others show their end."""

# The argument(s) that say what a call does, per built-in tool; other tools show their arguments.
_KEY_ARGS: dict[str, tuple[str, ...]] = {
    "bash": ("command",),
    "read": ("path", "offset", "limit"),
    "write": ("path",),
    "edit": ("path",),
    "grep": ("pattern", "path", "glob"),
    "find": ("pattern", "path"),
    "ls": ("path",),
}


def summarize_args(tool: str, args: dict[str, Any] | None) -> str:
    """One line naming what the call does: ``ls -la`` for bash, ``src/x.py:10-30`` for read..."""
    args = args or {}
    keys = _KEY_ARGS.get(tool)
    if tool == "read" and "path" in args:
        return str(args["path"]) + _line_range(args.get("offset"), args.get("limit"))
    if tool == "write" and "path" in args:
        lines = str(args.get("content", "")).count("\n") + 1 if args.get("content") else 0
        return f"{args['path']} ({lines} lines)" if lines else str(args["path"])
    if tool == "edit" and "path" in args:
        count = len(args.get("edits") or [])
        return f"{args['path']} ({count} edit{'s' if count != 1 else ''})" if count else str(args["path"])
    if keys:
        values = [_scalar(args[k]) for k in keys if args.get(k) not in (None, "")]
        if values:
            return " ".join(values)
    if not args:
        return ""
    return json.dumps(args, ensure_ascii=False, separators=(", ", ": "), default=str)


def _line_range(offset: Any, limit: Any) -> str:
    if not isinstance(offset, int) and not isinstance(limit, int):
        return ""
    start = offset if isinstance(offset, int) else 1
    end = f"{start + limit - 1}" if isinstance(limit, int) else ""
    return f":{start}-{end}"


def _scalar(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return " ".join(text.split("\n")) if "\n" in text else text


def header(palette: Palette, tool: str, args: dict[str, Any] | None, width: int | None, *,
           failed: bool = False, running: str | None = None) -> str:
    """The call's first line: ``● bash  ls -la`` (``running`` replaces the bullet, e.g. a spinner)."""
    glyph = running or (palette.glyphs.failed if failed else palette.glyphs.tool)
    summary = summarize_args(tool, args)
    plain_summary = clip(summary, max((width or 10_000) - len(tool) - 4, 8), palette.glyphs.ellipsis)
    name = palette(tool, "bold", "red" if failed else "green")
    line = f"{palette(glyph, 'red' if failed else 'green')} {name}"
    return f"{line}  {palette(plain_summary, 'cyan')}" if plain_summary else line


def result_text(result: Any) -> str:
    """The text the tool returned (a ``ToolResult`` or pi's JSON shape of one)."""
    if result is None:
        return ""
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    parts = []
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        if kind == "text":
            parts.append(block.get("text", "") if isinstance(block, dict) else block.text)
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _details(result: Any) -> Any:
    return result.get("details") if isinstance(result, dict) else getattr(result, "details", None)


def preview(palette: Palette, tool: str, result: Any, width: int | None, *, failed: bool = False,
            lines: int | None = None, expanded: bool = False, args: dict[str, Any] | None = None,
            highlight: bool = True) -> list[str]:
    """Indented lines of the result: everything when ``expanded``; else the first lines of a file or
    listing, the last lines of anything else (a command's output), and a row saying what is hidden.
    An edit shows its diff (changed words marked), ``read`` and ``write`` the file highlighted."""
    details = _details(result)
    diff = details.get("diff") if isinstance(details, dict) and not failed else None
    body = diff if isinstance(diff, str) and diff else result_text(result)
    path = str((args or {}).get("path") or "")
    if tool == "write" and not failed and isinstance((args or {}).get("content"), str):
        body = args["content"]  # type: ignore[index]
    rows = body.rstrip("\n").split("\n") if body.strip() else []
    from_top = tool in HEAD_TOOLS or bool(diff)
    limit = len(rows) if expanded else (lines or (PREVIEW_LINES if from_top else TAIL_LINES))
    hidden = max(len(rows) - limit, 0)
    start, stop = (0, min(limit, len(rows))) if from_top else (hidden, len(rows))
    room = max((width or 10_000) - 4, 10)
    if diff:
        styled = diff_rows(palette, rows)
    elif tool in ("read", "write") and path and not failed and highlight:
        styled = _highlighted(palette, rows, start, stop, path)
    else:
        styled = None
    out = []
    for index in range(start, stop):
        if styled is not None:
            out.append("  " + _clip_styled(styled[index], room))
        else:
            out.append(f"  {_row_style(palette, clip(_untab(rows[index]), room, palette.glyphs.ellipsis), failed)}")
    if hidden:
        where = "more" if from_top else "earlier"
        note = palette(f"{palette.glyphs.ellipsis} {hidden} {where} line{'s' if hidden != 1 else ''} "
                       "(ctrl+o to expand)", "gray")
        out = [*out, "  " + note] if from_top else ["  " + note, *out]
    return out


def _highlighted(palette: Palette, rows: list[str], start: int, stop: int, path: str) -> list[str] | None:
    from .highlight import highlight_lines

    shown = highlight_lines(palette, "\n".join(_untab(r) for r in rows[start:stop]), filename=path)
    if shown is None or len(shown) != stop - start:
        return None
    return [""] * start + shown + [""] * (len(rows) - stop)


def _clip_styled(row: str, room: int) -> str:
    from .markdown import _hard_wrap

    parts = _hard_wrap(row, room)
    return parts[0] + ("\x1b[0m" if len(parts) > 1 and "\x1b[" in row else "")


_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


def diff_rows(palette: Palette, rows: list[str]) -> list[str]:
    """An edit's diff (``-N text`` / ``+N text`` / `` N text``) coloured, with the words that changed
    between a removed line and the added line that replaces it marked (reverse video)."""
    out = [""] * len(rows)
    index = 0
    while index < len(rows):
        if not rows[index].startswith("-"):
            row = _untab(rows[index])
            out[index] = palette(row, "toolDiffAdded") if row.startswith("+") else palette(row, "toolDiffContext")
            index += 1
            continue
        removed_end = index
        while removed_end < len(rows) and rows[removed_end].startswith("-"):
            removed_end += 1
        added_end = removed_end
        while added_end < len(rows) and rows[added_end].startswith("+"):
            added_end += 1
        removed, added = rows[index:removed_end], rows[removed_end:added_end]
        paired = len(removed) == len(added)
        for offset, row in enumerate(removed):
            out[index + offset] = _word_diff(palette, row, added[offset], "toolDiffRemoved", 0) if paired \
                else palette(_untab(row), "toolDiffRemoved")
        for offset, row in enumerate(added):
            out[removed_end + offset] = _word_diff(palette, removed[offset], row, "toolDiffAdded", 1) if paired \
                else palette(_untab(row), "toolDiffAdded")
        index = added_end
    return out


def _word_diff(palette: Palette, old: str, new: str, token: str, side: int) -> str:
    import difflib

    prefix_old, text_old = _split_number(_untab(old))
    prefix_new, text_new = _split_number(_untab(new))
    a, b = _WORDS.findall(text_old), _WORDS.findall(text_new)
    words, prefix = (a, prefix_old) if side == 0 else (b, prefix_new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < 0.3:  # mostly rewritten: marking words would mark everything
        return palette(prefix + "".join(words), token)
    parts = [palette(prefix, token)]
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        chunk = "".join(words[i1:i2] if side == 0 else words[j1:j2])
        if chunk:
            parts.append(palette(chunk, token) if op == "equal" else palette(chunk, token, "inverse"))
    return "".join(parts)


def _split_number(row: str) -> tuple[str, str]:
    match = re.match(r"^([-+ ]\s*\d*\s?)", row)
    cut = match.end() if match else 1
    return row[:cut], row[cut:]


def format_duration(seconds: float) -> str:
    """``0.4s``, ``12.0s``, ``3m 5s``, ``1h 2m 3s`` (as pi writes a tool's time)."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    total = int(seconds)
    minutes, rest = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {rest}s"
    return f"{minutes // 60}h {minutes % 60}m {rest}s"


def _untab(text: str) -> str:
    return text.replace("\t", "    ").replace("\r", "")


def _row_style(palette: Palette, row: str, failed: bool) -> str:
    return palette(row, "error") if failed else palette(row, "toolOutput")


def tool_block(palette: Palette, tool: str, args: dict[str, Any] | None, result: Any, width: int | None, *,
               failed: bool = False, expanded: bool = False, duration: float | None = None,
               highlight: bool = True) -> list[str]:
    """A finished call, as printed once into the scrollback (``duration``: "Took 4.2s")."""
    head = header(palette, tool, args, width, failed=failed)
    if duration is not None and duration >= 0.1:
        head = f"{head}  {palette('Took ' + format_duration(duration), 'gray')}"
    return [head, *preview(palette, tool, result, width, failed=failed, expanded=expanded, args=args,
                           highlight=highlight)]


__all__ = ["PREVIEW_LINES", "TAIL_LINES", "diff_rows", "format_duration", "header", "preview", "result_text", "summarize_args", "tool_block"]
