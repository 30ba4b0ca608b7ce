"""The shortcut half of pi's ``plan-mode`` example: Ctrl+Alt+P (``ctx.register_shortcut``) toggles a
read-only plan mode — only ``read``, ``ls``, ``grep``, ``find`` stay active — shown as a footer status;
``/plan`` does the same for RPC and print mode."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, SessionStartEvent, hookimpl

READ_ONLY = ["read", "ls", "grep", "find"]


class State:
    on = False
    before: list[str] = []


async def toggle(ctx: ExtensionContext) -> None:
    State.on = not State.on
    if State.on:
        State.before = ctx.get_active_tools()
        ctx.set_active_tools([t for t in State.before if t in READ_ONLY])
    else:
        ctx.set_active_tools(State.before)
    await ctx.ui.set_status("plan", "⏸ plan mode" if State.on else None)
    await ctx.ui.notify(f"Plan mode {'on' if State.on else 'off'}: {', '.join(ctx.get_active_tools())}", "info")


@hookimpl
def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    ctx.register_shortcut("ctrl+alt+p", toggle, description="Toggle plan mode")


async def plan(args: str, ctx: CommandContext) -> None:
    await toggle(ctx)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("plan", plan, "Toggle plan mode (read-only tools)"))
