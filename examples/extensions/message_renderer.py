"""Port of pi's ``message-renderer`` example: ``/status-report [text]`` sends a custom ``status-report``
message, and ``ctx.register_message_renderer`` draws such messages as a framed, coloured block in the
terminal (the details fold out with Ctrl+O)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, CustomMessage, ExtensionContext, SessionStartEvent, hookimpl
from pi_core.tui import Text


def render(message: CustomMessage, options: dict[str, Any], theme: Any) -> Text:
    level = (message.details or {}).get("level", "info")
    token = {"info": "accent", "warning": "warning", "error": "error"}.get(level, "accent")
    rows = [theme.fg(token, f"┃ STATUS [{level.upper()}] ") + str(message.content)]
    if options.get("expanded"):
        rows.append(theme.fg("dim", f"┃ details: {message.details}"))
    return Text(rows)


@hookimpl
def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    ctx.register_message_renderer("status-report", render)


async def report(args: str, ctx: CommandContext) -> None:
    level = "warning" if "warn" in args else "info"
    ctx.send_message(CustomMessage(custom_type="status-report", content=args.strip() or "all systems go",
                                   display=True, details={"level": level}), trigger_turn=True)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("status-report", report, "Send a status report message", usage="[text]"))
