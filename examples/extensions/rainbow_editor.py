"""Port of pi's ``rainbow-editor`` example: "ultrathink" in the editor is drawn in rainbow colours with a
shine running over it (``ctx.ui.set_editor_component``; the animation redraws with ``tui.request_render()``)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pi_core import ExtensionContext, hookimpl
from pi_core.tui import CustomEditor

COLORS: list[tuple[int, int, int]] = [  # coral → yellow → green → teal → blue → purple → pink
    (233, 137, 115), (228, 186, 103), (141, 192, 122), (102, 194, 179), (121, 157, 207), (157, 134, 195),
    (206, 130, 172),
]
RESET = "\x1b[0m"
WORD = re.compile("ultrathink", re.IGNORECASE)
FRAME_SECONDS = 0.06


def brighten(rgb: tuple[int, int, int], factor: float) -> str:
    r, g, b = (round(c + (255 - c) * factor) for c in rgb)
    return f"\x1b[38;2;{r};{g};{b}m"


def colorize(text: str, shine: int) -> str:
    """Each letter its colour; three letters around ``shine`` brighter (``-1``: no shine)."""
    out = []
    for index, char in enumerate(text):
        distance = abs(index - shine)
        factor = 0.0 if shine < 0 else 0.7 if distance == 0 else 0.35 if distance == 1 else 0.0
        out.append(brighten(COLORS[index % len(COLORS)], factor) + char)
    return "".join(out) + RESET


class RainbowEditor(CustomEditor):
    frame = 0
    _timer: asyncio.TimerHandle | None = None

    def _has_ultrathink(self) -> bool:
        return WORD.search(self.get_text()) is not None

    def _tick(self) -> None:
        self.frame += 1
        self.tui.request_render()
        self._timer = asyncio.get_running_loop().call_later(FRAME_SECONDS, self._tick)

    def _start(self) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FRAME_SECONDS, self._tick)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def handle_input(self, data: str) -> None:
        super().handle_input(data)
        if self._has_ultrathink():
            self._start()
        else:
            self._stop()

    def render(self, width: int) -> list[str]:
        cycle = self.frame % 20  # ten shine positions, then ten frames of pause
        shine = cycle if cycle < 10 else -1
        return [WORD.sub(lambda m: colorize(m.group(0), shine), row) for row in super().render(width)]


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_editor_component(lambda tui, theme, keybindings: RainbowEditor(tui, theme, keybindings))
