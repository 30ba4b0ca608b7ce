"""openai-responses over a local fake server: reasoning replay, function calls, errors, abort, chunking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_core.testing import FakeProviderServer, Reply, json_reply
from ai_helpers import consume, every_split, run, types_of

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
from plugins.providers.openai_responses import API, build_payload, stream_responses

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "openai_responses"
REGISTRY = ModelRegistry([ApiProvider(API, stream_responses)], load_files=False)
MULTIPLY = ToolDeclaration(name="multiply", description="Multiply two numbers",
                           parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                                       "required": ["a", "b"]})
CTX = Context(system_prompt="Be exact.", messages=[UserMessage(content="What is 1231*2331 and 7*6?")],
              tools=[MULTIPLY])


def model(url: str = "https://api.openai.com/v1", **changes: Any) -> Model:
    base = Model(id="gpt-5", name="GPT-5", api=API, provider="openai", base_url=url, reasoning=True,
                 input=["text", "image"], cost=ModelCost(input=1.25, output=10, cache_read=0.125),
                 context_window=400_000, max_tokens=128_000)
    return base.model_copy(update=changes)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def serve(replies: list[Any], m: Model | None = None, context: Context = CTX, check_cost: bool = True,
                **options: Any):
    async with FakeProviderServer(replies) as server:
        target = (m or model()).model_copy(update={"base_url": server.url + "/v1"})
        options.setdefault("api_key", "sk-test")
        message, events = await consume(stream(target, context, registry=REGISTRY, **options),
                                        target if check_cost else None)
        return message, events, server


def test_text_stream_records_message_id_and_phase() -> None:
    message, events, server = run(serve([Reply(chunks=[fixture("text.sse")])]))
    assert message.text() == "pong" and message.stop_reason == "stop" and message.raw_stop_reason == "completed"
    assert json.loads(message.content[0].text_signature) == {"v": 1, "id": "msg_0a1b2c3d4e5f6789aa",
                                                              "phase": "final_answer"}
    assert message.response_id == "resp_0a1b2c3d4e5f67890123456789abcdef0123456789abcd"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (11, 5, 16)
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    request = server.requests[0]
    assert request.path == "/v1/responses" and request.headers["authorization"] == "Bearer sk-test"
    assert request.body["store"] is False and request.body["stream"] is True


def test_reasoning_and_parallel_function_calls() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("reasoning_tools.sse")])]))
    thinking, first, second = message.content
    assert thinking.thinking == "**Planning the multiplications**\n\nI need both products."
    item = json.loads(thinking.thinking_signature)
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAAAB")
    assert first.id == "call_sVidJ6xUOIbwbC1ZyvRCrAo1|fc_68b1d2c3e4f5a6b7c8d9e0f1bb"
    assert first.arguments == {"a": 1231, "b": 2331} and second.arguments == {"a": 7, "b": 6}
    assert message.stop_reason == "toolUse"
    assert (message.usage.input, message.usage.cache_read, message.usage.reasoning) == (230, 1280, 128)
    deltas = [e.delta for e in events if e.type == "thinking_delta"]
    assert deltas[-1] == "\n\n"  # pi's synthetic separator after a summary part


def test_reasoning_item_and_calls_are_replayed_verbatim() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("reasoning_tools.sse")])]))
    results = [ToolResultMessage(tool_call_id=c.id, tool_name="multiply", content=[TextContent(text=t)])
               for c, t in zip(message.tool_calls(), ("2869461", "42"))]
    # the message came from provider "openai", model "gpt-5", api openai-responses: same model as model()
    history = Context(system_prompt="Be exact.", messages=[*CTX.messages, message, *results], tools=[MULTIPLY])
    payload = build_payload(model(), history, StreamOptions(reasoning="medium", session_id="sess-1"))
    items = payload["input"]
    assert items[0] == {"role": "developer", "content": "Be exact."}
    assert items[2] == json.loads(message.content[0].thinking_signature)
    assert items[3] == {"type": "function_call", "id": "fc_68b1d2c3e4f5a6b7c8d9e0f1bb",
                        "call_id": "call_sVidJ6xUOIbwbC1ZyvRCrAo1", "name": "multiply", "arguments": '{"a":1231,"b":2331}'}
    assert items[5] == {"type": "function_call_output", "call_id": "call_sVidJ6xUOIbwbC1ZyvRCrAo1", "output": "2869461"}
    assert payload["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert payload["include"] == ["reasoning.encrypted_content"] and payload["prompt_cache_key"] == "sess-1"
    assert payload["tools"] == [{"type": "function", "name": "multiply", "description": "Multiply two numbers",
                                 "parameters": MULTIPLY.parameters}]


def test_text_signature_becomes_the_message_item_id() -> None:
    prior = AssistantMessage(content=[TextContent(text="pong", text_signature='{"v":1,"id":"msg_abc","phase":"final_answer"}')],
                             api=API, provider="openai", model="gpt-5", stop_reason="stop")
    items = build_payload(model(), Context(messages=[UserMessage(content="ping"), prior, UserMessage(content="again")]),
                          StreamOptions())["input"]
    assert items[1] == {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "pong", "annotations": []}], "status": "completed", "id": "msg_abc",
        "phase": "final_answer"}


def test_foreign_calls_get_fc_item_ids_and_other_models_drop_them() -> None:
    foreign = AssistantMessage(content=[ToolCall(id="toolu_01abc", name="multiply", arguments={"a": 1, "b": 2})],
                               api="anthropic-messages", provider="anthropic", model="claude", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="toolu_01abc", tool_name="multiply", content=[TextContent(text="2")])
    items = build_payload(model(), Context(messages=[UserMessage(content="x"), foreign, result]), StreamOptions())["input"]
    assert items[1] == {"type": "function_call", "call_id": "toolu_01abc", "name": "multiply", "arguments": '{"a":1,"b":2}'}
    other = AssistantMessage(content=[ToolCall(id="call_1|fc_1", name="multiply", arguments={})],
                             api=API, provider="openai", model="gpt-4.1", stop_reason="toolUse")
    result2 = ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="multiply", content=[])
    items = build_payload(model(), Context(messages=[UserMessage(content="x"), other, result2]), StreamOptions())["input"]
    assert "id" not in items[1] and items[1]["call_id"] == "call_1"
    assert items[2]["output"] == "(no tool output)"


def test_reasoning_off_and_non_reasoning_models() -> None:
    off = build_payload(model(), CTX, StreamOptions())
    assert off["reasoning"] == {"effort": "none"} and "include" not in off
    plain = build_payload(model(reasoning=False), CTX, StreamOptions(reasoning="high"))
    assert "reasoning" not in plain and plain["input"][0]["role"] == "system"
    mapped = build_payload(model(thinking_level_map={"xhigh": "xhigh"}), CTX, StreamOptions(reasoning="xhigh"))
    assert mapped["reasoning"]["effort"] == "xhigh"


def test_error_event_keeps_partial_text() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("error_event.sse")])]))
    assert message.stop_reason == "error"
    assert message.error_message == "Error Code server_error: The server had an error processing your request."
    assert message.text() == "Thinking about"


def test_response_failed() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("failed.sse")])]))
    assert message.error_message == "rate_limit_exceeded: Rate limit reached for gpt-5 on tokens per min (TPM)."


def test_incomplete_max_output_tokens_is_length() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("incomplete.sse")])]))
    assert message.stop_reason == "length" and message.raw_stop_reason == "incomplete.max_output_tokens"
    assert message.text() == "Once upon" and types_of(events)[-2:] == ["text_end", "done"]


def test_stream_without_terminal_event_is_an_error() -> None:
    data = fixture("text.sse")
    message, _, _ = run(serve([Reply(chunks=[data[:data.index(b"event: response.completed")]])]))
    assert message.error_message == "OpenAI Responses stream ended before a terminal response event"


def test_http_error_and_connection_cut() -> None:
    body = {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try "
                                 "again.", "type": "invalid_request_error", "param": "input",
                      "code": "context_length_exceeded"}}
    message, _, _ = run(serve([json_reply(400, body)]))
    assert message.error_message.startswith('400: {"message":"Your input exceeds the context window')
    chunks = [c + b"\n\n" for c in fixture("reasoning_tools.sse").split(b"\n\n") if c]
    cut, _, _ = run(serve([Reply(chunks=chunks, cut_after=5)]))
    assert cut.stop_reason == "error" and cut.error_message.startswith("Connection error")
    assert cut.content[0].thinking.startswith("**Planning")


def test_abort_mid_stream() -> None:
    chunks = [c + b"\n\n" for c in fixture("reasoning_tools.sse").split(b"\n\n") if c]

    async def scenario() -> AssistantMessage:
        controller = AbortController()
        async with FakeProviderServer([Reply(chunks=chunks, chunk_delay=0.03)]) as server:
            s = stream(model(server.url + "/v1"), CTX, registry=REGISTRY, api_key="k", signal=controller.signal)
            async for event in s:
                if event.type == "thinking_delta":
                    controller.abort()
            await asyncio.sleep(0.1)
            assert server.disconnects == 1
            return await s.result()

    message = run(scenario())
    assert message.stop_reason == "aborted" and message.content[0].thinking == "**Planning the"


def test_service_tier_pricing_follows_the_tier_the_response_reports() -> None:
    flex = fixture("text.sse").replace(b'"service_tier":"default"', b'"service_tier":"flex"')
    message, _, server = run(serve([Reply(chunks=[flex])], service_tier="flex", check_cost=False))
    assert server.requests[0].body["service_tier"] == "flex"
    assert message.usage.cost.input == 1.25 / 1e6 * 11 * 0.5
    served_default, _, _ = run(serve([Reply(chunks=[fixture("text.sse")])], service_tier="flex"))
    assert served_default.usage.cost.input == 1.25 / 1e6 * 11


def test_every_chunk_boundary_gives_the_same_result() -> None:
    data = fixture("text.sse")
    assert run(every_split(model(), CTX, data, REGISTRY), timeout=120) == len(data) - 1


def test_thinking_of_another_provider_is_not_sent() -> None:
    other = AssistantMessage(content=[ThinkingContent(thinking="deep thought", thinking_signature="sig"),
                                      TextContent(text="answer")],
                             api="anthropic-messages", provider="anthropic", model="claude", stop_reason="stop")
    items = build_payload(model(), Context(messages=[UserMessage(content="q"), other, UserMessage(content="q2")]),
                          StreamOptions())["input"]
    texts = [i["content"][0]["text"] for i in items if i.get("type") == "message"]
    assert texts == ["answer"]  # pi 1.6 drops another model's thinking


def test_session_affinity_headers_and_prompt_cache_key_modes() -> None:
    """pi's ``sessionAffinityFormat`` (openai: ``session-id`` + ``x-client-request-id``; openai-nosession: only the
    latter; openrouter: ``x-session-id``) while caching is on, and ``promptCacheKeyMode: disabled``."""
    from plugins.providers.openai_responses import request_headers

    def headers(m: Model, **options: Any) -> dict[str, str]:
        return {k: v for k, v in request_headers(m, StreamOptions(api_key="sk-test", **options)).items()
                if k in ("session-id", "x-client-request-id", "x-session-id")}

    assert headers(model(), session_id="sess-1") == {"session-id": "sess-1", "x-client-request-id": "sess-1"}
    assert headers(model(), session_id="sess-1", cache_retention="none") == {}
    assert headers(model()) == {}
    assert headers(model(compat={"sessionAffinityFormat": "openai-nosession"}), session_id="s") == {
        "x-client-request-id": "s"}
    assert headers(model(provider="openrouter", url="https://openrouter.ai/api/v1"), session_id="s") == {
        "x-session-id": "s"}
    disabled = build_payload(model(compat={"promptCacheKeyMode": "disabled"}), CTX, StreamOptions(session_id="s"))
    assert "prompt_cache_key" not in disabled
    assert build_payload(model(), CTX, StreamOptions(session_id="s"))["prompt_cache_key"] == "s"
    # and on the wire
    message, _, server = run(serve([Reply(chunks=[fixture("text.sse")])], session_id="sess-2"))
    sent = server.requests[0].headers
    assert sent["session-id"] == "sess-2" and sent["x-client-request-id"] == "sess-2"
