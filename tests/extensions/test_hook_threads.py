"""A plugin's ``def`` hook runs in a worker thread (so a time limit can act on it), yet what it asks of the
session through ``ctx`` happens on the event loop's thread, which alone may change the session, the
transcript and the screen."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from pi_core import UI, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider


class RecordingUI(UI):
    def __init__(self) -> None:
        super().__init__()
        self.notices: list[tuple[str, int]] = []

    def notify(self, message: str, level: str = "info") -> None:  # type: ignore[override]
        self.notices.append((message, threading.get_ident()))


def test_a_def_hook_in_a_worker_thread_changes_the_session_on_the_loop_thread(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("answer")
    seen: dict[str, Any] = {}

    class Plugin:
        @hookimpl
        def agent_end(self, event: Any, ctx: Any) -> None:
            seen["hook"] = threading.get_ident()
            seen["entry"] = ctx.append_entry("probe", {"n": 1})
            ctx.set_session_name("from a worker")
            ctx.ui.notify("hello from the hook")
            seen["theme"] = ctx.ui.theme is not None  # attributes pass through as they are

    async def scenario() -> tuple[int, Any, RecordingUI]:
        ui = RecordingUI()
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Plugin()],
                                             agent_dir=tmp_path / "agent", ui=ui)
        calls: list[int] = []
        bridge = session.ctx._runtime._target
        real = bridge.append_entry

        def recorded(*args: Any, **kwargs: Any) -> Any:
            calls.append(threading.get_ident())
            return real(*args, **kwargs)

        bridge.append_entry = recorded
        await session.prompt("hi")
        for _ in range(50):
            await asyncio.sleep(0.01)
        seen["bridge"] = calls
        return threading.get_ident(), session, ui

    loop_thread, session, ui = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert seen["hook"] != loop_thread  # the handler ran in a worker
    assert seen["bridge"] == [loop_thread]  # its ctx call ran on the loop's thread
    assert ui.notices == [("hello from the hook", loop_thread)]
    assert seen["theme"] is True
    probe = [e for e in session.session.raw_entries() if e.get("customType") == "probe"]
    assert [e["id"] for e in probe] == [seen["entry"]] and probe[0]["data"] == {"n": 1}
    assert session.session.get_session_name() == "from a worker"
