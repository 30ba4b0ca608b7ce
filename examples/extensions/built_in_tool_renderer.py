"""Port of pi's ``built-in-tool-renderer`` example: the built-in ``read`` and ``bash`` tools keep what they
do but are drawn compactly in the terminal (``render_call`` / ``render_result`` on a copy of the
built-in registered with ``replaces=``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from pi_core import Tool, create_bash_tool, create_read_tool, hookimpl
from pi_core.tui import Text


def call_row(label: str) -> Any:
    def render_call(args: dict[str, Any], theme: Any) -> Text:
        target = args.get("path") or args.get("command") or "."
        return Text([theme.fg("toolTitle", f"◇ {label} ") + theme.fg("accent", str(target))])

    return render_call


def result_rows(result: Any, options: dict[str, Any], theme: Any) -> Text:
    text = "".join(getattr(part, "text", "") for part in getattr(result, "content", None) or [])
    lines = text.splitlines()
    if options.get("expanded"):
        return Text([theme.fg("toolOutput", f"  {line}") for line in lines])
    return Text([theme.fg("muted", f"  ↳ {len(lines)} lines" + (" (error)" if options.get("is_error") else ""))])


@hookimpl
def register_tools(register: Any) -> None:
    tools: list[tuple[Tool, str]] = [(create_read_tool(), "read"), (create_bash_tool(), "run")]
    for tool, label in tools:
        register(dataclasses.replace(tool, render_call=call_row(label), render_result=result_rows),
                 replaces=tool.name)
