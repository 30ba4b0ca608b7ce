"""The faux provider: scripted turns, streaming shape, errors, abort, and the built-in echo model."""

from __future__ import annotations

import asyncio
import json

import pytest
from ai_helpers import consume, run, types_of

from pi_core.ai import (
    AbortController,
    AssistantMessage,
    Context,
    FauxProvider,
    FauxTurn,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete,
    faux_error,
    faux_text,
    faux_thinking,
    faux_tool_call,
    stream,
)

CTX = Context(system_prompt="be brief", messages=[UserMessage(content="hello")])


def test_text_turn_is_streamed_in_small_pieces_and_ends_done() -> None:
    faux = FauxProvider(seed=7)
    text = "The quick brown fox jumps over the lazy dog, twice over and then once more."
    faux.enqueue(text)
    message, events = run(consume(stream(faux.model, CTX), faux.model))
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) >= 4 and all(1 <= len(d) <= 20 for d in deltas)
    assert "".join(deltas) == text
    assert types_of(events)[:2] == ["start", "text_start"] and types_of(events)[-2:] == ["text_end", "done"]
    assert message.text() == text and message.stop_reason == "stop"
    assert message.api == faux.api and message.provider == "faux-script" and message.model == "faux-1"
    assert message.usage.input > 0 and message.usage.output == -(-len(text) // 4)


def test_thinking_and_tool_calls_stop_with_tool_use() -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue([faux_thinking("Look at the file first."), faux_tool_call("read", {"path": "a.py"}),
                  faux_tool_call("bash", {"command": "ls -la"}, id="call_2")])
    message, events = run(consume(stream(faux.model, CTX)))
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == ["thinking", "toolCall", "toolCall"]
    first, second = message.tool_calls()
    assert first.id.startswith("faux_call_") and first.arguments == {"path": "a.py"}
    assert second.id == "call_2" and second.arguments == {"command": "ls -la"}
    fragments = "".join(e.delta for e in events if e.type == "toolcall_delta" and e.content_index == 2)
    assert json.loads(fragments) == {"command": "ls -la"}
    start = next(e for e in events if e.type == "toolcall_start")
    assert start.to_json() == {"type": "toolcall_start", "contentIndex": 1, "id": first.id, "toolName": "read"}


def test_error_turn_keeps_streamed_content_and_status() -> None:
    faux = FauxProvider()
    faux.enqueue(faux_error("503: overloaded", status=503, after=["partial answer"]))
    s = stream(faux.model, CTX)
    message, events = run(consume(s))
    assert message.stop_reason == "error" and message.error_message == "503: overloaded"
    assert message.text() == "partial answer"
    assert events[-1].status == 503 and events[-1].error is message


def test_empty_queue_is_an_error_not_an_exception() -> None:
    faux = FauxProvider()
    message = run(complete(faux.model, CTX))
    assert message.stop_reason == "error"
    assert message.error_message == "No more faux responses queued"


def test_callable_turn_sees_the_request_and_requests_are_recorded() -> None:
    faux = FauxProvider()

    async def answer(context: Context, options: object) -> str:
        return f"you said {context.messages[-1].content}"

    faux.enqueue(answer, FauxTurn([faux_text("second")], stop_reason="length"))
    first = run(complete(faux.model, CTX))
    second = run(complete(faux.model, CTX, max_tokens=12))
    assert first.text() == "you said hello"
    assert second.stop_reason == "length"
    assert [r.context.system_prompt for r in faux.requests] == ["be brief", "be brief"]
    assert faux.requests[1].options.max_tokens == 12


def test_assistant_message_as_script_replays_its_blocks() -> None:
    faux = FauxProvider()
    scripted = AssistantMessage(content=[TextContent(text="ok"), ToolCall(id="t1", name="ls", arguments={})],
                                stop_reason="toolUse")
    faux.enqueue(scripted)
    message = run(complete(faux.model, CTX))
    assert message.stop_reason == "toolUse" and message.tool_calls()[0].id == "t1"


def test_abort_mid_stream_yields_aborted_message_with_what_arrived() -> None:
    faux = FauxProvider(delta_delay=0.02)
    faux.enqueue("word " * 200)

    async def scenario() -> tuple[AssistantMessage, list]:
        controller = AbortController()
        s = stream(faux.model, CTX, signal=controller.signal)
        seen = []
        async for event in s:
            seen.append(event)
            if sum(1 for e in seen if e.type == "text_delta") == 3:
                controller.abort()
        return await s.result(), seen

    message, events = run(scenario())
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert 0 < len(message.text()) < len("word " * 200)
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert not any(e.type == "text_end" for e in events)


def test_already_aborted_signal_gives_empty_aborted_message() -> None:
    faux = FauxProvider()
    faux.enqueue("never sent")
    controller = AbortController()
    controller.abort()
    message, events = run(consume(stream(faux.model, CTX, signal=controller.signal)))
    assert message.stop_reason == "aborted" and message.content == []
    assert types_of(events) == ["error"]
    assert faux.pending == 1


def test_aclose_stops_the_producer() -> None:
    faux = FauxProvider(delta_delay=0.05)
    faux.enqueue("a" * 400)

    async def scenario() -> AssistantMessage:
        s = stream(faux.model, CTX)
        await asyncio.sleep(0.1)
        await s.aclose()
        return await s.result()

    message = run(scenario())
    assert message.stop_reason == "aborted"


def test_leaving_async_with_early_stops_the_request() -> None:
    faux = FauxProvider(delta_delay=0.01)
    faux.enqueue("x" * 4000)

    async def scenario() -> tuple[AssistantMessage, bool]:
        async with stream(faux.model, CTX) as s:
            async for event in s:
                if event.type == "text_delta":
                    break
        return await s.result(), s.task.done()

    message, finished = run(scenario())
    assert message.stop_reason == "aborted" and finished


def test_unknown_api_is_an_error_event() -> None:
    model = FauxProvider().model.model_copy(update={"api": "no-such-api"})
    message = run(complete(model, CTX))
    assert message.stop_reason == "error"
    assert message.error_message == "No API provider registered for api: no-such-api"


def test_faux_provider_is_a_plugin_object() -> None:
    faux = FauxProvider("scripted", "m1")
    items: list = []
    faux.register_providers(lambda item, replaces=None: items.append(item))
    api, provider = items
    assert api.api == faux.api and hasattr(api, "stream")
    assert provider.name == "scripted" and [m.id for m in provider.load_models()] == ["m1"]
    registry = faux.registry()
    assert registry.get_model("scripted", "m1") == faux.model
    faux.enqueue("via registry")
    assert run(complete(faux.model, CTX, registry=registry)).text() == "via registry"


def test_a_scripted_faux_provider_replaces_the_builtin_one_in_a_plugin_host(agent_dir) -> None:
    from pi_core import build_plugin_host

    scripted = FauxProvider("faux", "faux-1")
    host = build_plugin_host(agent_dir, agent_dir=agent_dir, plugins=[scripted], autoload=False,
                             discover_extensions=False)
    providers = {p.name: p for p in host.providers}
    assert [m.id for m in providers["faux"].load_models()] == ["faux-1"]
    assert any(r.name == "faux" for r in host.replacements())


# --- the built-in echo model -----------------------------------------------------------------


@pytest.fixture
def echo():
    from plugins.providers import faux as plugin

    return plugin.ECHO


def test_echo_answers_with_the_prompt(echo) -> None:
    message = run(complete(echo, Context(messages=[UserMessage(content="ping 123")])))
    assert message.text() == "ping 123" and message.stop_reason == "stop"


def test_echo_makes_the_tool_calls_named_by_a_json_prompt_then_summarises(echo) -> None:
    prompt = json.dumps({"text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "x.txt"}},
                                                           {"name": "bash", "arguments": {"command": "false"}}]})
    first = run(complete(echo, Context(messages=[UserMessage(content=prompt)])))
    assert first.stop_reason == "toolUse" and first.text() == "Reading."
    calls = first.tool_calls()
    assert [(c.name, c.arguments) for c in calls] == [("read", {"path": "x.txt"}), ("bash", {"command": "false"})]
    results = [ToolResultMessage(tool_call_id=calls[0].id, tool_name="read", content=[TextContent(text="hello\n")]),
               ToolResultMessage(tool_call_id=calls[1].id, tool_name="bash", is_error=True,
                                 content=[TextContent(text="exit 1")])]
    second = run(complete(echo, Context(messages=[UserMessage(content=prompt), first, *results])))
    assert second.stop_reason == "stop"
    assert second.text() == "Results of 2 tool calls:\n- read (ok): hello\n- bash (error): exit 1"


def test_echo_plugin_registers_provider_faux_with_model_echo() -> None:
    from plugins.providers import faux as plugin

    items: list = []
    plugin.register_providers(lambda item, replaces=None: items.append(item))
    providers = [i for i in items if not hasattr(i, "stream")]
    assert [(p.name, [m.id for m in p.load_models()]) for p in providers] == [("faux", ["echo"])]
