"""Port of pi's ``session-name`` example: ``/session-name [name]`` sets or shows the session's name (the
session picker shows it instead of the first message)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl


async def session_name(args: str, ctx: CommandContext) -> None:
    name = args.strip()
    if name:
        ctx.set_session_name(name)
        await ctx.ui.notify(f"Session named: {name}", "info")
    else:
        current = ctx.get_session_name()
        await ctx.ui.notify(f"Session: {current}" if current else "No session name set", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("session-name", session_name, "Set or show the session name", usage="[name]"))
