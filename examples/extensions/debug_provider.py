"""Port of pi's ``debug-provider`` example: ``/debug-provider [on|off]`` (no argument: toggle) captures the raw
events of each provider stream (``provider_stream_event``) and keeps them in the session as a ``custom``
entry per turn, which the terminal draws with an entry renderer: a one-line summary, the events as JSON
once expanded (Ctrl+O)."""

from __future__ import annotations

import copy
import json
from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, hookimpl
from pi_core.tui import truncate_to_width, visible_width

ENTRY_TYPE = "debug-provider-events"
STATUS_KEY = "debug-provider"


class State:
    enabled = False
    active: list[Any] | None = None
    completed: dict[str, Any] | None = None


class Box:
    """Rows padded by one column and one row, on the custom-message background (pi's ``Box(1, 1, bg)``)."""

    def __init__(self, lines: list[str], theme: Any) -> None:
        self.lines, self.theme = lines, theme

    def render(self, width: int) -> list[str]:
        inner = max(width - 2, 1)
        rows = ["", *(truncate_to_width(line, inner) for line in self.lines), ""]
        padded = [f" {row}{' ' * (inner - visible_width(row))} " for row in rows]
        return [self.theme.bg("customMessageBg", row) for row in padded] if self.theme is not None else padded

    def invalidate(self) -> None:
        return None


def render_events(entry: Any, options: dict[str, Any], theme: Any) -> Any:
    def fg(token: str, text: str) -> str:
        return str(theme.fg(token, text)) if theme is not None else text

    data = entry.data
    if not isinstance(data, dict):
        return [fg("warning", "[provider debug] Missing event data")]
    events = data.get("events", [])
    count = f"{len(events)} event{'' if len(events) == 1 else 's'}"
    hint = "" if options.get("expanded") else " (Ctrl+O to view events)"
    lines = [f"{fg('accent', '[provider debug]')} {data.get('provider')}/{data.get('model')} ({data.get('api')}) "
             f"· {count}{hint}"]
    if options.get("expanded"):
        lines.extend(json.dumps(events, indent=2).split("\n"))
    return Box(lines, theme)


async def debug_provider(args: str, ctx: CommandContext) -> None:
    wanted = args.strip().lower()
    if wanted not in ("", "on", "off"):
        await ctx.ui.notify("Usage: /debug-provider [on|off]", "warning")
        return
    State.enabled = not State.enabled if wanted == "" else wanted == "on"
    if not State.enabled:
        State.active = State.completed = None
    await ctx.ui.set_status(STATUS_KEY, "provider debug" if State.enabled else None)
    await ctx.ui.notify(f"Provider event capture {'enabled' if State.enabled else 'disabled'}", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("debug-provider", debug_provider, "Toggle capture of raw provider stream events"))


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    ctx.register_entry_renderer(ENTRY_TYPE, render_events)


@hookimpl
async def turn_start(event: Any, ctx: ExtensionContext) -> None:
    State.active = [] if State.enabled else None


@hookimpl
def provider_stream_event(event: Any, ctx: ExtensionContext) -> None:
    if State.active is not None:
        State.active.append(copy.deepcopy(event.data))


@hookimpl
async def message_end(event: Any, ctx: ExtensionContext) -> None:
    message = event.message
    if getattr(message, "role", None) != "assistant" or State.active is None:
        return
    State.completed = {"provider": message.provider, "api": message.api, "model": message.model,
                       "events": State.active}
    State.active = None


@hookimpl
async def turn_end(event: Any, ctx: ExtensionContext) -> None:
    if State.completed is not None:
        ctx.append_entry(ENTRY_TYPE, State.completed)
        State.completed = None
