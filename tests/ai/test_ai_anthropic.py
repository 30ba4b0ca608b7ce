"""anthropic-messages over a local fake server: requests as pi 1.6 sends them, streams, errors, abort."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_core.testing import FakeProviderServer, Reply, json_reply
from ai_helpers import consume, every_split, run, types_of
from pi_core.testing import anthropic_chunks

from pi_core.ai import (
    AbortController,
    ApiProvider,
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    ModelRegistry,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDeclaration,
    ToolResultMessage,
    UserMessage,
    stream,
)
from plugins.providers.anthropic import API, build_payload, stream_anthropic

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "anthropic"
REGISTRY = ModelRegistry([ApiProvider(API, stream_anthropic)], load_files=False)
READ = ToolDeclaration(name="read", description="Read a file",
                       parameters={"type": "object", "required": ["path"], "additionalProperties": False,
                                   "properties": {"path": {"type": "string", "description": "file"}}})
BASH = ToolDeclaration(name="bash", description="Run a command",
                       parameters={"type": "object", "required": ["command"],
                                   "properties": {"command": {"type": "string"}}})
CTX = Context(system_prompt="<system prompt>", messages=[UserMessage(content=[TextContent(text="hi")])],
              tools=[READ, BASH])


def model(url: str = "http://127.0.0.1:9", **changes: Any) -> Model:
    """The recordings' ``fake-claude`` (reasoning switched on, as for ``--thinking low``)."""
    base = Model(id="fake-claude", name="Fake Claude", api=API, provider="fakeanthropic", base_url=url,
                 reasoning=True, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
                 context_window=200_000, max_tokens=8192)
    return base.model_copy(update=changes)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def serve(replies: list[Any], m: Model | None = None, context: Context = CTX, **options: Any):
    async with FakeProviderServer(replies) as server:
        target = (m or model()).model_copy(update={"base_url": server.url})
        options.setdefault("api_key", "fake-anthropic-key")
        message, events = await consume(stream(target, context, registry=REGISTRY, **options), target)
        return message, events, server


# --- requests as pi 1.6.0 sent them (pi-1.6-observed §3.5, h_anthropic) ---------------------------------

def tool_turn_history() -> Context:
    """user → assistant (signed thinking, text, tool_use) → tool result, as in h_anthropic's 2nd request."""
    assistant = AssistantMessage(content=[ThinkingContent(thinking="Check the file.", thinking_signature="fakesig0001"),
                                          TextContent(text="Reading it."),
                                          ToolCall(id="toolu_fake_1_0", name="read", arguments={"path": "a.txt"})],
                                 api=API, provider="fakeanthropic", model="fake-claude", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="toolu_fake_1_0", tool_name="read", content=[TextContent(text="alpha")])
    return CTX.model_copy(update={"messages": [*CTX.messages, assistant, result]})


def test_request_matches_pi_with_thinking_low() -> None:
    reply = Reply(chunks=[fixture("text.sse")])
    _, _, server = run(serve([reply], context=tool_turn_history(), reasoning="low"))
    request = server.requests[0]
    assert request.method == "POST" and request.path == "/v1/messages?beta=true"
    headers = request.headers
    assert headers["x-api-key"] == "fake-anthropic-key" and headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"
    body = request.body
    assert list(body) == ["model", "messages", "max_tokens", "stream", "system", "tools", "thinking"]
    assert body["max_tokens"] == 8192 and body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "<system prompt>", "cache_control": {"type": "ephemeral"}}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}
    assert body["tools"][0] == {"name": "read", "description": "Read a file", "eager_input_streaming": True,
                                "input_schema": {"type": "object", "properties": {"path": {"type": "string",
                                                                                         "description": "file"}},
                                                 "required": ["path"], "additionalProperties": False}}
    assert list(body["tools"][1]) == ["name", "description", "eager_input_streaming", "input_schema", "cache_control"]
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert assistant == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Check the file.", "signature": "fakesig0001"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_fake_1_0", "name": "read", "input": {"path": "a.txt"}}]}
    assert results == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_fake_1_0",
                                                     "content": "alpha", "is_error": False,
                                                     "cache_control": {"type": "ephemeral"}}]}


def test_thinking_off_on_a_reasoning_model_disables_it_and_allows_temperature() -> None:
    payload, betas = build_payload(model(), CTX, StreamOptions(temperature=0.2))
    assert payload["thinking"] == {"type": "disabled"} and payload["temperature"] == 0.2 and betas == []
    plain, _ = build_payload(model(reasoning=False), CTX, StreamOptions(reasoning="high"))
    assert "thinking" not in plain


def test_adaptive_thinking_models_get_an_effort() -> None:
    adaptive = model(compat={"forceAdaptiveThinking": True}, thinking_level_map={"xhigh": "xhigh", "max": "max"})
    payload, betas = build_payload(adaptive, CTX, StreamOptions(reasoning="medium"))
    assert payload["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert payload["output_config"] == {"effort": "medium"} and betas == []
    assert build_payload(adaptive, CTX, StreamOptions(reasoning="xhigh"))[0]["output_config"] == {"effort": "xhigh"}


def test_thinking_budget_per_level_and_custom_budgets() -> None:
    big = model(max_tokens=64_000)
    for level, budget in (("minimal", 1024), ("low", 2048), ("medium", 8192), ("high", 16384), ("xhigh", 16384)):
        assert build_payload(big, CTX, StreamOptions(reasoning=level))[0]["thinking"]["budget_tokens"] == budget
    custom = build_payload(big, CTX, StreamOptions(reasoning="low", thinking_budgets={"low": 3000}))[0]
    assert custom["thinking"]["budget_tokens"] == 3000


def test_cache_retention_none_and_long() -> None:
    none, _ = build_payload(model(), CTX, StreamOptions(cache_retention="none"))
    assert "cache_control" not in none["system"][0] and "cache_control" not in none["tools"][-1]
    long, _ = build_payload(model(), CTX, StreamOptions(cache_retention="long"))
    assert long["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_unsigned_thinking_and_redacted_thinking_replay() -> None:
    aborted_thinking = AssistantMessage(content=[ThinkingContent(thinking="half a thought"), TextContent(text="ok")],
                                        api=API, provider="fakeanthropic", model="fake-claude", stop_reason="stop")
    redacted = AssistantMessage(content=[ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque",
                                                         redacted=True), TextContent(text="fine")],
                                api=API, provider="fakeanthropic", model="fake-claude", stop_reason="stop")
    context = Context(messages=[UserMessage(content="a"), aborted_thinking, UserMessage(content="b"), redacted,
                                UserMessage(content="c")])
    payload, _ = build_payload(model(), context, StreamOptions())
    assert payload["messages"][1]["content"][0] == {"type": "text", "text": "half a thought"}
    assert payload["messages"][3]["content"][0] == {"type": "redacted_thinking", "data": "opaque"}
    assert payload["messages"][4]["content"] == [{"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}}]


def test_foreign_tool_call_ids_are_sanitised_and_results_merged() -> None:
    foreign = AssistantMessage(content=[ToolCall(id="call_1|fc_abc.def", name="read", arguments={}),
                                        ToolCall(id="call_2|fc_x", name="bash", arguments={"command": "ls"})],
                               api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse")
    results = [ToolResultMessage(tool_call_id="call_1|fc_abc.def", tool_name="read", content=[TextContent(text="x")]),
               ToolResultMessage(tool_call_id="call_2|fc_x", tool_name="bash", is_error=True,
                                 content=[TextContent(text="boom")])]
    payload, _ = build_payload(model(), Context(messages=[UserMessage(content="go"), foreign, *results]),
                               StreamOptions())
    ids = [b["id"] for b in payload["messages"][1]["content"]]
    assert ids == ["call_1_fc_abc_def", "call_2_fc_x"]
    blocks = payload["messages"][2]["content"]
    assert [b["tool_use_id"] for b in blocks] == ids and blocks[1]["is_error"] is True


# --- streams --------------------------------------------------------------------------------------------

def test_text_stream_with_ping() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("text.sse")])]))
    assert message.text() == "Hello there!" and message.stop_reason == "stop" and message.raw_stop_reason == "end_turn"
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert message.response_id == "msg_4QpJur2dWWDjF6C758FbBw5vm"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (11, 6, 17)
    assert message.usage.reasoning is None  # Anthropic reports no reasoning count unless thinking_tokens comes


def test_two_tool_calls_and_cache_usage() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("two_tools.sse")])]))
    assert message.stop_reason == "toolUse"
    assert [(c.id, c.arguments) for c in message.tool_calls()] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", {"location": "Paris, France"}),
        ("toolu_01D7FLrfh4GYq7yT1ULFeyMV", {"location": "London, UK"})]
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (472, 89, 1024, 64)
    assert usage.cost.cache_write == 3.75 / 1e6 * 64
    assert [e.delta for e in events if e.type == "toolcall_delta"][0] == ""


def test_thinking_signature_is_captured_silently() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("thinking.sse")])]))
    thinking = message.content[0]
    assert thinking.thinking == "The person is asking for a two-word greeting. Hello there works."
    assert thinking.thinking_signature.startswith("EuYBCkQYAiJA")
    assert message.usage.reasoning == 71 and message.usage.output == 94
    assert types_of(events)[:3] == ["start", "thinking_start", "thinking_delta"]


def test_redacted_thinking() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("redacted.sse")])]))
    block = message.content[0]
    assert block.redacted is True and block.thinking == "[Reasoning redacted]"
    assert block.thinking_signature.startswith("EmwKAhgB")


def test_error_event_mid_stream() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("error_midstream.sse")])]))
    assert message.stop_reason == "error"
    assert message.error_message == '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert message.text() == "Partial answer" and message.usage.input == 30
    assert "text_end" not in types_of(events)


def test_max_tokens_inside_tool_arguments_closes_the_block() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("max_tokens.sse")])]))
    assert message.stop_reason == "length"
    assert message.tool_calls()[0].arguments == {"path": "a.txt", "content": "abc"}
    assert types_of(events)[-2:] == ["toolcall_end", "done"]


def test_refusal_is_an_error_with_the_explanation() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("refusal.sse")])]))
    assert message.stop_reason == "error" and message.error_message == "This request would facilitate harm."


def test_http_error_body_is_the_sdk_message() -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error",
                                       "message": "prompt is too long: 213462 tokens > 200000 maximum"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    message, events, _ = run(serve([json_reply(400, body)]))
    assert message.error_message == ('400 {"type":"error","error":{"type":"invalid_request_error","message":'
                                     '"prompt is too long: 213462 tokens > 200000 maximum"},'
                                     '"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}')
    assert types_of(events) == ["error"]


def test_overloaded_529() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    message, events, _ = run(serve([json_reply(529, body)]))
    assert message.error_message.startswith("529 {") and events[-1].status == 529


def test_connection_cut_before_message_stop() -> None:
    chunks = [c + b"\n\n" for c in fixture("two_tools.sse").split(b"\n\n") if c]
    message, _, _ = run(serve([Reply(chunks=chunks, cut_after=8)]))
    assert message.stop_reason == "error" and message.error_message.startswith("Connection error")
    assert message.text() == "I'll check the weather in both cities."


def test_stream_without_message_stop_is_an_error() -> None:
    data = fixture("text.sse")
    data = data[:data.index(b"event: message_stop")]
    message, _, _ = run(serve([Reply(chunks=[data])]))
    assert message.error_message == "Anthropic stream ended before message_stop"


def test_abort_mid_stream() -> None:
    turn = {"text": "word " * 100, "chunk_size": 5}

    async def scenario() -> tuple[AssistantMessage, Any]:
        controller = AbortController()
        async with FakeProviderServer([lambda req: Reply(chunks=anthropic_chunks(turn, req.body, 1), chunk_delay=0.02)]) as server:
            s = stream(model(server.url), CTX, registry=REGISTRY, api_key="k", signal=controller.signal)
            count = 0
            async for event in s:
                count += event.type == "text_delta"
                if count == 3:
                    controller.abort()
            await asyncio.sleep(0.1)
            return await s.result(), server

    message, server = run(scenario())
    assert message.stop_reason == "aborted" and message.text() == "word " * 3
    assert message.usage.input > 0  # message_start had already reported the prompt size
    assert server.disconnects == 1


def test_every_chunk_boundary_gives_the_same_result() -> None:
    turn = {"thinking": "Plan: read — then answer.", "text": "Reading.",
            "tool_calls": [{"id": "toolu_1", "name": "read", "arguments": {"path": "a.py"}}]}
    data = b"".join(anthropic_chunks(turn, {"model": "fake-claude"}, 1))
    assert run(every_split(model(), CTX, data, REGISTRY), timeout=120) == len(data) - 1


def test_missing_api_key() -> None:
    async def scenario() -> AssistantMessage:
        return (await consume(stream(model(), CTX, registry=REGISTRY)))[0]

    # the message names the fix (auth.json; env vars when the provider has them)
    text = run(scenario()).error_message
    assert text.startswith("No API key for provider: fakeanthropic. To fix it: ") and "auth.json" in text


@pytest.mark.parametrize("header", [{"anthropic-beta": "custom-beta"}, {"X-Extra": "1"}])
def test_model_and_option_headers_are_sent(header: dict[str, str]) -> None:
    _, _, server = run(serve([Reply(chunks=[fixture("text.sse")])], model(headers={"x-model": "m"}), headers=header))
    sent = server.requests[0].headers
    assert sent["x-model"] == "m" and all(sent[k.lower()] == v for k, v in header.items())


# --- the plain text-delta fast path ---------------------------------------------------------------------

def _delta(**fields: Any) -> str:
    return json.dumps({"type": "content_block_delta", **fields})


_ODD_EVENTS = [
    ("content_block_start", json.dumps({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
    ("content_block_start", json.dumps({"type": "content_block_start", "index": 1,
                                        "content_block": {"type": "thinking", "thinking": ""}})),
    ("content_block_delta", _delta(index=0, delta={"type": "text_delta", "text": "plain"})),
    ("content_block_delta", _delta(index=0, delta={"type": "text_delta", "text": "with extras"}, extra={"x": [1]})),
    ("content_block_delta", _delta(delta={"type": "text_delta", "text": "no index"})),
    ("content_block_delta", _delta(index=7, delta={"type": "text_delta", "text": "unknown block"})),
    ("content_block_delta", _delta(index=0, delta={"type": "text_delta"})),
    ("content_block_delta", _delta(index=0, delta={"type": "text_delta", "text": None})),
    ("content_block_delta", _delta(index=0, delta={"type": "text_delta", "text": 5})),
    ("content_block_delta", _delta(index=True, delta={"type": "text_delta", "text": "bool index"})),
    ("content_block_delta", _delta(index="0", delta={"type": "text_delta", "text": "string index"})),
    ("content_block_delta", _delta(index=0, delta=None)),
    ("content_block_delta", _delta(index=0, delta="text")),
    ("content_block_delta", _delta(index=0, delta={})),
    ("content_block_delta", _delta(index=1, delta={"type": "thinking_delta", "thinking": "hmm"})),
    ("content_block_delta", _delta(index=1, delta={"type": "signature_delta", "signature": "sig"})),
    ("content_block_delta", json.dumps({"type": "ping"})),
    ("content_block_delta", json.dumps([1, 2])),
    ("content_block_delta", '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a\tb"}}'),
    ("content_block_stop", json.dumps({"type": "content_block_stop", "index": 0})),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # odd values serialize with pydantic's warning
@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(range(len(_ODD_EVENTS))), max_size=10))
def test_the_plain_delta_path_gives_what_the_general_path_gives(picks: list[int]) -> None:
    # Without an observer, content_block_delta events of the common shape are read by a typed decoder; with one,
    # every event is a dict through _Parser.event. Both must build the same message from any mix of events.
    start = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3, "output_tokens": 1}}}
    events = [("message_start", json.dumps(start)), *(_ODD_EVENTS[i] for i in picks),
              ("message_delta", json.dumps({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                            "usage": {"output_tokens": 9}})),
              ("message_stop", json.dumps({"type": "message_stop"}))]
    data = "".join(f"event: {name}\ndata: {body}\n\n" for name, body in events).encode()

    async def both() -> tuple[Any, Any, list[Any]]:
        from ai_helpers import EventRecorder, comparable, stream_chunks

        plain, plain_events = await stream_chunks(model(), CTX, [data], REGISTRY)
        observer = EventRecorder()
        general, general_events = await stream_chunks(model(), CTX, [data], REGISTRY, observer=observer)
        return ((comparable(plain), [e.type for e in plain_events]),
                (comparable(general), [e.type for e in general_events]), observer.events)

    plain, general, seen = run(both())
    assert plain == general
    assert seen and seen[0]["type"] == "message_start"  # the general path did run, event by event
