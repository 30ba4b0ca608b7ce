"""``ctx.ui`` dialogs take an abort ``signal`` (pi's ``{signal}`` option): the run's ``ctx.signal`` dismisses an
open dialog when the run is aborted, in RPC mode (the real CLI) and in the terminal's dialog layer."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pi_core import AbortController
from pi_core.modes.interactive.ui import InteractiveUI
from pi_core.testing import FakeProviderServer, tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

T = TypeVar("T")

GATE = '''
from pi_core import Block, hookimpl

@hookimpl
async def before_tool_call(event, ctx):
    if await ctx.ui.confirm("Run it?", event.arguments.get("command", ""), signal=ctx.signal):
        return None
    return Block("not confirmed (aborted: %s)" % ctx.signal.aborted)
'''


def test_aborting_the_run_dismisses_a_dialog_opened_with_ctx_signal(
        fake_provider_server: FakeProviderServer, pi_project: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate.py"
    gate.write_text(GATE)
    fake_provider_server.script(tool_call("bash", {"command": "touch ran.txt"}), "Done.")
    with RpcProcess(pi_project, scripted=False, extensions=(gate,)) as pi:
        pi.send({"type": "prompt", "message": "go", "id": "p"})
        dialog, _ = pi.wait_for(lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "confirm")
        assert dialog["message"] == "touch ran.txt"
        aborted, seen = pi.call({"type": "abort"}, timeout=60)
        seen = pi.settle(seen, timeout=60)
        ends = [r for r in seen if r.get("type") == "tool_execution_end"]
        state, _ = pi.call({"type": "get_state"})
    assert aborted["success"] is True
    assert not (pi_project / "ran.txt").exists()
    assert ends and ends[0]["isError"] is True and "aborted: True" in str(ends[0]["result"])
    assert state["data"]["isStreaming"] is False


class _Host:
    def __init__(self) -> None:
        self.notices: list[str] = []

    async def exclusive(self, run: Callable[[], Awaitable[T]]) -> T:
        return await run()

    def notify(self, message: str, level: str) -> None:
        self.notices.append(message)


class _NeverAnswers:
    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.closed = False

    async def select(self, title: str, options: Sequence[str]) -> int | None:
        self.opened.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.closed = True
        return 0

    async def input(self, title: str, placeholder: str, prefill: str = "", *, secret: bool = False) -> str | None:
        return await self.select(title, [])  # type: ignore[return-value]


def test_the_terminal_dialog_closes_when_its_signal_fires() -> None:
    host, dialogs = _Host(), _NeverAnswers()
    ui = InteractiveUI(host, dialogs)  # type: ignore[arg-type]

    async def scenario() -> tuple[Any, Any]:
        controller = AbortController()
        asking = asyncio.create_task(ui.confirm("Proceed?", "now", signal=controller.signal))
        await asyncio.wait_for(dialogs.opened.wait(), 30)
        controller.abort()
        answered = await asyncio.wait_for(asking, 30)
        already = await ui.input("Name?", signal=controller.signal)  # an aborted signal: no dialog at all
        return answered, already

    answered, already = asyncio.run(scenario())
    assert answered is False and dialogs.closed
    assert already is None
    assert host.notices == ["? Proceed? — now: no", "? Name?: (cancelled)"]
