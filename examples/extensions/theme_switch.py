"""Port of pi's ``mac-system-theme`` example, driven by a command instead of the macOS appearance:
``/theme-switch [name]`` switches to a theme (``ctx.ui.set_theme``), without a name it toggles between
``dark`` and ``light``; ``/themes`` lists what ``ctx.ui.get_all_themes()`` offers."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl


async def switch(args: str, ctx: CommandContext) -> None:
    current = getattr(ctx.ui.theme, "name", None)
    wanted = args.strip() or ("light" if current == "dark" else "dark")
    result = await ctx.ui.set_theme(wanted)
    if result.get("success"):
        await ctx.ui.notify(f"Theme: {ctx.ui.theme.name} (accent {ctx.ui.theme.hex('accent')})", "info")
    else:
        await ctx.ui.notify(f"Theme not switched: {result.get('error')}", "error")


async def themes(args: str, ctx: CommandContext) -> None:
    names = [t["name"] for t in ctx.ui.get_all_themes()]
    await ctx.ui.notify("Themes: " + (", ".join(names) or "none"), "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("theme-switch", switch, "Switch the theme", usage="[name]"))
    register(Command("themes", themes, "List the themes"))
