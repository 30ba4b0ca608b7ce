"""The loop through a real session with the faux provider and the built-in tools."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from pi_core import ContextWithSystemEvent, UserMessage, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_text, faux_tool_call


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def session_with(faux: FauxProvider, cwd: Path, *plugins: Any, **kwargs: Any) -> Any:
    return await create_agent_session(cwd, model=faux.model, plugins=[faux, *plugins], session="memory", **kwargs)


def test_text_and_tool_turns_with_the_built_in_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    faux = FauxProvider(seed=3)
    faux.enqueue([faux_tool_call("read", {"path": "a.txt"}), faux_tool_call("bash", {"command": "echo beta"})],
                 "read alpha, ran beta")

    async def scenario() -> Any:
        session = await session_with(faux, tmp_path)
        events: list[str] = []
        session.subscribe(lambda e: events.append(e.type))
        await session.prompt("look around")
        return session, events

    session, events = run(scenario())
    results = [m for m in session.messages if m.role == "toolResult"]
    assert [(m.tool_name, m.content[0].text) for m in results] == [("read", "alpha\n"), ("bash", "beta\n")]
    assert session.messages[-1].text() == "read alpha, ran beta"
    assert events.count("turn_start") == 2 and events[-1] == "agent_settled"
    second = faux.requests[1].context
    assert [m.role for m in second.messages] == ["user", "assistant", "toolResult", "toolResult"]


def test_context_with_system_changes_one_request_only(tmp_path: Path) -> None:
    class Rewrite:
        __name__ = "rewrite"

        @hookimpl
        def context_with_system(self, event: ContextWithSystemEvent) -> None:
            event.system_prompt = "REWRITTEN " + event.system_prompt[:20]
            event.tools = [t for t in event.tools if t.name != "bash"]
            event.messages.append(UserMessage(content="one-off note"))

    faux = FauxProvider(seed=1)
    faux.enqueue("first", "second")

    async def scenario() -> Any:
        session = await session_with(faux, tmp_path, Rewrite())
        await session.prompt("one")
        await session.prompt("two")
        return session

    session = run(scenario())
    for request in faux.requests:
        assert request.context.system_prompt.startswith("REWRITTEN ")
        assert "bash" not in [t.name for t in request.context.tools]
        assert request.context.messages[-1].content == "one-off note"
    assert [m.content[0].text for m in faux.requests[1].context.messages if m.role == "user"
            and not isinstance(m.content, str)] == ["one", "two"]
    stored = [m for m in session.messages if m.role == "user"]
    assert len(stored) == 2 and all(not isinstance(m.content, str) for m in stored)
    assert "bash" in session.active_tool_names()

def test_a_handler_that_reads_no_messages_gets_no_copy_of_them(tmp_path: Path) -> None:
    """``context`` / ``context_with_system`` handlers get a deep copy of the conversation only when they
    read it: one that only rewrites tools (codemode does, before every request) costs no copy, and the
    provider receives the conversation's own message objects (which its turn reuse depends on)."""
    seen: list[Any] = []

    class ToolsOnly:
        __name__ = "tools_only"

        @hookimpl
        def context(self, event: Any) -> None:
            seen.append(event.model)

        @hookimpl
        def context_with_system(self, event: ContextWithSystemEvent) -> None:
            event.tools = [t for t in event.tools if t.name != "bash"]

    class Reader:
        __name__ = "reader"

        @hookimpl
        def context_with_system(self, event: ContextWithSystemEvent) -> None:
            event.messages[-1].content = "changed in the copy"

    for plugins, copied in (([ToolsOnly()], False), ([ToolsOnly(), Reader()], True)):
        faux = FauxProvider(seed=1)
        faux.enqueue("first", "second")

        async def scenario() -> Any:
            session = await session_with(faux, tmp_path, *plugins)
            await session.prompt("one")
            await session.prompt("two")
            return session

        session = run(scenario())
        sent = faux.requests[1].context.messages
        assert "bash" not in [t.name for t in faux.requests[1].context.tools]
        assert [m.role for m in sent] == ["user", "assistant", "user"]
        history = [m for m in session.messages if m.role in ("user", "assistant")]
        assert any(a is b for a, b in zip(sent, history)) is not copied
        assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
        assert all(m.content != "changed in the copy" for m in history)
        if copied:
            assert sent[-1].content == "changed in the copy"
    assert len(seen) == 4


def test_abort_kills_a_running_sleep_within_a_second(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    marker = tmp_path / "started"
    faux.enqueue([faux_tool_call("bash", {"command": f"touch {marker}; sleep 300.4321"})], "never reached")

    async def scenario() -> tuple[Any, float]:
        session = await session_with(faux, tmp_path)
        task = asyncio.create_task(session.prompt("sleep"))
        while not marker.exists():
            await asyncio.sleep(0.02)
        start = time.monotonic()
        await session.abort()
        await task
        return session, time.monotonic() - start

    session, elapsed = run(scenario())
    assert elapsed < 60  # long before the 300 s sleep would end
    result = next(m for m in session.messages if m.role == "toolResult")
    assert result.is_error and "abort" in result.content[0].text.lower()
    assert not [p for p in Path("/proc").glob("[0-9]*") if b"300.4321" in _cmdline(p)]  # nothing left behind
    assert len(faux.requests) == 1  # no model request after the abort


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_abort_mid_stream_keeps_the_partial_answer(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1, delta_delay=0.05)
    faux.enqueue(FauxTurn([faux_text("a long answer " * 40)]))

    async def scenario() -> Any:
        session = await session_with(faux, tmp_path)
        deltas: list[Any] = []
        session.subscribe(lambda e: deltas.append(e) if e.type == "message_update" else None)
        task = asyncio.create_task(session.prompt("talk"))
        while len(deltas) < 3:
            await asyncio.sleep(0.01)
        await session.abort()
        await task
        return session

    session = run(scenario())
    last = session.messages[-1]
    assert last.stop_reason == "aborted" and 0 < len(last.text()) < len("a long answer " * 40)


def test_abort_during_a_retry_delay_returns_at_once(tmp_path: Path) -> None:
    from pi_core.ai.faux import faux_error

    faux = FauxProvider(seed=1)
    faux.enqueue(faux_error("503: overloaded", status=503), "never needed")

    async def scenario() -> tuple[Any, list[Any], float]:
        session = await session_with(faux, tmp_path)
        session.retry.base_delay_ms = 300_000
        events: list[Any] = []
        session.subscribe(events.append)
        task = asyncio.create_task(session.prompt("hi"))
        while not any(e.type == "auto_retry_start" for e in events):
            await asyncio.sleep(0.01)
        start = time.monotonic()
        await session.abort()
        await task
        return session, events, time.monotonic() - start

    session, events, elapsed = run(scenario())
    assert elapsed < 60 and len(faux.requests) == 1  # not the 300 s delay
    end = next(e for e in events if e.type == "auto_retry_end")
    assert end.success is False
    assert events[-1].type == "agent_settled" and events[-1].aborted is True
    assert session.abort_retry() is False  # nothing pending any more
