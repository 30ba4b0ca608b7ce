"""Port of pi's ``border-status-editor`` example: the editor's borders carry the status — a spinner in the
top border while the agent works, model · thinking level and context use · folder (git branch) in the
bottom one; pi's footer and working row are hidden."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pi_core import ExtensionContext, hookimpl
from pi_core.tui import CustomEditor, truncate_to_width, visible_width

SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]


def fit_border(left: str, right: str, width: int, border: Any) -> str:
    """``─left───…───right─`` in ``width`` columns (the right part gives way first, then the left)."""
    if width <= 0:
        return ""
    if width == 1:
        return str(border("─"))
    fixed, gap = 2, 3
    while fixed + visible_width(left) + visible_width(right) + gap > width and visible_width(right) > 0:
        right = truncate_to_width(right, max(0, visible_width(right) - 1), "")
    while fixed + visible_width(left) + visible_width(right) + gap > width and visible_width(left) > 0:
        left = truncate_to_width(left, max(0, visible_width(left) - 1), "")
    fill = max(0, width - fixed - visible_width(left) - visible_width(right))
    return f"{border('─')}{left}{border('─' * fill)}{right}{border('─')}"


def format_cwd(cwd: str) -> str:
    home = os.environ.get("HOME")
    return f"~{cwd[len(home):]}" if home and cwd.startswith(home) else cwd


def format_context(ctx: ExtensionContext) -> str:
    usage = ctx.get_context_usage()
    window = usage.context_window or (ctx.model.context_window if ctx.model else 0)
    if not window or usage.percent is None:
        return "ctx ?"
    return f"ctx {round(usage.percent)}%/{window / 1000:.0f}k"


class State:
    working = False
    frame = 0
    spinner: asyncio.Task[None] | None = None
    tui: Any = None
    branch: str | None = None


class EmptyFooter:
    def render(self, width: int) -> list[str]:
        return []

    def invalidate(self) -> None:
        return None


def redraw() -> None:
    if State.tui is not None:
        State.tui.request_render()


async def spin() -> None:
    while True:
        await asyncio.sleep(0.08)
        State.frame = (State.frame + 1) % len(SPINNER)
        redraw()


def stop_spinner() -> None:
    if State.spinner is not None:
        State.spinner.cancel()
        State.spinner = None


class BorderStatusEditor(CustomEditor):
    def __init__(self, tui: Any, theme: Any, keybindings: Any, ctx: ExtensionContext) -> None:
        super().__init__(tui, theme, keybindings, {"padding_x": 0})
        self.ctx = ctx
        State.tui = tui

    def render(self, width: int) -> list[str]:
        rows = super().render(width)
        if len(rows) < 2:
            return rows
        ctx, theme = self.ctx, self.ctx.ui.theme

        def muted(text: str) -> str:
            return str(theme.fg("muted", text)) if theme is not None else text

        model = f"{ctx.model.provider}/{ctx.model.id}" if ctx.model else "no model"
        top_left = (theme.fg("accent", f" {SPINNER[State.frame]} ") if theme is not None
                    else f" {SPINNER[State.frame]} ") if State.working else ""
        bottom_left = muted(f" {model} · {ctx.get_thinking_level()} ")
        branch = f" ({State.branch})" if State.branch else ""
        bottom_right = muted(f" {format_context(ctx)} · {format_cwd(str(ctx.cwd))}{branch} ")
        rows[0] = fit_border(top_left, "", width, self.border_color)
        rows[-1] = fit_border(bottom_left, bottom_right, width, self.border_color)
        return rows


@hookimpl
async def agent_start(event: Any, ctx: ExtensionContext) -> None:
    State.working = True
    stop_spinner()
    State.spinner = asyncio.ensure_future(spin())
    redraw()


@hookimpl
async def agent_settled(event: Any, ctx: ExtensionContext) -> None:
    State.working = False
    stop_spinner()
    redraw()


@hookimpl
async def session_shutdown(event: Any, ctx: ExtensionContext) -> None:
    stop_spinner()
    State.tui = None


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    await ctx.ui.set_working_visible(False)
    await ctx.ui.set_footer(lambda tui, theme, footer_data: EmptyFooter())

    async def refresh_branch() -> None:
        try:
            result = await ctx.exec("git", ["branch", "--show-current"], cwd=ctx.cwd)
        except Exception:
            return
        State.branch = result.stdout.strip() or None if result.exit_code == 0 else None
        redraw()

    asyncio.ensure_future(refresh_branch())
    await ctx.ui.set_editor_component(
        lambda tui, theme, keybindings: BorderStatusEditor(tui, theme, keybindings, ctx))
