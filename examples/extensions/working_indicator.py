"""Port of pi's ``working-indicator`` and ``working-message-test`` examples: ``/working-indicator
dots|pulse|none|reset`` picks the spinner shown while the agent works, ``/working-message [text]`` its text,
``/thinking-label [text]`` the row shown for hidden thinking (``hidden-thinking-label``)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl

STYLES: dict[str, list[str]] = {"dots": ["⠁", "⠂", "⠄", "⠂"], "pulse": ["·", "•", "●", "•"], "none": []}


async def indicator(args: str, ctx: CommandContext) -> None:
    name = args.strip() or "reset"
    if name == "reset":
        await ctx.ui.set_working_indicator(None)
    elif name in STYLES:
        await ctx.ui.set_working_indicator(STYLES[name], interval_ms=120)
    else:
        await ctx.ui.notify(f"Unknown indicator {name!r}: {', '.join([*STYLES, 'reset'])}", "error")
        return
    await ctx.ui.notify(f"Working indicator: {name}", "info")


async def message(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_working_message(args.strip() or None)
    await ctx.ui.notify(f"Working message: {args.strip() or 'default'}", "info")


async def thinking_label(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_hidden_thinking_label(args.strip() or None)
    await ctx.ui.notify(f"Hidden thinking label: {args.strip() or 'default'}", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("working-indicator", indicator, "Pick the working indicator", usage="dots|pulse|none|reset"))
    register(Command("working-message", message, "Set the working message", usage="[text]"))
    register(Command("thinking-label", thinking_label, "Set the hidden thinking label", usage="[text]"))
