"""Port of pi's ``send-user-message`` example: commands that send user messages as if typed.

``/ask text`` (only while idle), ``/steer text`` (interrupts a run), ``/followup text`` (after the run) and
``/askwith text`` (structured content)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, TextContent, hookimpl


async def ask(args: str, ctx: CommandContext) -> None:
    if not args.strip():
        await ctx.ui.notify("Usage: /ask <message>", "warning")
    elif not ctx.is_idle():
        await ctx.ui.notify("Agent is busy. Use /steer or /followup instead.", "warning")
    else:
        ctx.send_user_message(args)


async def steer(args: str, ctx: CommandContext) -> None:
    if not args.strip():
        await ctx.ui.notify("Usage: /steer <message>", "warning")
    elif ctx.is_idle():
        ctx.send_user_message(args)
    else:
        ctx.send_user_message(args, deliver_as="steer")


async def followup(args: str, ctx: CommandContext) -> None:
    if not args.strip():
        await ctx.ui.notify("Usage: /followup <message>", "warning")
    elif ctx.is_idle():
        ctx.send_user_message(args)
    else:
        ctx.send_user_message(args, deliver_as="followUp")
        await ctx.ui.notify("Follow-up queued", "info")


async def askwith(args: str, ctx: CommandContext) -> None:
    if not args.strip():
        await ctx.ui.notify("Usage: /askwith <message>", "warning")
    elif not ctx.is_idle():
        await ctx.ui.notify("Agent is busy", "warning")
    else:
        ctx.send_user_message([TextContent(text=f"User request: {args}"),
                               TextContent(text="Please respond concisely.")])


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("ask", ask, "Send a user message to the agent", usage="<message>"))
    register(Command("steer", steer, "Send a steering message (interrupts the current run)", usage="<message>"))
    register(Command("followup", followup, "Queue a follow-up message (after the current run)", usage="<message>"))
    register(Command("askwith", askwith, "Send a user message with structured content", usage="<message>"))
