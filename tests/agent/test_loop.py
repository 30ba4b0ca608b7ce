"""The agent loop against a scripted model: order of events, tools, gating, queues, abort."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from scripted import MODEL, Script, calls, text

from pi_core import (
    AfterToolCallEvent,
    BeforeToolCallEvent,
    Block,
    TextContent,
    Tool,
    ToolCapabilities,
    ToolError,
    ToolResult,
    UserMessage,
)
from pi_core.agent.agent import Agent, AgentBusyError
from pi_core.agent.loop import LoopConfig

SCHEMA = {"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}}}


def make_tool(name: str, *, safe: bool = False, delay: float = 0.0, log: list[str] | None = None,
              fail: bool = False) -> Tool:
    async def execute(params: dict[str, Any], ctx: Any) -> ToolResult:
        (log if log is not None else []).append(f"start {name}")
        await asyncio.sleep(delay)
        (log if log is not None else []).append(f"end {name}")
        if fail:
            raise ToolError(f"{name} failed", details={"why": "asked to"})
        return ToolResult.text(f"{name}:{params['n']!r}")

    return Tool(name=name, description=name, parameters=SCHEMA, execute=execute,
                capabilities=ToolCapabilities(concurrency_safe=safe))


def agent_for(script: Script, tools: list[Tool], **config: Any) -> tuple[Agent, list[Any]]:
    agent = Agent(LoopConfig(model=MODEL, stream=script, system_prompt="sys", tools=tools, **config))
    events: list[Any] = []
    agent.subscribe(events.append)
    return agent, events


def kinds(events: list[Any]) -> list[str]:
    out = []
    for e in events:
        label = e.type
        if hasattr(e, "message") and e.type in ("message_start", "message_end"):
            label += f":{e.message.role}"
        if e.type.startswith("tool_execution"):
            label += f":{e.tool_name}"
        out.append(label)
    return out


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_text_only_event_order_and_transcript() -> None:
    agent, events = agent_for(Script([text("hello")]), [])
    added = run(agent.prompt([UserMessage(content="hi")]))
    assert kinds(events) == ["agent_start", "turn_start", "message_start:user", "message_end:user",
                             "message_start:assistant", "message_update", "message_end:assistant",
                             "turn_end", "agent_end"]
    assert [m.role for m in added] == ["user", "assistant"] and added[1].text() == "hello"
    assert agent.messages == added and not agent.is_streaming


def test_tool_round_trip_with_coercion_and_results_in_call_order() -> None:
    log: list[str] = []
    slow, fast = make_tool("slow", safe=True, delay=0.2, log=log), make_tool("fast", safe=True, log=log)
    script = Script([calls(("slow", {"n": "1"}), ("fast", {"n": 2})), text("done")])
    agent, events = agent_for(script, [slow, fast])
    run(agent.prompt([UserMessage(content="go")]))
    assert log[:2] == ["start slow", "start fast"]  # concurrency-safe calls overlap
    ends = [e.tool_name for e in events if e.type == "tool_execution_end"]
    assert ends == ["fast", "slow"]  # completion order
    results = [m for m in agent.messages if m.role == "toolResult"]
    assert [m.tool_name for m in results] == ["slow", "fast"]  # the model's order
    assert results[0].content[0].text == "slow:1"  # "1" was coerced to a number
    second_request = script.contexts[1]
    assert [m.role for m in second_request.messages] == ["user", "assistant", "toolResult", "toolResult"]
    assert script.contexts[0].system_prompt == "sys" and [t.name for t in script.contexts[0].tools] == ["slow", "fast"]
    first_turn = kinds(events)[kinds(events).index("message_end:assistant") + 1: kinds(events).index("turn_end")]
    assert first_turn == ["tool_execution_start:slow", "tool_execution_start:fast", "tool_execution_end:fast",
                          "tool_execution_end:slow", "message_start:toolResult", "message_end:toolResult",
                          "message_start:toolResult", "message_end:toolResult"]


def test_unsafe_tools_run_one_at_a_time() -> None:
    log: list[str] = []
    tool = make_tool("write", delay=0.05, log=log)
    agent, _ = agent_for(Script([calls(("write", {"n": 1}), ("write", {"n": 2})), text("ok")]), [tool])
    run(agent.prompt([UserMessage(content="go")]))
    assert log == ["start write", "end write", "start write", "end write"]


def test_invalid_arguments_and_unknown_tool_become_error_results() -> None:
    script = Script([calls(("t", {"m": 1}), ("nope", {"x": 1}), ("t", {"n": "abc"})), text("sorry")])
    agent, _ = agent_for(script, [make_tool("t")])
    run(agent.prompt([UserMessage(content="go")]))
    invalid, unknown, wrong_type = [m for m in agent.messages if m.role == "toolResult"]
    assert invalid.is_error and invalid.content[0].text.startswith('Validation failed for tool "t":\n  - n: missing')
    assert '"m": 1' in invalid.content[0].text
    assert unknown.is_error and unknown.content[0].text == "Tool nope not found"
    assert wrong_type.is_error and "n: expected number, got string" in wrong_type.content[0].text
    assert agent.messages[-1].text() == "sorry"  # the model saw the errors and continued


def test_tool_exception_becomes_an_error_result_with_details() -> None:
    agent, events = agent_for(Script([calls(("t", {"n": 1})), text("ok")]), [make_tool("t", fail=True)])
    run(agent.prompt([UserMessage(content="go")]))
    result = next(m for m in agent.messages if m.role == "toolResult")
    assert result.is_error and result.content[0].text == "t failed" and result.details == {"why": "asked to"}
    end = next(e for e in events if e.type == "tool_execution_end")
    assert end.is_error and end.duration_ms is not None


def test_before_tool_call_blocks_and_rewrites() -> None:
    async def gate(event: BeforeToolCallEvent) -> BeforeToolCallEvent:
        if event.arguments["n"] == 13:
            event.blocked = Block("unlucky")
        else:
            event.arguments = {"n": event.arguments["n"] * 10}
        return event

    script = Script([calls(("t", {"n": 13}), ("t", {"n": 2})), text("ok")])
    agent, _ = agent_for(script, [make_tool("t")], before_tool_call=gate)
    run(agent.prompt([UserMessage(content="go")]))
    blocked, rewritten = [m for m in agent.messages if m.role == "toolResult"]
    assert blocked.is_error and blocked.content[0].text == "unlucky"
    assert rewritten.content[0].text == "t:20"


def test_after_tool_call_patches_the_result() -> None:
    async def patch(event: AfterToolCallEvent) -> AfterToolCallEvent:
        event.content = [TextContent(text="patched")]
        event.is_error = True
        return event

    agent, _ = agent_for(Script([calls(("t", {"n": 1})), text("ok")]), [make_tool("t")], after_tool_call=patch)
    run(agent.prompt([UserMessage(content="go")]))
    result = next(m for m in agent.messages if m.role == "toolResult")
    assert (result.content[0].text, result.is_error) == ("patched", True)


def test_transform_context_changes_the_request_not_the_transcript() -> None:
    async def add_note(messages: list[Any], signal: Any) -> list[Any]:
        return [*messages, UserMessage(content="note")]

    script = Script([text("a")])
    agent, _ = agent_for(script, [], transform_context=add_note)
    run(agent.prompt([UserMessage(content="q")]))
    assert [m.content for m in script.contexts[0].messages] == ["q", "note"]
    assert [m.role for m in agent.messages] == ["user", "assistant"]


def test_steering_arrives_after_the_tool_batch_and_follow_up_after_the_run() -> None:
    script = Script([calls(("t", {"n": 1}), ("t", {"n": 2})), text("first answer"), text("second answer")])
    agent, events = agent_for(script, [make_tool("t", delay=0.05)])

    def on_event(event: Any) -> None:
        if event.type == "tool_execution_start" and event.args == {"n": 1}:
            agent.steer(UserMessage(content="steer: also check X"))
            agent.follow_up(UserMessage(content="then: summarise"))

    agent.subscribe(on_event)
    run(agent.prompt([UserMessage(content="go")]))
    roles = [(m.role, getattr(m, "content", None) if m.role == "user" else None) for m in agent.messages]
    assert [r for r, _ in roles] == ["user", "assistant", "toolResult", "toolResult", "user", "assistant", "user",
                                     "assistant"]
    assert roles[4][1] == "steer: also check X" and roles[6][1] == "then: summarise"
    # the steering message went into the request right after both tool results
    assert [m.role for m in script.contexts[1].messages][-3:] == ["toolResult", "toolResult", "user"]
    assert kinds(events).count("agent_start") == 1 and kinds(events).count("agent_end") == 1


def test_prompt_while_running_is_refused() -> None:
    agent, _ = agent_for(Script([text("x")], delay=0.2), [])

    async def scenario() -> None:
        task = asyncio.create_task(agent.prompt([UserMessage(content="1")]))
        await asyncio.sleep(0.05)
        with pytest.raises(AgentBusyError):
            await agent.prompt([UserMessage(content="2")])
        await task

    run(scenario())


def test_abort_mid_stream() -> None:
    agent, events = agent_for(Script([text("partial")], delay=300), [])

    async def scenario() -> float:
        task = asyncio.create_task(agent.prompt([UserMessage(content="go")]))
        await asyncio.sleep(0.1)
        start = time.monotonic()
        agent.abort()
        await task
        return time.monotonic() - start

    elapsed = run(scenario())
    assert elapsed < 60  # not the 300 s the stream would take
    assert agent.messages[-1].stop_reason == "aborted" and agent.last_run_aborted
    assert kinds(events)[-3:] == ["message_end:assistant", "turn_end", "agent_end"]


def test_abort_mid_tool_cancels_a_tool_that_ignores_the_signal() -> None:
    agent, _ = agent_for(Script([calls(("sleepy", {"n": 30})), text("never")]), [make_tool("sleepy", delay=30)])

    async def scenario() -> float:
        task = asyncio.create_task(agent.prompt([UserMessage(content="go")]))
        await asyncio.sleep(0.2)
        start = time.monotonic()
        agent.abort()
        await task
        return time.monotonic() - start

    assert run(scenario()) < 2.0
    result = next(m for m in agent.messages if m.role == "toolResult")
    assert result.is_error and "aborted" in result.content[0].text.lower()
    assert agent.messages[-1].role == "toolResult"  # no further model request after an abort


def test_length_stop_never_runs_half_written_calls() -> None:
    log: list[str] = []
    script = Script([calls(("t", {"n": 1}), stop="length"), text("retrying properly")])
    agent, _ = agent_for(script, [make_tool("t", log=log)])
    run(agent.prompt([UserMessage(content="go")]))
    assert log == []
    result = next(m for m in agent.messages if m.role == "toolResult")
    assert result.is_error and "output token limit" in result.content[0].text
    assert agent.messages[-1].text() == "retrying properly"


def test_a_crashing_stream_still_ends_the_run_with_an_error_message() -> None:
    async def broken(model: Any, context: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        raise RuntimeError("provider bug")
        yield  # pragma: no cover

    agent, events = agent_for(broken, [])  # type: ignore[arg-type]
    run(agent.prompt([UserMessage(content="go")]))
    assert agent.messages[-1].stop_reason == "error" and "provider bug" in agent.messages[-1].error_message
    assert kinds(events)[-1] == "agent_end" and not agent.is_streaming
