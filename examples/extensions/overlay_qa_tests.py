"""Port of pi's ``overlay-qa-tests`` example: overlays' positioning, stacking, focus, visibility and
animation, one command per case.

* ``/overlay-animation`` — an overlay redrawn ~30 times a second (what a game needs).
* ``/overlay-anchors`` — the nine anchors (Space/→ next, Enter picks, Esc cancels).
* ``/overlay-margins`` — margins and offsets; ``/overlay-percent`` — ``row``/``col`` as percentages.
* ``/overlay-stack`` — three overlays open at once, each closed by Enter/Esc (front first).
* ``/overlay-overflow`` — a process's long coloured lines, with hyperlinks, cut to the overlay.
* ``/overlay-edge`` — at the right edge; ``/overlay-maxheight`` — rows past ``max_height`` cut.
* ``/overlay-sidepanel`` — a side panel shown only while the terminal is 100 columns or wider.
* ``/overlay-toggle`` — ``t`` hides the overlay for a second (``OverlayHandle.set_hidden``).
* ``/overlay-passive`` — a non-capturing timer panel beside an overlay that takes the keys.
* ``/overlay-focus`` — three non-capturing panels with inputs; Tab moves the focus (``focus()``),
  Esc dismisses one (``hide()``), Ctrl+C closes all.
* ``/overlay-streaming`` — three input panels and a streaming controller; Tab cycles the focus
  (``focus()``/``unfocus()``).
"""

from __future__ import annotations

import asyncio
import colorsys
import math
import time
from collections.abc import Callable
from typing import Any

from pi_core import Command, CommandContext, hookimpl
from pi_core.tui import Input, OverlayHandle, matches_key, truncate_to_width, visible_width

Done = Callable[..., None]


class Toggle:
    handle: OverlayHandle | None = None  # the toggle demo's handle (pi keeps it in a global too)


class BaseOverlay:
    def __init__(self, theme: Any) -> None:
        self.theme = theme

    def box(self, lines: list[str], width: int, title: str = "") -> list[str]:
        th = self.theme
        inner = max(1, width - 2)
        heading = truncate_to_width(f" {title} ", inner) if title else ""
        left = "─" * ((inner - visible_width(heading)) // 2)
        right = "─" * max(0, inner - visible_width(heading) - len(left))
        rows = [th.fg("border", f"╭{left}") + th.fg("accent", heading) + th.fg("border", f"{right}╮")]
        rows += [th.fg("border", "│") + truncate_to_width(line, inner, "...", True) + th.fg("border", "│")
                 for line in lines]
        rows.append(th.fg("border", f"╰{'─' * inner}╯"))
        return rows

    def frame(self, width: int, colour: str = "border") -> tuple[int, Callable[[str], str], Callable[[str], str]]:
        inner = max(1, width - 2)
        return inner, (lambda text: truncate_to_width(text, inner, "...", True)), \
            (lambda text: self.theme.fg(colour, text))

    def invalidate(self) -> None:
        return None

    def dispose(self) -> None:
        return None


def closing(data: str) -> bool:
    return matches_key(data, "escape") or matches_key(data, "ctrl+c")


def advancing(data: str) -> bool:
    return matches_key(data, "space") or matches_key(data, "right")


class AnchorTest(BaseOverlay):
    def __init__(self, theme: Any, anchor: str, done: Done) -> None:
        super().__init__(theme)
        self.anchor, self.done = anchor, done

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done("cancel")
        elif matches_key(data, "return"):
            self.done("confirm")
        elif advancing(data):
            self.done("next")

    def render(self, width: int) -> list[str]:
        th = self.theme
        return self.box(["", f" Current: {th.fg('accent', self.anchor)}", "", f" {th.fg('dim', 'Space/→ = next anchor')}",
                         f" {th.fg('dim', 'Enter = confirm')}", f" {th.fg('dim', 'Esc = cancel')}", ""],
                        width, "Anchor Test")


class ConfigTest(BaseOverlay):
    """The margin and percent tests: a named configuration; Space/→ next, Esc closes."""

    def __init__(self, theme: Any, name: str, title: str, hint: str, done: Done) -> None:
        super().__init__(theme)
        self.name, self.title, self.hint, self.done = name, title, hint, done

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done("close")
        elif advancing(data):
            self.done("next")

    def render(self, width: int) -> list[str]:
        th = self.theme
        return self.box(["", f" {th.fg('accent', self.name)}", "", f" {th.fg('dim', self.hint)}",
                         f" {th.fg('dim', 'Esc = close')}", ""], width, self.title)


class StackOverlay(BaseOverlay):
    def __init__(self, theme: Any, number: int, position: str, done: Done) -> None:
        super().__init__(theme)
        self.number, self.position, self.done = number, position, done

    def handle_input(self, data: str) -> None:
        if closing(data) or matches_key(data, "return"):
            self.done(f"Overlay {self.number}")

    def render(self, width: int) -> list[str]:
        th = self.theme
        colour = ("error", "success", "accent")[(self.number - 1) % 3]
        inner, pad, border = self.frame(width, colour)
        rows = [border(f"╭{'─' * inner}╮"), border("│") + pad(f" Overlay {th.fg('accent', f'#{self.number}')}") + border("│"),
                border("│") + pad(f" Layer: {th.fg(colour, self.position)}") + border("│"), border("│") + pad("") + border("│")]
        rows += [border("│") + pad(f" {'░' * (inner - 2)} ") + border("│") for _ in range(5)]
        rows += [border("│") + pad("") + border("│"), border("│") + pad(th.fg("dim", " Press Enter/Esc to close")) + border("│"),
                 border(f"╰{'─' * inner}╯")]
        return rows


OVERFLOW_SCRIPT = r"""
echo "Starting streaming overflow test (30+ seconds)..."
echo "This simulates subagent output with colors, hyperlinks, and long paths"
echo ""
for i in $(seq 1 100); do
  DIR="/Users/nicobailon/Documents/development/pi-mono/packages/coding-agent/src/modes/interactive"
  FILE="${DIR}/components/very-long-component-name-that-exceeds-width-${i}.ts"
  printf '\033]8;;file://%s\007▶ read: %s\033]8;;\007\n' "$FILE" "$FILE"
  if [ $((i % 5)) -eq 0 ]; then printf '  \033[32m✓ Successfully processed %s files in /Users/nicobailon/Documents/development/pi-mono\033[0m\n' "$i"; fi
  if [ $((i % 7)) -eq 0 ]; then printf '  \033[33m⚠ Warning: potential issue detected at line %s in very-long-component-name-that-exceeds-width.ts\033[0m\n' "$i"; fi
  if [ $((i % 11)) -eq 0 ]; then printf '  \033[31m✗ Error: file not found /some/really/long/path/that/definitely/exceeds/the/overlay/width/limit/file-%s.ts\033[0m\n' "$i"; fi
  sleep 0.3
done
echo ""
printf '\033[32m✓ Complete - 100 files processed in 30 seconds\033[0m\n'
echo "Press Esc to close"
"""


class StreamingOverflow(BaseOverlay):
    visible_lines = 15

    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.lines: list[str] = []
        self.offset = 0
        self.finished = False
        self.process: asyncio.subprocess.Process | None = None
        self.task = asyncio.ensure_future(self.stream())

    async def stream(self) -> None:
        self.process = await asyncio.create_subprocess_exec("bash", "-c", OVERFLOW_SCRIPT,
                                                            stdout=asyncio.subprocess.PIPE,
                                                            stderr=asyncio.subprocess.PIPE)
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line:
                self.lines.append(line)
            self.offset = max(0, len(self.lines) - self.visible_lines)
            self.tui.request_render()
        await self.process.wait()
        self.finished = True
        self.tui.request_render()

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.dispose()
            self.done()
        elif matches_key(data, "up"):
            self.offset = max(0, self.offset - 1)
            self.tui.request_render()
        elif matches_key(data, "down"):
            self.offset = min(max(0, len(self.lines) - self.visible_lines), self.offset + 1)
            self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th = self.theme
        inner, pad, border = self.frame(width)
        title = truncate_to_width(f" Streaming Output ({len(self.lines)} lines) ", inner)
        rows = [border("╭") + th.fg("accent", title) + border("─" * max(0, inner - visible_width(title)) + "╮")]
        below = max(0, len(self.lines) - self.visible_lines - self.offset)
        scrollable = self.offset > 0 or below > 0
        rows.append(border("│") + pad(th.fg("dim", f" ↑{self.offset} | ↓{below}") if scrollable else "") + border("│"))
        shown = self.lines[self.offset:self.offset + self.visible_lines]
        rows += [border("│") + pad(f" {line}") + border("│") for line in shown]
        rows += [border("│") + pad("") + border("│") for _ in range(self.visible_lines - len(shown))]
        status = th.fg("success", "✓ Done") if self.finished else th.fg("warning", "● Running")
        rows.append(border("│") + pad(f" {status} {th.fg('dim', '| ↑↓ scroll | Esc close')}") + border("│"))
        rows.append(border(f"╰{'─' * inner}╯"))
        return rows

    def dispose(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
        self.task.cancel()


class EdgeTest(BaseOverlay):
    def __init__(self, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.done = done

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done()

    def render(self, width: int) -> list[str]:
        def dim(text: str) -> str:
            return str(self.theme.fg("dim", text))

        return self.box(["", " This overlay is at the", " right edge of terminal.", "", f" {dim('Verify right border')}",
                         f" {dim('aligns with edge.')}", "", f" {dim('Press Esc to close')}", ""], width, "Edge Test")


class MaxHeightTest(BaseOverlay):
    def __init__(self, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.done = done

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done()

    def render(self, width: int) -> list[str]:
        th = self.theme
        lines = [th.fg("warning", " ⚠ Rendering 21 lines, maxHeight: 10"), th.fg("dim", " Lines 11-21 truncated (no bottom border)"),
                 ""]
        lines += [f" Line {n} of 14" for n in range(1, 15)]
        lines += ["", th.fg("dim", " Press Esc to close")]
        return self.box(lines, width, "MaxHeight Test")


class Sidepanel(BaseOverlay):
    items = ["Dashboard", "Messages", "Settings", "Help", "About"]

    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.selected = 0

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done()
        elif matches_key(data, "up") or matches_key(data, "down"):
            step = -1 if matches_key(data, "up") else 1
            self.selected = max(0, min(len(self.items) - 1, self.selected + step))
            self.tui.request_render()
        elif matches_key(data, "return"):
            self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th = self.theme
        inner, pad, border = self.frame(width)
        rule = border("├") + border("─" * inner) + border("┤")
        rows = [border(f"╭{'─' * inner}╮"), border("│") + pad(th.fg("accent", " Responsive Sidepanel")) + border("│"), rule]
        for index, item in enumerate(self.items):
            chosen = index == self.selected
            text = (th.fg("accent", "→ ") + th.fg("accent", item)) if chosen else f"  {item}"
            rows.append(border("│") + pad(text) + border("│"))
        rows.append(rule)
        for text, token in ((" ⚠ Resize terminal < 100 cols", "warning"), ("   to see panel auto-hide", "warning"),
                            (" Uses visible: (w) => w >= 100", "dim"), (" ↑↓ navigate | Esc close", "dim")):
            rows.append(border("│") + pad(th.fg(token, text)) + border("│"))
        rows.append(border(f"╰{'─' * inner}╯"))
        return rows


def hsl_to_rgb(hue: float, saturation: float, lightness: float) -> tuple[int, int, int]:
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, saturation)
    return round(red * 255), round(green * 255), round(blue * 255)


class AnimationDemo(BaseOverlay):
    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.frame_number = 0
        self.fps = 0
        self.counted = 0
        self.since = time.monotonic()
        self.task: asyncio.Task[None] | None = asyncio.ensure_future(self.animate())

    async def animate(self) -> None:
        while True:
            await asyncio.sleep(1 / 30)
            self.frame_number += 1
            self.counted += 1
            now = time.monotonic()
            if now - self.since >= 1:
                self.fps, self.counted, self.since = self.counted, 0, now
            self.tui.request_render()

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.dispose()
            self.done()

    def render(self, width: int) -> list[str]:
        th = self.theme
        inner, pad, border = self.frame(width)

        def row(text: str) -> str:
            return border("│") + pad(text) + border("│")

        bar_width = max(12, inner - 4)
        position = max(0, math.floor((math.sin(self.frame_number / 10) + 1) * (bar_width - 10) / 2))
        bar = " " * position + th.fg("accent", "█" * 10) + " " * max(0, bar_width - 10 - position)
        spin = "◐◓◑◒"[self.frame_number % 4]
        red, green, blue = hsl_to_rgb((self.frame_number * 3) % 360 / 360, 0.8, 0.5)
        block = f"\x1b[48;2;{red};{green};{blue}m{'  ' * 10}\x1b[0m"
        rows = [border(f"╭{'─' * inner}╮"), row(th.fg("accent", " Animation Demo (~30 FPS)")), row(""),
                row(f" Frame: {th.fg('accent', str(self.frame_number))}"), row(f" FPS: {th.fg('success', str(self.fps))}"),
                row(""), row(f" {bar}"), row(f" Spinner: {th.fg('warning', spin)}"), row(f" Color: {block}"), row("")]
        rows += [row(th.fg("dim", text)) for text in (" This proves overlays can handle", " real-time game-like rendering.",
                                                       " (pi-doom uses same approach)")]
        rows += [row(""), row(th.fg("dim", " Press Esc to close")), border(f"╰{'─' * inner}╯")]
        return rows

    def dispose(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None


class ToggleDemo(BaseOverlay):
    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.count = 0
        self.toggling = False

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.done()
        elif matches_key(data, "t") and Toggle.handle is not None and not self.toggling:
            self.toggling = True
            self.count += 1
            Toggle.handle.set_hidden(True)
            asyncio.get_running_loop().call_later(1.0, self.show_again)

    def show_again(self) -> None:
        if Toggle.handle is not None:
            Toggle.handle.set_hidden(False)
            self.toggling = False
            self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th = self.theme

        def dim(text: str) -> str:
            return str(th.fg("dim", text))

        return self.box(["", th.fg("accent", " Toggle Demo"), "", " This overlay demonstrates the", " onHandle callback API.",
                         "", f" Toggle count: {th.fg('accent', str(self.count))}", "",
                         dim(" Press 't' to hide for 1 second"), dim(" (demonstrates setHidden API)"), "",
                         dim(" In real usage, a global keybinding"), dim(" would toggle visibility externally."), "",
                         dim(" Press Esc to close"), ""], width, "Toggle Demo")


class TimerPanel(BaseOverlay):
    def __init__(self, theme: Any) -> None:
        super().__init__(theme)
        self.seconds = 0

    def tick(self) -> None:
        self.seconds += 1

    def render(self, width: int) -> list[str]:
        minutes, seconds = divmod(self.seconds, 60)
        return self.box([f" {self.theme.fg('accent', f'{minutes:02d}:{seconds:02d}')}",
                         self.theme.fg("dim", " nonCapturing: true")], width, "Timer")


class PassiveDemo(BaseOverlay):
    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.focused = False
        self.tui, self.done = tui, done
        self.typed = ""
        self.inputs = 0
        self.last = ""
        self.timer = TimerPanel(theme)
        self.timer_handle: OverlayHandle | None = tui.show_overlay(
            self.timer, {"non_capturing": True, "anchor": "top-right", "width": 22, "margin": {"top": 1, "right": 2}})
        self.task: asyncio.Task[None] | None = asyncio.ensure_future(self.ticking())

    async def ticking(self) -> None:
        while True:
            await asyncio.sleep(1)
            self.timer.tick()
            self.tui.request_render()

    def handle_input(self, data: str) -> None:
        self.inputs += 1
        self.last = f"len={len(data)} c0={ord(data[0]) if data else 0}"
        if closing(data):
            self.cleanup()
            self.done()
        elif matches_key(data, "backspace"):
            self.typed = self.typed[:-1]
        elif len(data) == 1 and ord(data) >= 32:
            self.typed += data

    def render(self, width: int) -> list[str]:
        th = self.theme
        shown = self.typed or th.fg("dim", "(type here)")
        last = self.last or "none"
        return self.box(["", f" {th.fg('dim', f'focused={str(self.focused).lower()} inputs={self.inputs}')}",
                         f" {th.fg('dim', f'last: {last}')}", "",
                         f" > {shown}", "", th.fg("dim", " Type to prove input goes here."),
                         th.fg("dim", " Press Esc to close both."), ""], width, "Non-Capturing Demo")

    def cleanup(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
        if self.timer_handle is not None:
            self.timer_handle.hide()
            self.timer_handle = None

    def dispose(self) -> None:
        self.cleanup()


FOCUS_PANELS = [("Alpha", "error", {"row": 2, "col": 4, "width": 34}),
                ("Beta", "success", {"row": 5, "col": 28, "width": 34}),
                ("Gamma", "accent", {"row": 8, "col": 52, "width": 34})]


class FocusPanel(BaseOverlay):
    def __init__(self, theme: Any, label: str, colour: str, controller: FocusDemo) -> None:
        super().__init__(theme)
        self.focused = False
        self.closed = False
        self.label, self.colour, self.controller = label, colour, controller
        self.input = Input()
        self.keys: list[str] = []

    def handle_input(self, data: str) -> None:
        named = {"return": "Enter", "up": "↑", "down": "↓"}
        edits = {"left": "←", "right": "→", "backspace": "Backspace"}
        if matches_key(data, "tab"):
            self.controller.focus_next(self)
        elif matches_key(data, "shift+tab"):
            self.controller.focus_next(self, -1)
        elif matches_key(data, "escape") or matches_key(data, "ctrl+d"):
            self.controller.dismiss(self)
        elif matches_key(data, "ctrl+c"):
            self.controller.close()
        elif any(matches_key(data, key) for key in named):
            self.keys.append(next(label for key, label in named.items() if matches_key(data, key)))
        else:
            self.input.handle_input(data)
            edit = next((label for key, label in edits.items() if matches_key(data, key)), None)
            self.keys.append(edit or repr(data).replace("'", '"'))

    def render(self, width: int) -> list[str]:
        th = self.theme
        inner, pad, border = self.frame(width, self.colour if self.focused else "dim")
        self.input.focused = self.focused
        line = (self.input.render(max(1, inner - 8)) or [""])[0]
        state = th.fg("success", "FOCUSED") if self.focused else th.fg("dim", "visible")
        recent = " ".join(self.keys[-6:]) if self.keys else "(none)"
        rows = [border(f"╭{'─' * inner}╮"), border("│") + pad(f" {th.fg(self.colour, self.label)} {state}") + border("│"),
                border("│") + pad("") + border("│"), border("│") + pad(f" Input: {line}") + border("│"),
                border("│") + pad(f" Keys: {recent}") + border("│"),
                border("│") + pad(th.fg("dim", " Tab/Shift+Tab focus")) + border("│"),
                border("│") + pad(th.fg("dim", " Esc/Ctrl+D dismiss")) + border("│"), border(f"╰{'─' * inner}╯")]
        return rows


class FocusDemo(BaseOverlay):
    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.closed = False
        self.entries: list[tuple[FocusPanel, OverlayHandle]] = []
        for label, colour, options in FOCUS_PANELS:
            panel = FocusPanel(theme, label, colour, self)
            self.entries.append((panel, tui.show_overlay(panel, {"non_capturing": True, **options})))
        self.focus_first()

    def open_entries(self) -> list[tuple[FocusPanel, OverlayHandle]]:
        return [entry for entry in self.entries if not entry[0].closed]

    def focus_next(self, current: FocusPanel, step: int = 1) -> None:
        entries = self.open_entries()
        position = next(i for i, (panel, _) in enumerate(entries) if panel is current)
        entries[(position + step) % len(entries)][1].focus()
        self.tui.request_render()

    def dismiss(self, panel: FocusPanel) -> None:
        entries = self.open_entries()
        position = next((i for i, (p, _) in enumerate(entries) if p is panel), None)
        if position is None:
            return
        panel.closed = True
        entries[position][1].hide()
        remaining = self.open_entries()
        if not remaining:
            self.close()
            return
        remaining[position % len(remaining)][1].focus()
        self.tui.request_render()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.hide_panels()
        self.done()

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.close()
        elif matches_key(data, "tab"):
            self.focus_first()

    def render(self, width: int) -> list[str]:
        th = self.theme
        focused = next((panel.label for panel, handle in self.entries if handle.is_focused()), "Controller")

        def dim(text: str) -> str:
            return str(th.fg("dim", text))

        return self.box(["", f" Current focus: {th.fg('accent', focused)}", "", " Three overlapping panels above are",
                         f" {th.fg('accent', 'nonCapturing')} overlays controlled with", " raw OverlayHandle.focus()/hide().",
                         "", " Type in the focused panel's input.", " Focused panel renders on top.", "",
                         dim(" Tab/Shift+Tab = cycle panels"), dim(" Esc/Ctrl+D = dismiss panel"), dim(" Ctrl+C = close all"),
                         ""], width, "Focus + Input Demo")

    def dispose(self) -> None:
        if not self.closed:
            self.closed = True
            self.hide_panels()

    def focus_first(self) -> None:
        entries = self.open_entries()
        if entries:
            entries[0][1].focus()
            self.tui.request_render()

    def hide_panels(self) -> None:
        for panel, handle in self.entries:
            if not panel.closed:
                panel.closed = True
                handle.hide()
        self.entries = []


class StreamingPanel:
    def __init__(self, theme: Any, label: str, colour: str, on_tab: Callable[[], None],
                 on_close: Callable[[], None]) -> None:
        self.theme, self.label, self.colour = theme, label, colour
        self.on_tab, self.on_close = on_tab, on_close
        self.handle: OverlayHandle | None = None
        self.typed = ""

    def handle_input(self, data: str) -> None:
        if matches_key(data, "tab"):
            self.on_tab()
        elif closing(data):
            self.on_close()
        elif matches_key(data, "backspace"):
            self.typed = self.typed[:-1]
        elif len(data) == 1 and ord(data) >= 32:
            self.typed += data

    def render(self, width: int) -> list[str]:
        th = self.theme
        focused = self.handle.is_focused() if self.handle is not None else False
        inner = max(1, width - 2)

        def border(text: str) -> str:
            return str(th.fg(self.colour, text))

        def pad(text: str) -> str:
            return text + " " * max(0, inner - visible_width(text))

        typed = truncate_to_width(f" > {self.typed or th.fg('dim', '(type here)')}", inner, "...", True)
        state = [th.fg("success", " ● FOCUSED"), th.fg("dim", " (receiving input)")] if focused \
            else [th.fg("dim", " ○ unfocused"), ""]
        rows = [border(f"╭{'─' * inner}╮"), border("│") + pad(f" {th.fg('accent', self.label)}") + border("│"),
                border("│") + pad("") + border("│")]
        rows += [border("│") + pad(text) + border("│") for text in state]
        rows += [border("│") + pad(typed) + border("│"), border("│") + pad("") + border("│"),
                 border("│") + pad(th.fg("dim", " Tab | Esc")) + border("│"), border(f"╰{'─' * inner}╯")]
        return rows

    def invalidate(self) -> None:
        return None


class StreamingController(BaseOverlay):
    def __init__(self, tui: Any, theme: Any, done: Done) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.panels: list[StreamingPanel] = []
        self.handles: list[OverlayHandle] = []
        self.focus_index = -1  # -1: this controller; 0-2: a panel
        self.stream: list[str] = []
        self.count = 0
        for index, (label, colour) in enumerate((("Panel A", "error"), ("Panel B", "success"), ("Panel C", "accent"))):
            panel = StreamingPanel(theme, label, colour, self.cycle_focus, self.close)
            handle = tui.show_overlay(panel, {"non_capturing": True, "row": 1 + index * 9, "col": 2, "width": 35})
            panel.handle = handle
            self.panels.append(panel)
            self.handles.append(handle)
        self.task: asyncio.Task[None] | None = asyncio.ensure_future(self.streaming())

    async def streaming(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.count += 1
            self.stream = [*self.stream, f"[{time.strftime('%H:%M:%S')}] Streaming line {self.count}..."][-8:]
            self.tui.request_render()

    def cycle_focus(self) -> None:
        if 0 <= self.focus_index < len(self.handles):
            self.handles[self.focus_index].unfocus()
        self.focus_index += 1
        if self.focus_index >= len(self.handles):
            self.focus_index = -1
        if self.focus_index >= 0:
            self.handles[self.focus_index].focus()
        self.tui.request_render()

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
        for handle in self.handles:
            handle.hide()
        self.handles, self.panels = [], []
        self.done()

    def handle_input(self, data: str) -> None:
        if closing(data):
            self.close()
        elif matches_key(data, "tab"):
            self.cycle_focus()

    def render(self, width: int) -> list[str]:
        th = self.theme
        label = th.fg("success", "Controller (this panel)") if self.focus_index == -1 \
            else self.panels[self.focus_index].label if self.focus_index < len(self.panels) else "?"
        rule = th.fg("dim", " ─" * ((width - 2) // 2))
        lines = ["", f" Current focus: {th.fg('accent', label)}", "", " Simulated streaming output:", rule]
        lines += [f" {th.fg('dim', line)}" for line in self.stream]
        lines += [""] * max(0, 12 - len(lines))
        lines += [rule, "", f" Three {th.fg('accent', 'nonCapturing')} input panels on the left.",
                  " Tab cycles: Controller → Panel A → B → C → Controller", " Type in each panel to test input routing.",
                  "", th.fg("dim", " Tab = cycle focus | Esc = close all"), ""]
        return self.box(lines, width, "Streaming + Input Test")

    def dispose(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
        for handle in self.handles:
            handle.hide()
        self.handles = []


ANCHORS = ["top-left", "top-center", "top-right", "left-center", "center", "right-center", "bottom-left",
           "bottom-center", "bottom-right"]
MARGINS: list[tuple[str, dict[str, Any]]] = [
    ("No margin (top-left)", {"anchor": "top-left", "width": 35}),
    ("Margin: 3 all sides", {"anchor": "top-left", "width": 35, "margin": 3}),
    ("Margin: top=5, left=10", {"anchor": "top-left", "width": 35, "margin": {"top": 5, "left": 10}}),
    ("Center + offset (10, -3)", {"anchor": "center", "width": 35, "offset_x": 10, "offset_y": -3}),
    ("Bottom-right, margin: 2", {"anchor": "bottom-right", "width": 35, "margin": 2}),
]
PERCENTS = [("rowPercent: 0 (top)", 0, 50), ("rowPercent: 50 (middle)", 50, 50), ("rowPercent: 100 (bottom)", 100, 50),
            ("colPercent: 0 (left)", 50, 0), ("colPercent: 100 (right)", 50, 100)]


async def overlay_animation(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: AnimationDemo(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "center", "width": 50, "max_height": 20})


async def overlay_anchors(args: str, ctx: CommandContext) -> None:
    index = 0
    while True:
        anchor = ANCHORS[index]
        result = await ctx.ui.custom(lambda tui, theme, kb, done: AnchorTest(theme, anchor, done), overlay=True,
                                     overlay_options={"anchor": anchor, "width": 40})
        if result == "next":
            index = (index + 1) % len(ANCHORS)
            continue
        if result == "confirm":
            await ctx.ui.notify(f"Selected: {anchor}", "info")
        break


async def overlay_margins(args: str, ctx: CommandContext) -> None:
    index = 0
    while True:
        name, options = MARGINS[index]
        result = await ctx.ui.custom(
            lambda tui, theme, kb, done: ConfigTest(theme, name, "Margin Test", "Space/→ = next config", done),
            overlay=True, overlay_options=options)
        if result != "next":
            break
        index = (index + 1) % len(MARGINS)


async def overlay_stack(args: str, ctx: CommandContext) -> None:
    layers = [(1, "back (red border)", {"offset_x": -8, "offset_y": -4}), (2, "middle (green border)", {}),
              (3, "front (blue border)", {"offset_x": 8, "offset_y": 4})]
    waiting = []
    for number, position, offsets in layers:
        await ctx.ui.notify(f"Showing overlay {number} ({position.split()[0]})...", "info")
        waiting.append(asyncio.ensure_future(ctx.ui.custom(
            lambda tui, theme, kb, done, n=number, p=position: StackOverlay(theme, n, p, done), overlay=True,
            overlay_options={"anchor": "center", "width": 50, "max_height": 15, **offsets})))
        if number < 3:
            await asyncio.sleep(0.4)
    closed = await asyncio.gather(*waiting)
    await ctx.ui.notify(f"Closed in order: {', '.join(str(c) for c in closed)}", "info")


async def overlay_overflow(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: StreamingOverflow(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "center", "width": 90, "max_height": 20})


async def overlay_edge(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: EdgeTest(theme, done), overlay=True,
                        overlay_options={"anchor": "right-center", "width": 40, "margin": {"right": 0}})


async def overlay_percent(args: str, ctx: CommandContext) -> None:
    index = 0
    while True:
        name, row, col = PERCENTS[index]
        result = await ctx.ui.custom(
            lambda tui, theme, kb, done: ConfigTest(theme, name, "Percent Test", "Space/→ = next", done),
            overlay=True, overlay_options={"width": 30, "row": f"{row}%", "col": f"{col}%"})
        if result != "next":
            break
        index = (index + 1) % len(PERCENTS)


async def overlay_maxheight(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: MaxHeightTest(theme, done), overlay=True,
                        overlay_options={"anchor": "center", "width": 50, "max_height": 10})


async def overlay_sidepanel(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: Sidepanel(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "right-center", "width": "25%", "min_width": 30,
                                         "margin": {"right": 1}, "visible": lambda columns, rows: columns >= 100})


async def overlay_toggle(args: str, ctx: CommandContext) -> None:
    def keep(handle: OverlayHandle) -> None:
        Toggle.handle = handle

    await ctx.ui.custom(lambda tui, theme, kb, done: ToggleDemo(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "center", "width": 50}, on_handle=keep)
    Toggle.handle = None


async def overlay_passive(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: PassiveDemo(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "center", "width": 48})


async def overlay_focus(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: FocusDemo(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "bottom-center", "width": 55, "margin": {"bottom": 1}})


async def overlay_streaming(args: str, ctx: CommandContext) -> None:
    await ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: StreamingController(tui, theme, done), overlay=True,
                        overlay_options={"anchor": "bottom-center", "width": 60, "margin": {"bottom": 1}})


COMMANDS = [
    ("overlay-animation", overlay_animation, "Test real-time animation in overlay (~30 FPS)"),
    ("overlay-anchors", overlay_anchors, "Cycle through all anchor positions"),
    ("overlay-margins", overlay_margins, "Test margin and offset options"),
    ("overlay-stack", overlay_stack, "Test stacked overlays"),
    ("overlay-overflow", overlay_overflow, "Test width overflow with streaming process output"),
    ("overlay-edge", overlay_edge, "Test overlay positioned at terminal edge"),
    ("overlay-percent", overlay_percent, "Test percentage-based positioning"),
    ("overlay-maxheight", overlay_maxheight, "Test maxHeight truncation"),
    ("overlay-sidepanel", overlay_sidepanel, "Test responsive sidepanel (hides when terminal < 100 cols)"),
    ("overlay-toggle", overlay_toggle, "Test overlay toggle (press 't' to toggle visibility)"),
    ("overlay-passive", overlay_passive, "Test non-capturing overlay (passive info panel alongside active overlay)"),
    ("overlay-focus", overlay_focus, "Test focus cycling, input routing, dismissal, and rendering order with overlays"),
    ("overlay-streaming", overlay_streaming, "Multiple input panels with simulated streaming (Tab to cycle focus)"),
]


@hookimpl
def register_commands(register: Any) -> None:
    for name, handler, description in COMMANDS:
        register(Command(name, handler, description))
