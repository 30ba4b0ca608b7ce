"""Port of pi's ``overlay-test`` example: ``/overlay`` opens a framed overlay counter over the conversation
(``+``/``-`` change it, Enter closes with the value, Esc cancels); ``/overlay-corner`` opens it in the
top-right corner, 30 columns wide (pi's overlay options); ``/counter-widget`` shows the last value as a
component widget above the editor."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, hookimpl
from pi_core.tui import matches_key


class Counter:
    def __init__(self, theme: Any, tui: Any, done: Any) -> None:
        self.theme, self.tui, self.done = theme, tui, done
        self.value = 0

    def render(self, width: int) -> list[str]:
        return [self.theme.bold("Overlay counter"), f"value: {self.value}", self.theme.fg("dim", "+/- Enter Esc")]

    def handle_input(self, data: str) -> None:
        if data in ("+", "-"):
            self.value += 1 if data == "+" else -1
            self.tui.request_render()
        elif matches_key(data, "enter"):
            self.done(self.value)
        elif matches_key(data, "escape"):
            self.done(None)

    def invalidate(self) -> None:
        return None


class State:
    last: int | None = None


async def overlay(args: str, ctx: CommandContext) -> None:
    value = await ctx.ui.custom(lambda tui, theme, keybindings, done: Counter(theme, tui, done), overlay=True)
    State.last = value
    await ctx.ui.notify(f"Overlay closed with {value}", "info")


async def overlay_corner(args: str, ctx: CommandContext) -> None:
    value = await ctx.ui.custom(lambda tui, theme, keybindings, done: Counter(theme, tui, done), overlay=True,
                                overlay_options={"anchor": "top-right", "width": 30, "margin": 1})
    State.last = value
    await ctx.ui.notify(f"Overlay closed with {value}", "info")


async def counter_widget(args: str, ctx: CommandContext) -> None:
    class Widget:
        def render(self, width: int) -> list[str]:
            return [f"[counter widget: {State.last}]".ljust(width, "·")[:width]]

    await ctx.ui.set_widget("counter", lambda tui, theme: Widget())


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("overlay", overlay, "Open the overlay counter"))
    register(Command("overlay-corner", overlay_corner, "Open the overlay counter in the top-right corner"))
    register(Command("counter-widget", counter_widget, "Show the counter as a widget"))
