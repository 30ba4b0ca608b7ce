"""Port of pi's ``custom-footer`` example: ``/footer`` swaps pi's footer for one drawn by the plugin (model,
git branch from ``footer_data``, plugins' statuses); ``/footer`` again brings pi's back."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl
from pi_core.tui import truncate_to_width, visible_width


class Footer:
    def __init__(self, theme: Any, footer_data: Any, ctx: CommandContext) -> None:
        self.theme, self.data, self.ctx = theme, footer_data, ctx

    def render(self, width: int) -> list[str]:
        model = self.ctx.model
        left = self.theme.fg("accent", f"◆ {model.id if model else 'no model'}")
        branch = self.data.get_git_branch()
        right = self.theme.fg("muted", f"⎇ {branch or 'no branch'}")
        gap = max(width - visible_width(left) - visible_width(right), 1)
        statuses = " · ".join(self.data.get_extension_statuses().values())
        return [truncate_to_width(left + " " * gap + right, width), truncate_to_width(statuses or "custom footer", width)]

    def invalidate(self) -> None:
        return None


class State:
    on = False


async def toggle(args: str, ctx: CommandContext) -> None:
    State.on = not State.on
    if State.on:
        await ctx.ui.set_footer(lambda tui, theme, footer_data: Footer(theme, footer_data, ctx))
    else:
        await ctx.ui.set_footer(None)
    await ctx.ui.notify("Custom footer on" if State.on else "Default footer restored", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("footer", toggle, "Toggle a custom footer"))
