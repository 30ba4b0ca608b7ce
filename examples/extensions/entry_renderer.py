"""Port of pi's ``entry-renderer`` example: ``/status-card [message]`` stores a durable card in the session
(``ctx.append_entry``, never sent to the model) that the terminal draws with the plugin's entry renderer
(``ctx.register_entry_renderer``) — when appended and again when the session is resumed. Expanded
(Ctrl+O), the card shows its time too."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, hookimpl
from pi_core.tui import truncate_to_width, visible_width


class Card:
    """pi's ``Box(1, 1, bg)`` with ``Text`` children: padded rows on the custom-message background."""

    def __init__(self, lines: list[str], theme: Any) -> None:
        self.lines, self.theme = lines, theme

    def render(self, width: int) -> list[str]:
        inner = max(width - 2, 1)
        rows = ["", *(truncate_to_width(line, inner) for line in self.lines), ""]
        padded = [f" {row}{' ' * (inner - visible_width(row))} " for row in rows]
        return [self.theme.bg("customMessageBg", row) for row in padded] if self.theme is not None else padded

    def invalidate(self) -> None:
        return None


def render_card(entry: Any, options: dict[str, Any], theme: Any) -> Card:
    data: dict[str, Any] = entry.data if isinstance(entry.data, dict) else {"message": "No data",
                                                                            "timestamp": time.time() * 1000}
    label = theme.fg("accent", "[status]") if theme is not None else "[status]"
    lines = [f"{label} {data.get('message', '')}"]
    if options.get("expanded"):
        when = datetime.fromtimestamp(float(data.get("timestamp", 0)) / 1000).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(theme.fg("dim", when) if theme is not None else when)
    return Card(lines, theme)


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    ctx.register_entry_renderer("status-card", render_card)


async def status_card(args: str, ctx: CommandContext) -> None:
    ctx.append_entry("status-card", {"message": args.strip() or "Status card", "timestamp": int(time.time() * 1000)})


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("status-card", status_card, "Render a durable status card that is not sent to the LLM"))
