"""Port of pi's ``tools`` example: ``/tools`` lists every tool in a ``SettingsList`` (Enter or Space switches
one between enabled and disabled, at once; Esc closes). The choice is kept in the session
(``tools-config`` entries) and restored on the branch you are on, after a resume or a ``/tree`` move.
It replaces this project's own ``/tools`` (a plain list of the tools), which pi does not have."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, hookimpl
from pi_core.tui import Container, SettingItem, SettingsList, get_settings_list_theme


class State:
    enabled: set[str] = set()


def persist(ctx: ExtensionContext) -> None:
    ctx.append_entry("tools-config", {"enabledTools": sorted(State.enabled)})


def apply(ctx: ExtensionContext) -> None:
    ctx.set_active_tools(sorted(State.enabled))


def restore_from_branch(ctx: ExtensionContext) -> None:
    names = {tool.name for tool in ctx.get_all_tools()}
    saved: list[str] | None = None
    for entry in ctx.session.get_branch():
        if getattr(entry, "type", None) == "custom" and getattr(entry, "custom_type", None) == "tools-config":
            data = entry.data if isinstance(entry.data, dict) else {}
            if isinstance(data.get("enabledTools"), list):
                saved = data["enabledTools"]
    if saved is not None:
        State.enabled = {name for name in saved if name in names}
        apply(ctx)
    else:
        State.enabled = set(ctx.get_active_tools())


class Heading:
    def __init__(self, theme: Any) -> None:
        self.theme = theme

    def render(self, width: int) -> list[str]:
        return [self.theme.fg("accent", self.theme.bold("Tool Configuration")), ""]

    def invalidate(self) -> None:
        return None


class ToolSettings:
    def __init__(self, tui: Any, theme: Any, ctx: CommandContext, done: Any) -> None:
        self.tui = tui
        tools = ctx.get_all_tools()
        items = [SettingItem(t.name, t.name, "enabled" if t.name in State.enabled else "disabled",
                             ["enabled", "disabled"]) for t in tools]

        def changed(name: str, value: str) -> None:
            if value == "enabled":
                State.enabled.add(name)
            else:
                State.enabled.discard(name)
            apply(ctx)
            persist(ctx)

        self.settings = SettingsList(items, min(len(items) + 2, 15), get_settings_list_theme(theme), changed,
                                     lambda: done(None))
        self.container = Container([Heading(theme), self.settings])

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        self.settings.handle_input(data)
        self.tui.request_render()


async def tools_command(args: str, ctx: CommandContext) -> None:
    if ctx.mode != "tui":
        await ctx.ui.notify("/tools requires TUI mode", "error")
        return
    await ctx.ui.custom(lambda tui, theme, kb, done: ToolSettings(tui, theme, ctx, done))


@hookimpl
def register_commands(register: Any) -> None:
    # this project has a built-in /tools (a list); pi 1.6 has none, so the example takes the name over
    register(Command("tools", tools_command, "Enable/disable tools"), replaces="tools")


@hookimpl
def session_start(event: Any, ctx: ExtensionContext) -> None:
    restore_from_branch(ctx)


@hookimpl
def session_tree(event: Any, ctx: ExtensionContext) -> None:
    restore_from_branch(ctx)
