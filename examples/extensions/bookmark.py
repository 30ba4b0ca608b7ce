"""Port of pi's ``bookmark`` example: ``/bookmark [label]`` labels the last assistant message (labels show
in ``/tree``); ``/unbookmark`` removes the last label."""

from __future__ import annotations

import time
from typing import Any

from pi_core import Command, CommandContext, hookimpl


async def bookmark(args: str, ctx: CommandContext) -> None:
    label = args.strip() or f"bookmark-{int(time.time() * 1000)}"
    for entry in reversed(ctx.session.get_entries()):
        if entry.type == "message" and entry.message.role == "assistant":
            ctx.set_label(entry.id, label)
            await ctx.ui.notify(f"Bookmarked as: {label}", "info")
            return
    await ctx.ui.notify("No assistant message to bookmark", "warning")


async def unbookmark(args: str, ctx: CommandContext) -> None:
    for entry in reversed(ctx.session.get_entries()):
        label = ctx.session.get_label(entry.id)
        if label:
            ctx.set_label(entry.id, None)
            await ctx.ui.notify(f"Removed bookmark: {label}", "info")
            return
    await ctx.ui.notify("No bookmarked entry found", "warning")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("bookmark", bookmark, "Bookmark the last answer", usage="[label]"))
    register(Command("unbookmark", unbookmark, "Remove the last bookmark"))
