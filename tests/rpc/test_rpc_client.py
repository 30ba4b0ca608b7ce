"""``pi_core.rpc_client.RpcClient``, the public client of pi's RPC protocol, driving a real ``pi --mode rpc``
against the local OpenAI-compatible fake server."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_core.rpc_client import RpcClient, RpcCommandError, RpcProcessError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402

PLUGIN = '''
from pi_core import Command, hookimpl


async def ask(args, ctx):
    colour = await ctx.ui.select("Colour?", ["red", "green"])
    await ctx.ui.notify(f"picked {colour}")


@hookimpl
def register_commands(register):
    register(Command("ask", ask, "asks for a colour"))
'''


def client(tmp_path: Path, server: FakeOpenAI, *args: str) -> RpcClient:
    agent = tmp_path / "agent"
    write_agent_dir(agent, server.base_url)
    (tmp_path / "ask.py").write_text(PLUGIN)
    return RpcClient(cwd=tmp_path, env={"PI_CODING_AGENT_DIR": str(agent)}, provider="fake", model="fake-model",
                     args=["-e", str(tmp_path / "ask.py"), *args], timeout=30)


def test_prompt_events_state_and_commands(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        with FakeOpenAI([{"text": "hello there"}]) as server:
            async with client(tmp_path, server) as pi:
                heard: list[str] = []
                remove = pi.on_event(lambda event: heard.append(event["type"]))
                events = await pi.prompt_and_wait("hi")
                remove()
                await pi.set_session_name("greeting")
                return {"events": events, "heard": heard, "state": await pi.get_state(),
                        "text": await pi.get_last_assistant_text(), "messages": await pi.get_messages(),
                        "forks": await pi.get_fork_messages(), "bash": await pi.bash("echo out; exit 3"),
                        "commands": await pi.get_commands(), "levels": await pi.get_available_thinking_levels(),
                        "requests": len(server.requests)}

    got = asyncio.run(scenario())
    kinds = [e["type"] for e in got["events"]]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_settled" and got["heard"] == kinds
    assert got["text"] == "hello there" and got["requests"] == 1
    assert got["state"]["sessionName"] == "greeting" and got["state"]["model"]["id"] == "fake-model"
    assert [m["role"] for m in got["messages"]][-2:] == ["user", "assistant"]
    assert [f["text"] for f in got["forks"]] == ["hi"]
    assert got["bash"] == {"output": "out\n", "exitCode": 3, "cancelled": False, "truncated": False}
    assert any(c["name"] == "ask" and c["source"] == "extension" for c in got["commands"])
    assert got["levels"] == ["off"]


def test_refusals_raise_with_pis_message_and_dialogs_are_answered(tmp_path: Path) -> None:
    async def scenario() -> tuple[RpcCommandError, list[str], str]:
        with FakeOpenAI([]) as server:
            async with client(tmp_path, server) as pi:
                with pytest.raises(RpcCommandError) as refused:
                    await pi.set_model("nope", "missing")
                notes: list[str] = []

                async def on_event(event: dict[str, Any]) -> None:  # a coroutine listener answers the dialog
                    if event["type"] == "extension_ui_request" and event["method"] == "select":
                        await pi.respond_ui(event["id"], value="green")
                    elif event["type"] == "extension_ui_request" and event["method"] == "notify":
                        notes.append(event["message"])

                pi.on_event(on_event)
                disposition = await pi.prompt("/ask")
                return refused.value, notes, disposition

    error, notes, disposition = asyncio.run(scenario())
    assert error.command == "set_model" and str(error) == "Model not found: nope/missing"
    assert disposition == "handled" and notes == ["picked green"]


def test_a_process_that_ends_fails_the_waiting_command_and_the_next(tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str, RpcClient]:
        with FakeOpenAI([]) as server:
            pi = client(tmp_path, server)
            await pi.start()
            assert pi._process is not None
            waiting = asyncio.ensure_future(pi.bash("sleep 30"))
            await asyncio.sleep(0.5)
            pi._process.kill()  # pi dies under a command
            with pytest.raises(RpcProcessError) as during:
                await waiting
            with pytest.raises(RpcProcessError) as after:
                await pi.get_state()
            await pi.stop()
            return str(during.value), str(after.value), pi

    during, after, pi = asyncio.run(scenario())
    assert "pi exited" in during and "pi exited" in after and pi.returncode is None


def test_a_bad_option_fails_with_pis_message(tmp_path: Path) -> None:
    async def scenario() -> str:
        with FakeOpenAI([]) as server:
            pi = client(tmp_path, server, "--thinking", "ultra")
            try:
                with pytest.raises(RpcProcessError) as failed:  # start() sees it when pi ends within 0.1 s
                    await pi.start()
                    await pi.get_state()
            finally:
                await pi.stop()
            return str(failed.value)

    assert "--thinking must be one of" in asyncio.run(scenario())
