"""Port of pi's ``status-line`` example: a footer status that follows the run, coloured by the theme's
tokens (``ctx.ui.theme``; plain text where there is no theme)."""

from __future__ import annotations

from typing import Any

from pi_core import ExtensionContext, hookimpl


def styled(ctx: ExtensionContext, token: str, text: str) -> str:
    theme = ctx.ui.theme
    return theme.fg(token, text) if theme is not None else text


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_status("status-line", styled(ctx, "dim", "○ ready"))


@hookimpl
async def turn_start(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_status("status-line", styled(ctx, "accent", "● working"))


@hookimpl
async def turn_end(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_status("status-line", styled(ctx, "success", "✓ turn done"))
