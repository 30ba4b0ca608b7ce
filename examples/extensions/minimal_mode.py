"""Port of pi's ``minimal-mode`` example: the seven built-in tools keep what they do but are drawn minimally in
the terminal. Collapsed, a call shows one line (the command or path) and no output — ``find``, ``grep`` and
``ls`` a count; expanded (Ctrl+O), the whole output. Copies of the built-ins (``create_*_tool()``) with
``render_call`` / ``render_result``, registered with ``replaces=``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_core import (
    Tool,
    create_bash_tool,
    create_edit_tool,
    create_find_tool,
    create_grep_tool,
    create_ls_tool,
    create_read_tool,
    create_write_tool,
    hookimpl,
)
from pi_core.tui import Text

RenderResult = Callable[[Any, dict[str, Any], Any], Text]


def shorten_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path.startswith(home) else path


def line_range(offset: Any, limit: Any) -> str:
    """``:start`` or ``:start-end`` of a read (pi's ``formatReadLineRange``)."""
    if offset is None and limit is None:
        return ""
    try:
        start = 1 if offset is None else int(offset)
        return f":{start}" if limit is None else f":{start}-{start + int(limit) - 1}"
    except (TypeError, ValueError):
        return ""


def output_of(result: Any) -> str | None:
    return next((part.text for part in getattr(result, "content", None) or [] if hasattr(part, "text")), None)


def title(theme: Any, name: str) -> str:
    return str(theme.fg("toolTitle", theme.bold(name)))


def path_shown(theme: Any, path: str) -> str:
    return str(theme.fg("accent", shorten_path(path)) if path else theme.fg("toolOutput", "..."))


def read_call(args: dict[str, Any], theme: Any) -> Text:
    shown = path_shown(theme, str(args.get("path") or ""))
    span = line_range(args.get("offset"), args.get("limit"))
    return Text(f"{title(theme, 'read')} {shown}" + (theme.fg("warning", span) if span else ""))


def bash_call(args: dict[str, Any], theme: Any) -> Text:
    timeout = args.get("timeout")
    suffix = theme.fg("muted", f" (timeout {timeout}s)") if timeout else ""
    return Text(title(theme, f"$ {args.get('command') or '...'}") + suffix)


def write_call(args: dict[str, Any], theme: Any) -> Text:
    content = str(args.get("content") or "")
    lines = theme.fg("muted", f" ({len(content.split(chr(10)))} lines)") if content else ""
    return Text(f"{title(theme, 'write')} {path_shown(theme, str(args.get('path') or ''))}{lines}")


def edit_call(args: dict[str, Any], theme: Any) -> Text:
    return Text(f"{title(theme, 'edit')} {path_shown(theme, str(args.get('path') or ''))}")


def find_call(args: dict[str, Any], theme: Any) -> Text:
    text = f"{title(theme, 'find')} {theme.fg('accent', str(args.get('pattern') or ''))}"
    text += theme.fg("toolOutput", f" in {shorten_path(str(args.get('path') or '.'))}")
    if args.get("limit") is not None:
        text += theme.fg("toolOutput", f" (limit {args['limit']})")
    return Text(text)


def grep_call(args: dict[str, Any], theme: Any) -> Text:
    text = f"{title(theme, 'grep')} {theme.fg('accent', '/' + str(args.get('pattern') or '') + '/')}"
    text += theme.fg("toolOutput", f" in {shorten_path(str(args.get('path') or '.'))}")
    if args.get("glob"):
        text += theme.fg("toolOutput", f" ({args['glob']})")
    if args.get("limit") is not None:
        text += theme.fg("toolOutput", f" limit {args['limit']}")
    return Text(text)


def ls_call(args: dict[str, Any], theme: Any) -> Text:
    text = f"{title(theme, 'ls')} {theme.fg('accent', shorten_path(str(args.get('path') or '.')))}"
    if args.get("limit") is not None:
        text += theme.fg("toolOutput", f" (limit {args['limit']})")
    return Text(text)


def full_output(strip: bool) -> RenderResult:
    """Nothing collapsed; expanded, the output (``strip``: without surrounding blank lines)."""

    def render(result: Any, options: dict[str, Any], theme: Any) -> Text:
        text = output_of(result)
        if not options.get("expanded") or not text:
            return Text("")
        rows = (text.strip() if strip else text).split("\n")
        return Text("\n" + "\n".join(theme.fg("toolOutput", row) for row in rows))

    return render


def errors_only(result: Any, options: dict[str, Any], theme: Any) -> Text:
    """``write``: nothing collapsed; expanded, what it said, as an error (it says nothing else worth showing)."""
    text = output_of(result)
    return Text("\n" + theme.fg("error", text)) if options.get("expanded") and text else Text("")


def edit_result(result: Any, options: dict[str, Any], theme: Any) -> Text:
    text = output_of(result)
    if not options.get("expanded") or not text:
        return Text("")
    return Text("\n" + theme.fg("error" if "error" in text.lower() else "toolOutput", text))


def counted(noun: str) -> RenderResult:
    """Collapsed: ``→ N <noun>``; expanded: every line."""

    def render(result: Any, options: dict[str, Any], theme: Any) -> Text:
        text = output_of(result)
        if text is None:
            return Text("")
        rows = [row for row in text.strip().split("\n") if row]
        if options.get("expanded"):
            return Text("\n" + "\n".join(theme.fg("toolOutput", row) for row in rows))
        return Text(theme.fg("muted", f" → {len(rows)} {noun}")) if rows else Text("")

    return render


@hookimpl
def register_tools(register: Any) -> None:
    restyled: list[tuple[Tool, Any, RenderResult]] = [
        (create_read_tool(), read_call, full_output(strip=False)),
        (create_bash_tool(), bash_call, full_output(strip=True)),
        (create_write_tool(), write_call, errors_only),
        (create_edit_tool(), edit_call, edit_result),
        (create_find_tool(), find_call, counted("files")),
        (create_grep_tool(), grep_call, counted("matches")),
        (create_ls_tool(), ls_call, counted("entries")),
    ]
    for tool, call, result in restyled:
        register(dataclasses.replace(tool, render_call=call, render_result=result), replaces=tool.name)
