"""Changes of the active tools are recorded as pi 1.6 records them: a system message with only
``toolsAdded``/``toolsRemoved`` before the next request, and ``ctx.get_declared_tools()`` replays them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_core import Command, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider


class Swapper:
    __name__ = "swapper"

    def __init__(self) -> None:
        self.declared: list[list[str]] = []

    @hookimpl
    def register_commands(self, register: Any) -> None:
        def swap(args: str, ctx: Any) -> None:
            ctx.set_active_tools(args.split())

        def declared(args: str, ctx: Any) -> None:
            self.declared.append(ctx.get_declared_tools())

        register(Command("swap", swap, ""))
        register(Command("declared", declared, ""))


def test_a_tool_set_change_is_recorded_before_the_next_request(tmp_path: Path) -> None:
    faux = FauxProvider("faux-t", "tee")
    faux.enqueue("one", "two", "three")
    plugin = Swapper()

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, plugin],
                                             tools=["read", "bash"], agent_dir=tmp_path / "agent")
        await session.prompt("first")
        await session.prompt("/declared")
        await session.prompt("/swap read ls")
        await session.prompt("/declared")  # not declared yet: no request was made since
        await session.prompt("second")
        await session.prompt("/declared")
        await session.prompt("third")  # nothing changed: nothing recorded
        return session

    session = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert [[t.name for t in r.context.tools] for r in faux.requests] == [["read", "bash"], ["read", "ls"],
                                                                          ["read", "ls"]]
    assert plugin.declared == [["read", "bash"], ["read", "bash"], ["read", "ls"]]
    records = [json.loads(line) for line in session.session.session_file.read_text().splitlines()]
    messages = [r["message"] for r in records if r["type"] == "message"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "system", "user", "assistant", "user", "assistant"]
    first, change = messages[0], messages[3]
    assert [t["name"] for t in first["toolsAdded"]] == ["read", "bash"]
    assert change["content"] == "" and "sections" not in change
    assert [t["name"] for t in change["toolsAdded"]] == ["ls"] and change["toolsRemoved"] == [{"name": "bash"}]
    ls = change["toolsAdded"][0]
    assert ls["description"] and ls["parameters"]["type"] == "object"
