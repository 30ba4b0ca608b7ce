"""Port of pi's ``protected-paths`` example: ``write`` and ``edit`` may not touch ``.env``, ``.git/`` or
``node_modules/``."""

from __future__ import annotations

from pi_core import Block, BeforeToolCallEvent, ExtensionContext, hookimpl

PROTECTED = (".env", ".git/", "node_modules/")


@hookimpl
async def before_tool_call(event: BeforeToolCallEvent, ctx: ExtensionContext) -> Block | None:
    if event.tool_name not in ("write", "edit"):
        return None
    path = str(event.arguments.get("path", ""))
    if not any(part in path for part in PROTECTED):
        return None
    if ctx.has_ui:
        await ctx.ui.notify(f"Blocked a write to the protected path {path}", "warning")
    return Block(f'Path "{path}" is protected')
