"""Port of pi's ``event-bus`` example: plugins talk through ``ctx.events``. ``/emit [message]`` sends
``my:notification`` on the bus; a listener shows every such event as a notice (one is sent at start)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, SessionStartEvent, hookimpl

_listening: set[int] = set()


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    if id(ctx.events) not in _listening:  # one listener per bus (the bus outlives /new and /resume)
        _listening.add(id(ctx.events))

        async def show(data: Any) -> None:
            await ctx.ui.notify(f"Event from {data['from']}: {data['message']}", "info")

        ctx.events.on("my:notification", show)
    ctx.events.emit("my:notification", {"message": "Session started", "from": "event-bus-example"})


async def emit(args: str, ctx: CommandContext) -> None:
    ctx.events.emit("my:notification", {"message": args.strip() or "hello", "from": "/emit command"})


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("emit", emit, "Emit a my:notification event", usage="[message]"))
