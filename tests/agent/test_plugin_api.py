"""The API handle plugins get through ``ctx``, used from commands and hooks of a real session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_core import Command, Tool, ToolResult, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


class ApiUser:
    __name__ = "api-user"

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    @hookimpl
    def register_commands(self, register: Any) -> None:
        async def setup(args: str, ctx: Any) -> None:
            ctx.send_message("remember the codeword: kiwi", deliver_as="nextTurn")
            ctx.append_entry("api-user.state", {"step": 1})
            ctx.set_session_name("api test")
            ctx.register_tool(Tool(name="late_tool", description="registered at run time",
                                   parameters={"type": "object"}, execute=lambda p, c: ToolResult.text("late")))
            self.seen["active"] = ctx.get_active_tools()
            self.seen["all"] = sorted(t.name for t in ctx.get_all_tools())
            self.seen["switched"] = ctx.set_model("beta")
            self.seen["unknown"] = ctx.set_model("no-such-model-xyz")
            result = await ctx.exec("echo", ["from", "exec"])
            self.seen["exec"] = (result.stdout.strip(), result.exit_code)

        async def kick(args: str, ctx: Any) -> None:
            ctx.send_message("started by a plugin", trigger_turn=True)

        register(Command("setup", setup, ""))
        register(Command("kick", kick, ""))


def test_plugin_api_from_a_command(tmp_path: Path) -> None:
    alpha, beta = FauxProvider("faux-a", "alpha"), FauxProvider("faux-b", "beta")
    alpha.enqueue("from alpha")
    beta.enqueue("from beta", "kicked answer")
    plugin = ApiUser()

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=alpha.model, plugins=[alpha, beta, plugin],
                                             tools=["read", "late_tool"], agent_dir=tmp_path / "agent")
        await session.prompt("/setup")
        await asyncio.sleep(0.05)  # set_model runs once the command returned
        await session.prompt("what is the codeword?")
        await session.prompt("/kick")
        for _ in range(100):
            await asyncio.sleep(0.02)
            if len(beta.requests) == 2 and not session.is_streaming:
                break
        return session

    session = run(scenario())
    assert plugin.seen["active"] == ["read", "late_tool"] and "late_tool" in plugin.seen["all"]
    assert plugin.seen["switched"] is True and plugin.seen["unknown"] is False
    assert plugin.seen["exec"] == ("from exec", 0)
    assert session.model.id == "beta" and alpha.requests == []
    first = beta.requests[0].context
    texts = [m.content[0].text for m in first.messages if m.role == "user"]
    assert texts == ["what is the codeword?", "remember the codeword: kiwi"]
    assert [t.name for t in first.tools] == ["read", "late_tool"]
    assert beta.requests[1].context.messages[-1].content[0].text == "started by a plugin"
    records = [json.loads(line) for line in session.session.session_file.read_text().splitlines()]
    assert any(r["type"] == "custom" and r["customType"] == "api-user.state" for r in records)
    assert any(r["type"] == "session_info" and r["name"] == "api test" for r in records)
    assert any(r["type"] == "model_change" and r["modelId"] == "beta" for r in records)
