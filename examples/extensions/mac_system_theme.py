"""Port of pi's ``mac-system-theme`` example: pi's theme follows the macOS appearance. At start the theme is
``dark`` or ``light`` as the system is, and every 2 seconds ``osascript`` is asked again; when the
appearance changed, ``ctx.ui.set_theme`` switches. Where there is no ``osascript`` (or it fails) the
appearance counts as light, as in pi."""

from __future__ import annotations

import asyncio

from pi_core import ExtensionContext, SessionShutdownEvent, SessionStartEvent, hookimpl

POLL_SECONDS = 2.0
SCRIPT = 'tell application "System Events" to tell appearance preferences to return dark mode'


class Poller:
    task: asyncio.Task[None] | None = None


async def is_dark_mode(ctx: ExtensionContext) -> bool:
    try:
        done = await ctx.exec("osascript", ["-e", SCRIPT], timeout=10)
    except OSError:  # no osascript here
        return False
    return done.exit_code == 0 and done.stdout.strip() == "true"


async def follow(ctx: ExtensionContext, current: str) -> None:
    while True:
        await asyncio.sleep(POLL_SECONDS)
        wanted = "dark" if await is_dark_mode(ctx) else "light"
        if wanted != current:
            current = wanted
            await ctx.ui.set_theme(current)


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    current = "dark" if await is_dark_mode(ctx) else "light"
    await ctx.ui.set_theme(current)
    if Poller.task is not None:  # a new session of the same run: one poller is enough
        Poller.task.cancel()
    Poller.task = asyncio.ensure_future(follow(ctx, current))


@hookimpl
def session_shutdown(event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
    if Poller.task is not None:
        Poller.task.cancel()
        Poller.task = None
