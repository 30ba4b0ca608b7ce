"""Port of pi's ``built-in-tool-renderer`` example: the built-in ``read``, ``bash``, ``edit`` and ``write`` tools
keep what they do but are drawn compactly in the terminal — the call on one row, the result as a summary
(line counts, exit code, diff stats), in full with Ctrl+O — and while a call runs its result shows as
"Reading...", "Running..." (pi's ``isPartial``).

pi's example re-registers each tool with new renderers; this port uses pi 1.6's ``registerToolRenderer``
(``ctx.register_tool_renderer``), which restyles a tool without replacing it, so it works beside a plugin
that replaces the same tool (ssh, sandboxes)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pi_core import ExtensionContext, ToolRenderContext, ToolRenderers, hookimpl
from pi_core.tui import Text


def text_of(result: Any) -> tuple[str | None, str]:
    """The type of a result's first block (``"text"``, ``"image"``) and its text."""
    content = getattr(result, "content", None) or []
    first = content[0] if content else None
    return getattr(first, "type", None), str(getattr(first, "text", "") or "")


def details_of(result: Any) -> dict[str, Any]:
    details = getattr(result, "details", None)
    return details if isinstance(details, dict) else {}


def truncated(result: Any) -> dict[str, Any] | None:
    truncation = details_of(result).get("truncation")
    return truncation if isinstance(truncation, dict) and truncation.get("truncated") else None


def read_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    text = theme.fg("toolTitle", theme.bold("read ")) + theme.fg("accent", str(args.get("path", "")))
    parts = [f"{name}={args[name]}" for name in ("offset", "limit") if args.get(name)]
    if parts:
        text += theme.fg("dim", f" ({', '.join(parts)})")
    return Text(text)


def read_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    if options["is_partial"]:
        return Text(theme.fg("warning", "Reading..."))
    kind, content = text_of(result)
    if kind == "image":
        return Text(theme.fg("success", "Image loaded"))
    if kind != "text":
        return Text(theme.fg("error", "No content"))
    lines = content.split("\n")
    text = theme.fg("success", f"{len(lines)} lines")
    cut = truncated(result)
    if cut:
        text += theme.fg("warning", f" (truncated from {cut.get('totalLines')})")
    if options["expanded"]:
        text += "".join(f"\n{theme.fg('dim', line)}" for line in lines[:15])
        if len(lines) > 15:
            text += f"\n{theme.fg('muted', f'... {len(lines) - 15} more lines')}"
    return Text(text)


def bash_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    command = str(args.get("command", ""))
    shown = command if len(command) <= 80 else f"{command[:77]}..."
    text = theme.fg("toolTitle", theme.bold("$ ")) + theme.fg("accent", shown)
    if args.get("timeout"):
        text += theme.fg("dim", f" (timeout: {args['timeout']}s)")
    return Text(text)


def bash_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    if options["is_partial"]:
        return Text(theme.fg("warning", "Running..."))
    _, output = text_of(result)
    exit_code = re.search(r"exit(?:ed with)? code:? (\d+)", output)  # this bash says "exited with code N"
    code = int(exit_code.group(1)) if exit_code else None
    count = len([line for line in output.split("\n") if line.strip()])
    text = theme.fg("success", "done") if code in (0, None) else theme.fg("error", f"exit {code}")
    text += theme.fg("dim", f" ({count} lines)")
    if truncated(result):
        text += theme.fg("warning", " [truncated]")
    if options["expanded"]:
        text += "".join(f"\n{theme.fg('dim', line)}" for line in output.split("\n")[:20])
        if len(output.split("\n")) > 20:
            text += f"\n{theme.fg('muted', '... more output')}"
    return Text(text)


def edit_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    return Text(theme.fg("toolTitle", theme.bold("edit ")) + theme.fg("accent", str(args.get("path", ""))))


def edit_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    if options["is_partial"]:
        return Text(theme.fg("warning", "Editing..."))
    kind, content = text_of(result)
    if kind == "text" and (content.startswith("Error") or options["is_error"]):
        return Text(theme.fg("error", content.split("\n")[0]))
    diff = details_of(result).get("diff")
    if not diff:
        return Text(theme.fg("success", "Applied"))
    lines = str(diff).split("\n")
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    text = theme.fg("success", f"+{added}") + theme.fg("dim", " / ") + theme.fg("error", f"-{removed}")
    if options["expanded"]:
        for line in lines[:30]:
            token = "success" if line.startswith("+") and not line.startswith("+++") else \
                "error" if line.startswith("-") and not line.startswith("---") else "dim"
            text += f"\n{theme.fg(token, line)}"
        if len(lines) > 30:
            text += f"\n{theme.fg('muted', f'... {len(lines) - 30} more diff lines')}"
    return Text(text)


def write_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    count = len(str(args.get("content", "")).split("\n"))
    return Text(theme.fg("toolTitle", theme.bold("write ")) + theme.fg("accent", str(args.get("path", "")))
                + theme.fg("dim", f" ({count} lines)"))


def write_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    if options["is_partial"]:
        return Text(theme.fg("warning", "Writing..."))
    kind, content = text_of(result)
    if kind == "text" and (content.startswith("Error") or options["is_error"]):
        return Text(theme.fg("error", content.split("\n")[0]))
    return Text(theme.fg("success", "Written"))


RENDERERS = {"read": ToolRenderers(read_call, read_result), "bash": ToolRenderers(bash_call, bash_result),
             "edit": ToolRenderers(edit_call, edit_result), "write": ToolRenderers(write_call, write_result)}


def compact(tool_name: str, next_renderers: Callable[[], Any]) -> Any:
    return RENDERERS.get(tool_name) or next_renderers()


@hookimpl
def session_start(event: Any, ctx: ExtensionContext) -> None:
    ctx.register_tool_renderer(compact)
