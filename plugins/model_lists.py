"""Built-in plugin: model lists that providers fetch at run time (OpenRouter's per-key list, a llama.cpp
router's models) are refreshed in the background when an interactive or RPC session starts, as pi does.

Print and JSON runs use the lists saved by the last refresh and fetch nothing; so does every mode with
``PI_OFFLINE`` (``--offline``). ``pi update --models`` refreshes them on demand, ``/login`` after signing
in to a provider that has one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core import hookimpl

#: The refreshes running now (kept so they are not collected, and cancelled when pi quits).
_running: set[asyncio.Task[Any]] = set()
#: Seconds the start-up refresh may take before it is given up.
STARTUP_TIMEOUT_S = 15.0


def _has_fetchers(registry: Any) -> bool:
    return any(getattr(registry.get_provider(name), "fetch_models", None) is not None
               for name in registry.get_providers())


async def _refresh(registry: Any) -> None:
    try:
        await asyncio.wait_for(registry.refresh_models(), STARTUP_TIMEOUT_S)
    except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - the saved lists stay; /model still works
        return


@hookimpl
def session_start(event: Any, ctx: Any) -> None:
    from pi_core.ai import network_allowed

    if event.reason != "startup" or ctx.mode not in ("tui", "rpc") or not network_allowed():
        return
    registry = ctx.model_registry
    if not _has_fetchers(registry):
        return
    task = asyncio.get_running_loop().create_task(_refresh(registry), name="pi-model-lists")
    _running.add(task)
    task.add_done_callback(_running.discard)


@hookimpl
def session_shutdown(event: Any, ctx: Any) -> None:
    if event.reason == "quit":
        for task in list(_running):
            task.cancel()


__all__ = ["session_shutdown", "session_start"]
