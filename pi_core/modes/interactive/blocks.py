"""Compact blocks for tool calls: a header (tool name and its key arguments) and a short preview of
the result. A command's output shows its *last* lines (where a test summary or an error is), a
file's its first ones; Ctrl+O shows everything. Errors are red; an edit shows its diff.
"""

from __future__ import annotations

import json
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
            lines: int | None = None, expanded: bool = False) -> list[str]:
    """Indented lines of the result: everything when ``expanded``; else the first lines of a file or
    listing, the last lines of anything else (a command's output), and a row saying what is hidden."""
    details = _details(result)
    diff = details.get("diff") if isinstance(details, dict) and not failed else None
    body = diff if isinstance(diff, str) and diff else result_text(result)
    rows = body.rstrip("\n").split("\n") if body.strip() else []
    from_top = tool in HEAD_TOOLS or bool(diff)
    limit = len(rows) if expanded else (lines or (PREVIEW_LINES if from_top else TAIL_LINES))
    hidden = max(len(rows) - limit, 0)
    shown = rows[:limit] if from_top else rows[hidden:]
    room = max((width or 10_000) - 4, 10)
    out = [f"  {_row_style(palette, clip(_untab(r), room, palette.glyphs.ellipsis), failed, bool(diff))}"
           for r in shown]
    if hidden:
        where = "more" if from_top else "earlier"
        note = palette(f"{palette.glyphs.ellipsis} {hidden} {where} line{'s' if hidden != 1 else ''} "
                       "(ctrl+o to expand)", "gray")
        out = [*out, "  " + note] if from_top else ["  " + note, *out]
    return out


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


def _row_style(palette: Palette, row: str, failed: bool, is_diff: bool) -> str:
    if failed:
        return palette(row, "red")
    if is_diff and row.startswith("+"):
        return palette(row, "green")
    if is_diff and row.startswith("-"):
        return palette(row, "red")
    return palette(row, "gray")


def tool_block(palette: Palette, tool: str, args: dict[str, Any] | None, result: Any, width: int | None, *,
               failed: bool = False, expanded: bool = False, duration: float | None = None) -> list[str]:
    """A finished call, as printed once into the scrollback (``duration``: "Took 4.2s")."""
    head = header(palette, tool, args, width, failed=failed)
    if duration is not None and duration >= 0.1:
        head = f"{head}  {palette('Took ' + format_duration(duration), 'gray')}"
    return [head, *preview(palette, tool, result, width, failed=failed, expanded=expanded)]


__all__ = ["PREVIEW_LINES", "TAIL_LINES", "format_duration", "header", "preview", "result_text", "summarize_args", "tool_block"]
