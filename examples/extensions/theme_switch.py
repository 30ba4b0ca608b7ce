"""Switching themes by command (what pi's ``mac-system-theme`` does on its own, see ``mac_system_theme.py``):
``/theme-switch [name]`` looks the theme up (``ctx.ui.get_theme``) and switches to it (``ctx.ui.set_theme``
takes the theme object, or a name); without a name it toggles between ``dark`` and ``light``. ``/themes``
lists what ``ctx.ui.get_all_themes()`` offers."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl


async def switch(args: str, ctx: CommandContext) -> None:
    current = ctx.ui.theme.name
    wanted = args.strip() or ("light" if current == "dark" else "dark")
    found = ctx.ui.get_theme(wanted)
    result = await ctx.ui.set_theme(found if found is not None else wanted)
    if result.get("success"):
        how = " via get_theme" if found is not None else ""
        await ctx.ui.notify(f"Theme: {ctx.ui.theme.name} (accent {ctx.ui.theme.hex('accent')}){how}", "info")
    else:
        await ctx.ui.notify(f"Theme not switched: {result.get('error')}", "error")


async def themes(args: str, ctx: CommandContext) -> None:
    names = [t["name"] for t in ctx.ui.get_all_themes()]
    await ctx.ui.notify("Themes: " + (", ".join(names) or "none"), "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("theme-switch", switch, "Switch the theme", usage="[name]"))
    register(Command("themes", themes, "List the themes"))
