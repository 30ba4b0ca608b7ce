"""Port of pi's ``status-line`` example: a footer status (``ctx.ui.set_status``) that follows the turns,
coloured by the theme's tokens. ``ctx.ui.theme`` is there in every mode (without a terminal its calls
return plain text), so the plugin uses it unguarded, as pi's does."""

from __future__ import annotations

from typing import Any

from pi_core import ExtensionContext, hookimpl


class Turns:
    count = 0


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    theme = ctx.ui.theme
    await ctx.ui.set_status("status-demo", theme.fg("dim", "Ready"))


@hookimpl
async def turn_start(event: Any, ctx: ExtensionContext) -> None:
    Turns.count += 1
    theme = ctx.ui.theme
    await ctx.ui.set_status("status-demo", theme.fg("accent", "●") + theme.fg("dim", f" Turn {Turns.count}..."))


@hookimpl
async def turn_end(event: Any, ctx: ExtensionContext) -> None:
    theme = ctx.ui.theme
    await ctx.ui.set_status("status-demo", theme.fg("success", "✓") + theme.fg("dim", f" Turn {Turns.count} complete"))
