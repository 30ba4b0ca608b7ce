"""AgentSession with a scripted model: persistence as pi 1.6 writes it, hooks, commands, queues."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from scripted import MODEL, Script, calls, text

from pi_core import (
    Command,
    ContextEvent,
    SessionManager,
    SystemMessage,
    Tool,
    ToolCapabilities,
    ToolResult,
    UserMessage,
    build_plugin_host,
    hookimpl,
)
from pi_core.runtime.agent_session import AgentSession, SessionBusyError


def echo_tool() -> Tool:
    return Tool(name="echo", description="echo", parameters={"type": "object", "properties": {"n": {"type": "number"}}},
                execute=lambda params, ctx: ToolResult.text(f"echo {params.get('n')}"),
                capabilities=ToolCapabilities(concurrency_safe=True))


class Plugin:
    __name__ = "testplugin"

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(echo_tool())

    @hookimpl
    def register_commands(self, register: Any) -> None:
        async def hello(args: str, ctx: Any) -> None:
            self.seen.append(f"/hello {args}")

        register(Command("hello", hello, "say hello"))

    @hookimpl
    def context(self, event: ContextEvent) -> None:
        event.messages.append(UserMessage(content="[injected]"))

    @hookimpl
    def turn_end(self, event: Any) -> None:
        self.seen.append(f"turn_end {event.turn_index}")


def make_session(tmp_path: Path, script: Script, session: Any = None, plugin: Plugin | None = None) -> AgentSession:
    host = build_plugin_host(tmp_path, agent_dir=tmp_path / "agent", autoload=False, plugins=[plugin or Plugin()])
    manager = session or SessionManager.create(tmp_path, session_dir=tmp_path / "sessions")
    system = SystemMessage(content="", sections={"preamble": "You help."})
    return AgentSession(host=host, session=manager, model=MODEL, stream=script, tools=["echo"],
                        system_prompt=lambda tools: system)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_is_persisted_as_pi_writes_it(tmp_path: Path) -> None:
    script = Script([calls(("echo", {"n": 1})), text("done")])
    session = make_session(tmp_path, script)
    session.session.append_model_change(MODEL.provider, MODEL.id)
    session.session.append_thinking_level_change("off")
    events: list[str] = []
    session.subscribe(lambda e: events.append(e.type))
    assert asyncio.run(session.prompt("go")) == "started"
    records = lines(session.session.session_file)
    assert records[0]["type"] == "session"
    kinds = [r["type"] if r["type"] != "message" else r["message"]["role"] for r in records[1:]]
    assert kinds == ["model_change", "thinking_level_change", "system", "user", "assistant", "toolResult", "assistant"]
    assert all(r["parentId"] == prev["id"] for prev, r in zip(records[1:], records[2:]))
    assistant = records[5]["message"]
    assert assistant["thinkingLevel"] == "off" and assistant["stopReason"] == "toolUse" and "durationMs" in assistant
    assert records[6]["message"]["content"][0]["text"] == "echo 1"
    assert events[-1] == "agent_settled" and events[0] == "agent_start"
    # the context hook changed the request only
    assert script.contexts[0].messages[-1].content == "[injected]"
    assert not any(r.get("message", {}).get("content") == "[injected]" for r in records)


def test_resuming_restores_the_transcript_and_does_not_repeat_the_system_message(tmp_path: Path) -> None:
    first = make_session(tmp_path, Script([text("one")]))
    asyncio.run(first.prompt("first"))
    path = first.session.session_file
    first.session.close()
    script = Script([text("two")])
    second = make_session(tmp_path, script, session=SessionManager.open(path))
    asyncio.run(second.prompt("second"))
    roles = [r["message"]["role"] for r in lines(path) if r["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert [m.role for m in script.contexts[0].messages] == ["user", "assistant", "user", "user"]


def test_slash_command_is_handled_without_a_model_request(tmp_path: Path) -> None:
    plugin = Plugin()
    script = Script([])
    session = make_session(tmp_path, script, plugin=plugin)
    assert asyncio.run(session.prompt("/hello world")) == "handled"
    assert plugin.seen == ["/hello world"] and script.contexts == []


def test_prompt_while_streaming_needs_a_streaming_behavior(tmp_path: Path) -> None:
    script = Script([text("slow answer"), text("follow-up answer")], delay=0.3)
    session = make_session(tmp_path, script)

    async def scenario() -> list[str]:
        run = asyncio.create_task(session.prompt("start"))
        await asyncio.sleep(0.1)
        try:
            await session.prompt("interrupt")
        except SessionBusyError as exc:
            assert "streamingBehavior" in str(exc)
        else:
            raise AssertionError("expected SessionBusyError")
        assert await session.prompt("and then this", streaming_behavior="followUp") == "queued"
        await run
        return [m.role for m in session.messages]

    roles = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert session.messages[3].content[0].text == "and then this"


def test_hooks_receive_run_events(tmp_path: Path) -> None:
    plugin = Plugin()
    session = make_session(tmp_path, Script([calls(("echo", {"n": 2})), text("ok")]), plugin=plugin)
    asyncio.run(session.prompt("go"))
    assert plugin.seen == ["turn_end 0", "turn_end 1"]
