"""Port of pi's ``file-trigger`` example: watch a trigger file and hand what is written into it to the agent
(``echo "Run the tests" > /tmp/agent-trigger.txt``). The file is ``$PI_TRIGGER_FILE`` when set.

pi watches with ``fs.watch``; this port polls the file from a task started in ``session_start``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pi_core import CustomMessage, ExtensionContext, SessionShutdownEvent, SessionStartEvent, hookimpl

POLL_SECONDS = 0.2
_watchers: list[asyncio.Task[None]] = []


def trigger_file() -> Path:
    return Path(os.environ.get("PI_TRIGGER_FILE", "/tmp/agent-trigger.txt"))


async def _watch(path: Path, ctx: ExtensionContext) -> None:
    while True:
        await asyncio.sleep(POLL_SECONDS)
        try:
            content = path.read_text(encoding="utf-8").strip()
        except OSError:
            continue  # the file may not exist yet
        if content:
            path.write_text("")  # clear it once read
            ctx.send_message(CustomMessage(custom_type="file-trigger", content=f"External trigger: {content}",
                                           display=True), trigger_turn=True)


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    if not _watchers:
        _watchers.append(asyncio.ensure_future(_watch(trigger_file(), ctx)))
    if ctx.has_ui:
        await ctx.ui.notify(f"Watching {trigger_file()}", "info")


@hookimpl
def session_shutdown(event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
    if event.reason in ("quit", "reload"):
        while _watchers:
            _watchers.pop().cancel()
