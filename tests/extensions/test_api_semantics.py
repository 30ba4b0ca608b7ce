"""The plugin API's semantics pi's users rely on: what happens when, driven through the SDK and the real
``pi --mode rpc`` process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_core import Command, CommandContext, ExtensionContext, Tool, ToolResult, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider, faux_tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import RpcProcess  # noqa: E402


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def hello_tool(default_active: bool = True) -> Tool:
    return Tool(name="hello" if default_active else "shy", description="says hello", parameters={"type": "object"},
                execute=lambda params, ctx: ToolResult.text("hello!"), default_active=default_active)


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(hello_tool())
        register(hello_tool(default_active=False))


def offered(faux: FauxProvider) -> list[str]:
    return [t.name for t in faux.requests[-1].context.tools or []]


@pytest.mark.parametrize(("tools", "exclude", "expected"), [
    (None, (), ["read", "bash", "edit", "write", "hello"]),
    (["read", "shy"], (), ["read", "shy"]),
    (["+shy", "-bash"], (), ["read", "edit", "write", "hello", "shy"]),
    (["*"], ["bash", "s*", "tool_*"], ["codemode", "edit", "find", "grep", "hello", "ls", "read", "write"]),
    (None, ["hello", "write"], ["read", "bash", "edit"]),
])
def test_plugin_tools_are_active_by_default_and_filtered_like_built_ins(
        tmp_path: Path, tools: list[str] | None, exclude: list[str], expected: list[str]) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("ok")

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Tools()], tools=tools,
                                             exclude_tools=exclude, session="memory", agent_dir=tmp_path / "agent")
        await session.prompt("hi")

    run(scenario())
    assert (sorted(offered(faux)) if tools == ["*"] else offered(faux)) == expected


def test_a_follow_up_queued_in_agent_end_starts_the_next_run(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("first answer", "answer to the follow-up")
    starts: list[str] = []

    class FollowUp:
        sent = False

        @hookimpl
        def agent_start(self, event: Any, ctx: ExtensionContext) -> None:
            starts.append("start")

        @hookimpl
        def agent_end(self, event: Any, ctx: ExtensionContext) -> None:
            if not self.sent:
                self.sent = True
                ctx.send_user_message("now merge it", deliver_as="followUp")

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, FollowUp()],
                                             session="memory", agent_dir=tmp_path / "agent")
        await session.prompt("do the work")
        for _ in range(50):
            await asyncio.sleep(0.01)
            await session.wait_for_idle()
        return session

    session = run(scenario())
    assert len(faux.requests) == 2 and starts == ["start", "start"]
    assert session.last_assistant_text() == "answer to the follow-up"


def test_a_slash_command_typed_while_running_is_run_not_sent(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.02)
    faux.enqueue("a long answer that streams for a while " * 3)
    ran: list[tuple[str, bool]] = []

    async def steer(args: str, ctx: CommandContext) -> None:
        ran.append((args, ctx.is_idle()))

    class Commands:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(Command("note", steer))

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Commands()],
                                             session="memory", agent_dir=tmp_path / "agent")
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.is_streaming:
            await asyncio.sleep(0.005)
        assert await session.prompt("/note focus on X", streaming_behavior="steer") == "handled"
        await task

    run(scenario())
    assert ran == [("focus on X", False)]
    assert len(faux.requests) == 1  # nothing was queued for the model


def test_input_fires_for_queued_steering_with_its_streaming_behavior(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.02)
    faux.enqueue([faux_tool_call("hello", {})], "done")
    seen: list[tuple[str, Any]] = []

    class Transform:
        @hookimpl
        def input(self, event: Any, ctx: ExtensionContext) -> Any:
            from pi_core import Transform as T

            seen.append((event.text, event.streaming_behavior))
            return T(event.text.upper()) if event.streaming_behavior else None

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Tools(), Transform()],
                                             session="memory", agent_dir=tmp_path / "agent")
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.is_streaming:
            await asyncio.sleep(0.005)
        assert await session.prompt("be brief", streaming_behavior="steer") == "queued"
        await task

    run(scenario())
    assert seen == [("go", None), ("be brief", "steer")]
    assert "BE BRIEF" in str(faux.requests[1].context.messages[-1].content)


def test_send_message_trigger_turn_runs_before_agent_start(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("ok")
    prompts: list[str] = []

    class Pirate:
        @hookimpl
        def before_agent_start(self, event: Any, ctx: ExtensionContext) -> None:
            event.system_prompt += "\nSpeak like a pirate."
            prompts.append(event.message_type)

        @hookimpl
        def register_commands(self, register: Any) -> None:
            async def kick(args: str, ctx: CommandContext) -> None:
                from pi_core import CustomMessage

                ctx.send_message(CustomMessage(custom_type="kick", content="a file changed"), trigger_turn=True)

            register(Command("kick", kick))

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Pirate()], session="memory",
                                             agent_dir=tmp_path / "agent")
        await session.prompt("/kick")
        for _ in range(50):
            await asyncio.sleep(0.01)
            await session.wait_for_idle()

    run(scenario())
    assert prompts == ["custom"]
    assert faux.requests[0].context.system_prompt.endswith("Speak like a pirate.")


SHUTDOWN_EXT = '''
from pi_core import Command, Tool, ToolResult, hookimpl

@hookimpl
def register_commands(register):
    async def quit_(args, ctx):
        ctx.shutdown()
    register(Command("bye", quit_))

@hookimpl
def register_tools(register):
    def stop(params, tctx):
        tctx.session.shutdown()
        return ToolResult.text("stopping")
    register(Tool(name="stop_pi", description="stop", parameters={"type": "object"}, execute=stop))

@hookimpl
async def session_start(event, ctx):
    await ctx.ui.notify("hello from session_start")

@hookimpl
def session_shutdown(event, ctx):
    print("SHUTDOWN", event.reason)
'''


def test_ctx_shutdown_from_a_command_ends_rpc_mode(tmp_path: Path) -> None:
    ext = tmp_path / "shutdown_ext.py"
    ext.write_text(SHUTDOWN_EXT)
    with RpcProcess(tmp_path, extensions=(ext,)) as pi:
        notice, _ = pi.wait_for(lambda r: r.get("type") == "extension_ui_request")
        response, _ = pi.call({"type": "prompt", "message": "/bye"})
        assert pi.wait(20) == 0  # stdin still open: pi ended by itself
    assert notice["method"] == "notify" and notice["message"] == "hello from session_start"
    assert response["success"] is True
    assert b"SHUTDOWN quit" in pi.stderr


def test_ctx_shutdown_from_a_tool_waits_for_the_run(tmp_path: Path) -> None:
    import json

    ext = tmp_path / "shutdown_ext.py"
    ext.write_text(SHUTDOWN_EXT)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"id": "c1", "name": "stop_pi", "arguments": {}}]},
                                  {"text": "stopped as asked"}]))
    with RpcProcess(tmp_path, script=script, extensions=(ext,)) as pi:
        records = pi.prompt("please stop")
        assert pi.wait(20) == 0
    ends = [r for r in records if r.get("type") == "message_end" and r["message"]["role"] == "assistant"]
    assert ends[-1]["message"]["content"][0]["text"] == "stopped as asked"


COMPLETIONS_EXT = '''
import asyncio
from pi_core import Command, hookimpl

async def branches(typed):
    await asyncio.sleep(0.01)          # e.g. asking git or a server
    return [(b, "branch") for b in ("main", "feature/login", "fix/typo") if b.startswith(typed)]

async def broken(typed):
    raise RuntimeError("server down")

async def nothing(args, ctx):
    pass

@hookimpl
def register_commands(register):
    register(Command("checkout", nothing, "Switch branch", argument_completions=branches))
    register(Command("deploy", nothing, "Deploy", argument_completions=broken))
'''


def test_async_argument_completions_reach_an_rpc_client(tmp_path: Path) -> None:
    ext = tmp_path / "completions_ext.py"
    ext.write_text(COMPLETIONS_EXT)
    with RpcProcess(tmp_path, extensions=(ext,)) as pi:
        some, _ = pi.call({"type": "get_argument_completions", "name": "checkout", "prefix": "f"})
        none, _ = pi.call({"type": "get_argument_completions", "name": "checkout", "prefix": "zzz"})
        failed, _ = pi.call({"type": "get_argument_completions", "name": "deploy", "prefix": ""})
        alive, _ = pi.call({"type": "get_state"})
    assert some["success"] is True
    assert some["data"]["items"] == [{"value": "feature/login", "label": "feature/login", "description": "branch"},
                                     {"value": "fix/typo", "label": "fix/typo", "description": "branch"}]
    assert none["data"] == {"items": []}
    assert failed["success"] is False and failed["error"] == "/deploy: argument completions failed: server down"
    assert alive["success"] is True
    assert b"never awaited" not in pi.stderr
