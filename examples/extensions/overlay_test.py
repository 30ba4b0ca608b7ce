"""Port of pi's ``overlay-test`` example: ``/overlay-test`` opens a 70-column overlay over the conversation
with rows that test the compositing (wide characters, styled text, emoji: the right border must line
up) and a menu whose first two items take typed text inline (↑/↓ choose, type, ←/→ and Backspace edit,
Enter closes with the item and its text, Esc cancels). It draws its own frame and cursor
(``CURSOR_MARKER`` while focused, ``render_fake_cursor``).

Two additions of this port: ``/overlay-corner`` opens it in the top-right corner (pi's overlay options),
and ``/counter-widget`` shows the last result as a component widget above the editor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core import Command, CommandContext, hookimpl
from pi_core.tui import CURSOR_MARKER, matches_key, render_fake_cursor, visible_width

Result = dict[str, str] | None


@dataclass
class Item:
    label: str
    has_input: bool
    text: str = ""
    cursor: int = 0


class OverlayTestComponent:
    width = 70

    def __init__(self, theme: Any, done: Callable[[Result], None]) -> None:
        self.theme = theme
        self.done = done
        self.focused = False  # set by the terminal while it has the keyboard
        self.selected = 0
        self.items = [Item("Search", True), Item("Run", True), Item("Settings", False), Item("Cancel", False)]

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape"):
            self.done(None)
            return
        current = self.items[self.selected]
        if matches_key(data, "return"):
            result = {"action": current.label}
            if current.has_input:
                result["query"] = current.text
            self.done(result)
            return
        if matches_key(data, "up"):
            self.selected = max(0, self.selected - 1)
        elif matches_key(data, "down"):
            self.selected = min(len(self.items) - 1, self.selected + 1)
        elif current.has_input:
            self._edit(current, data)

    def _edit(self, item: Item, data: str) -> None:
        if matches_key(data, "backspace"):
            if item.cursor > 0:
                item.text = item.text[:item.cursor - 1] + item.text[item.cursor:]
                item.cursor -= 1
        elif matches_key(data, "left"):
            item.cursor = max(0, item.cursor - 1)
        elif matches_key(data, "right"):
            item.cursor = min(len(item.text), item.cursor + 1)
        elif len(data) == 1 and ord(data) >= 32:
            item.text = item.text[:item.cursor] + data + item.text[item.cursor:]
            item.cursor += 1

    def render(self, width: int) -> list[str]:
        th = self.theme
        inner = self.width - 2

        def row(content: str) -> str:
            return str(th.fg("border", "│") + content + " " * max(0, inner - visible_width(content)) + th.fg("border", "│"))

        lines = [th.fg("border", f"╭{'─' * inner}╮"), row(f" {th.fg('accent', '🧪 Overlay Test')}"), row("")]
        lines.append(row(f" {th.fg('dim', '─── Edge Cases (borders should align) ───')}"))
        lines.append(row(f" Wide: {th.fg('warning', '中文日本語한글テスト漢字繁體简体ひらがなカタカナ가나다라마바')}"))
        colours = [("error", "RED"), ("success", "GREEN"), ("warning", "YELLOW"), ("accent", "ACCENT"), ("dim", "DIM"),
                   ("error", "more"), ("success", "colors")]
        lines.append(row(" Styled: " + " ".join(th.fg(token, word) for token, word in colours)))
        lines.append(row(" Emoji: 👨‍👩‍👧‍👦 🇯🇵 🚀 💻 🎉 🔥 😀 🎯 🌟 💡 🎨 🔧 📦 🏆 🌈 🎪 🎭 🎬 🎮 🎲"))
        lines.append(row(""))
        lines.append(row(f" {th.fg('dim', '─── Actions ───')}"))
        lines += [row(self._item(index, item)) for index, item in enumerate(self.items)]
        lines.append(row(""))
        lines.append(row(f" {th.fg('dim', '↑↓ navigate • type to input • Enter select • Esc cancel')}"))
        lines.append(th.fg("border", f"╰{'─' * inner}╯"))
        return lines

    def _item(self, index: int, item: Item) -> str:
        th = self.theme
        selected = index == self.selected
        prefix = " ▶ " if selected else "   "
        if not item.has_input:
            return prefix + str(th.fg("accent" if selected else "text", item.label))
        label = th.fg("accent" if selected else "text", f"{item.label}:")
        shown = item.text
        if selected:
            under = shown[item.cursor] if item.cursor < len(shown) else " "
            marker = CURSOR_MARKER if self.focused else ""
            shown = f"{shown[:item.cursor]}{marker}{render_fake_cursor(under)}{shown[item.cursor + 1:]}"
        return f"{prefix}{label} {shown}"

    def invalidate(self) -> None:
        return None

    def dispose(self) -> None:
        return None


class State:
    last: Result = None


async def show(ctx: CommandContext, options: dict[str, Any] | None = None) -> None:
    result: Result = await ctx.ui.custom(lambda tui, theme, keybindings, done: OverlayTestComponent(theme, done),
                                         overlay=True, overlay_options=options)
    State.last = result
    if result:
        query = result.get("query")
        await ctx.ui.notify(f'{result["action"]}: "{query}"' if query is not None else result["action"], "info")


async def overlay_test(args: str, ctx: CommandContext) -> None:
    await show(ctx)


async def overlay_corner(args: str, ctx: CommandContext) -> None:
    await show(ctx, {"anchor": "top-right", "width": 70, "margin": 1})


async def counter_widget(args: str, ctx: CommandContext) -> None:
    class Widget:
        def render(self, width: int) -> list[str]:
            return [f"[overlay widget: {State.last}]".ljust(width, "·")[:width]]

    await ctx.ui.set_widget("overlay-test", lambda tui, theme: Widget())


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("overlay-test", overlay_test, "Test overlay rendering with edge cases"))
    register(Command("overlay-corner", overlay_corner, "The overlay test in the top-right corner"))
    register(Command("counter-widget", counter_widget, "Show the last overlay result as a widget"))
