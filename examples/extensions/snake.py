"""Port of pi's ``snake`` example: ``/snake`` plays Snake in a ``ctx.ui.custom`` component moved by a timer
(a tick every 100 ms, ``tui.request_render()``). Arrows or WASD steer, Esc pauses and saves the game in
the session (``append_entry("snake-save", ...)``; ``/snake`` resumes it, paused until a key), Q quits and
forgets it, R or Space restarts after a crash.

``PI_SNAKE_SEED`` seeds where the food appears (for tests); pi's uses ``Math.random``."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pi_core import Command, CommandContext, hookimpl
from pi_core.tui import matches_key, visible_width

GAME_WIDTH = 40
GAME_HEIGHT = 15
TICK_MS = 100
SAVE_TYPE = "snake-save"
RANDOM = random.Random(os.environ.get("PI_SNAKE_SEED"))

Point = tuple[int, int]
STEPS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


def spawn_food(snake: list[Point]) -> Point:
    while True:
        food = (RANDOM.randrange(GAME_WIDTH), RANDOM.randrange(GAME_HEIGHT))
        if food not in snake:
            return food


@dataclass
class GameState:
    snake: list[Point] = field(default_factory=list)
    food: Point = (0, 0)
    direction: str = "right"
    next_direction: str = "right"
    score: int = 0
    game_over: bool = False
    high_score: int = 0

    @classmethod
    def fresh(cls, high_score: int = 0) -> GameState:
        x, y = GAME_WIDTH // 2, GAME_HEIGHT // 2
        return cls(snake=[(x, y), (x - 1, y), (x - 2, y)], food=spawn_food([(x, y)]), high_score=high_score)

    @classmethod
    def load(cls, data: Any) -> GameState | None:
        if not isinstance(data, dict):
            return None
        state = cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
        state.snake = [(int(x), int(y)) for x, y in state.snake]
        state.food = (int(state.food[0]), int(state.food[1]))
        return state


def dim(text: str) -> str:
    return f"\x1b[2m{text}\x1b[22m"


def green(text: str) -> str:
    return f"\x1b[32m{text}\x1b[0m"


def red(text: str) -> str:
    return f"\x1b[31m{text}\x1b[0m"


def yellow(text: str) -> str:
    return f"\x1b[33m{text}\x1b[0m"


def bold(text: str) -> str:
    return f"\x1b[1m{text}\x1b[22m"


class SnakeComponent:
    def __init__(self, tui: Any, on_close: Callable[[], None], on_save: Callable[[GameState | None], None],
                 saved: GameState | None = None) -> None:
        self.tui = tui
        self.on_close, self.on_save = on_close, on_save
        self.timer: asyncio.Task[None] | None = None
        if saved is not None and not saved.game_over:
            self.state, self.paused = saved, True  # a saved game waits for a key
        else:
            self.state, self.paused = GameState.fresh(saved.high_score if saved else 0), False
            self.start()

    def start(self) -> None:
        self.timer = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TICK_MS / 1000)
            if not self.state.game_over:
                self.tick()
                self.tui.request_render()

    def tick(self) -> None:
        state = self.state
        state.direction = state.next_direction
        dx, dy = STEPS[state.direction]
        head = (state.snake[0][0] + dx, state.snake[0][1] + dy)
        if not (0 <= head[0] < GAME_WIDTH and 0 <= head[1] < GAME_HEIGHT) or head in state.snake:
            state.game_over = True
            return
        state.snake.insert(0, head)
        if head == state.food:
            state.score += 10
            state.high_score = max(state.high_score, state.score)
            state.food = spawn_food(state.snake)
        else:
            state.snake.pop()

    def handle_input(self, data: str) -> None:
        if self.paused:
            if matches_key(data, "escape") or data in ("q", "Q"):
                self.close()
                return
            self.paused = False
            self.start()
            return
        if matches_key(data, "escape"):
            self.close(save=self.state)
            return
        if data in ("q", "Q"):
            self.close(forget=True)
            return
        self.steer(data)
        if self.state.game_over and data in ("r", "R", " "):
            self.state = GameState.fresh(self.state.high_score)
            self.on_save(None)
            self.tui.request_render()

    def steer(self, data: str) -> None:
        keys = {"up": "wW", "down": "sS", "right": "dD", "left": "aA"}
        for direction, letters in keys.items():
            if matches_key(data, direction) or (len(data) == 1 and data in letters):
                if self.state.direction != OPPOSITE[direction]:
                    self.state.next_direction = direction
                return

    def close(self, *, save: GameState | None = None, forget: bool = False) -> None:
        self.dispose()
        if save is not None or forget:
            self.on_save(save)
        self.on_close()

    def render(self, width: int) -> list[str]:
        cells = min(GAME_WIDTH, (width - 4) // 2)
        inner = cells * 2

        def box_line(content: str) -> str:
            return dim(" │") + content + " " * max(0, inner - visible_width(content)) + dim("│")

        state = self.state
        score = f"Score: {bold(yellow(str(state.score)))}"
        high = f"High: {bold(yellow(str(state.high_score)))}"
        rows = [dim(f" ╭{'─' * inner}╮"), box_line(f"{bold(green('SNAKE'))} │ {score} │ {high}"),
                dim(f" ├{'─' * inner}┤")]
        body = set(state.snake[1:])
        for y in range(GAME_HEIGHT):
            row = "".join(green("██") if (x, y) == state.snake[0] else green("▓▓") if (x, y) in body
                          else red("◆ ") if (x, y) == state.food else "  " for x in range(cells))
            rows.append(dim(" │") + row + dim("│"))
        rows.append(dim(f" ├{'─' * inner}┤"))
        rows.append(box_line(self.footer()))
        rows.append(dim(f" ╰{'─' * inner}╯"))
        return [row + " " * max(0, width - visible_width(row)) for row in rows]

    def footer(self) -> str:
        if self.paused:
            return f"{yellow(bold('PAUSED'))} Press any key to continue, {bold('Q')} to quit"
        if self.state.game_over:
            return f"{red(bold('GAME OVER!'))} Press {bold('R')} to restart, {bold('Q')} to quit"
        return f"↑↓←→ or WASD to move, {bold('ESC')} pause, {bold('Q')} quit"

    def invalidate(self) -> None:
        return None

    def dispose(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


async def snake(args: str, ctx: CommandContext) -> None:
    if ctx.mode != "tui":
        await ctx.ui.notify("Snake requires interactive mode", "error")
        return
    saved = None
    for entry in reversed(ctx.session.get_entries()):
        if getattr(entry, "type", None) == "custom" and getattr(entry, "custom_type", None) == SAVE_TYPE:
            saved = GameState.load(entry.data)
            break

    def save(state: GameState | None) -> None:
        ctx.append_entry(SAVE_TYPE, asdict(state) if state is not None else None)

    await ctx.ui.custom(lambda tui, theme, kb, done: SnakeComponent(tui, lambda: done(None), save, saved))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("snake", snake, "Play Snake!"))
