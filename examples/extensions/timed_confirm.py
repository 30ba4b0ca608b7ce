"""Port of pi's ``timed-confirm`` example: dialogs that dismiss themselves.

* ``/timed`` — a confirm that gives up after 5 seconds (``timeout=``, in seconds where pi takes ms);
* ``/timed-select`` — a select that gives up after 10 seconds;
* ``/timed-signal`` — a confirm dismissed by an abort ``signal`` the command fires itself after 5 seconds.

The delays can be changed with ``PI_TIMED_CONFIRM_SECONDS`` (a test shortens them)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pi_core import AbortController, Command, CommandContext, hookimpl


def _seconds(default: float) -> float:
    return float(os.environ.get("PI_TIMED_CONFIRM_SECONDS", default))


async def timed(args: str, ctx: CommandContext) -> None:
    seconds = _seconds(5)
    confirmed = await ctx.ui.confirm("Timed Confirmation",
                                     f"This dialog will auto-cancel in {seconds:g} seconds. Confirm?", timeout=seconds)
    await ctx.ui.notify("Confirmed by user!" if confirmed else "Cancelled or timed out", "info")


async def timed_select(args: str, ctx: CommandContext) -> None:
    choice = await ctx.ui.select("Pick an option", ["Option A", "Option B", "Option C"], timeout=_seconds(10))
    await ctx.ui.notify(f"Selected: {choice}" if choice else "Selection cancelled or timed out", "info")


async def timed_signal(args: str, ctx: CommandContext) -> None:
    seconds = _seconds(5)
    controller = AbortController()
    timer = asyncio.get_running_loop().call_later(seconds, controller.abort)
    await ctx.ui.notify(f"Dialog will auto-cancel in {seconds:g} seconds...", "info")
    confirmed = await ctx.ui.confirm("Timed Confirmation",
                                     f"This dialog will auto-cancel in {seconds:g} seconds. Confirm?",
                                     signal=controller.signal)
    timer.cancel()
    if confirmed:
        await ctx.ui.notify("Confirmed by user!", "info")
    elif controller.signal.aborted:
        await ctx.ui.notify("Dialog timed out (auto-cancelled)", "warning")
    else:
        await ctx.ui.notify("Cancelled by user", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("timed", timed, "Show a timed confirmation dialog (auto-cancels in 5s)"))
    register(Command("timed-select", timed_select, "Show a timed select dialog (auto-cancels in 10s)"))
    register(Command("timed-signal", timed_signal, "Show a timed confirm using an abort signal"))
