"""openai-completions over a local fake server: streams, errors, abort, chunking, compat dialects."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_core.testing import FakeProviderServer, Reply, json_reply, sse
from ai_helpers import consume, every_split, run, types_of
from pi_core.testing import openai_chunks

from pi_core.ai import (
    AbortController,
    ApiProvider,
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    ModelRegistry,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDeclaration,
    ToolResultMessage,
    UserMessage,
    stream,
)
from plugins.providers.openai_completions import API, build_payload, get_compat, stream_completions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "openai_completions"
REGISTRY = ModelRegistry([ApiProvider(API, stream_completions)], load_files=False)
CTX = Context(system_prompt="You are terse.", messages=[UserMessage(content="What is the weather?")],
              tools=[ToolDeclaration(name="GetWeatherArgs", description="Weather for a city",
                                     parameters={"type": "object", "properties": {"city": {"type": "string"}}})])


def model(url: str = "http://127.0.0.1:9/v1", **changes: Any) -> Model:
    base = Model(id="gpt-4o", name="GPT-4o", api=API, provider="openai-compatible", base_url=url,
                 cost=ModelCost(input=2.5, output=10, cache_read=1.25), context_window=128_000, max_tokens=16_384)
    return base.model_copy(update=changes)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def serve(replies: list[Any], m: Model | None = None, context: Context = CTX, **options: Any):
    async with FakeProviderServer(replies) as server:
        target = (m or model()).model_copy(update={"base_url": server.url + "/v1"})
        message, events = await consume(stream(target, context, registry=REGISTRY, api_key="sk-test", **options),
                                        target)
        return message, events, server


def test_text_stream() -> None:
    message, events, server = run(serve([Reply(chunks=[fixture("text.sse")])]))
    assert message.stop_reason == "stop" and message.raw_stop_reason == "stop"
    assert message.text().startswith("I'm unable to provide real-time weather updates.")
    assert types_of(events)[:2] == ["start", "text_start"] and types_of(events)[-2:] == ["text_end", "done"]
    assert message.response_id == "chatcmpl-ABfw1e5abtU8OwGr15vOreYVb2MiF"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.total_tokens) == (14, 47, 0, 61)
    assert usage.cost.input == 2.5 / 1e6 * 14 and usage.cost.output == 10 / 1e6 * 47
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["stream"] is True and request.body["stream_options"] == {"include_usage": True}


def test_two_tool_calls_with_cached_prompt_tokens() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("two_tools.sse")])]))
    assert message.stop_reason == "toolUse"
    first, second = message.tool_calls()
    assert (first.id, first.name, first.arguments) == (
        "call_lQnnsesjFMWMQ5IeWPHzR4th", "GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"})
    assert (second.id, second.name, second.arguments) == (
        "call_2xjOUgaCdiwAcl9ZBL9LyMUU", "get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"})
    partial_args = [json.dumps(e.partial.content[0].arguments) for e in events
                    if e.type == "toolcall_delta" and e.content_index == 0]
    assert partial_args  # arguments were parsed while streaming (last one complete)
    assert message.usage.input == 149 - 128 and message.usage.cache_read == 128 and message.usage.output == 60
    ends = [e for e in events if e.type == "toolcall_end"]
    assert [e.content_index for e in ends] == [0, 1]


def test_partial_arguments_grow_while_streaming() -> None:
    # ``partial`` is live: to observe its intermediate states each SSE event must arrive on its own.
    chunks = [c + b"\n\n" for c in fixture("two_tools.sse").split(b"\n\n") if c]

    async def scenario() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        async with FakeProviderServer([Reply(chunks=chunks, chunk_delay=0.005)]) as server:
            target = model(server.url + "/v1")
            async for event in stream(target, CTX, registry=REGISTRY, api_key="k"):
                if event.type == "toolcall_delta" and event.content_index == 0:
                    seen.append(dict(event.partial.content[0].arguments))
        return seen

    seen = run(scenario())
    assert {} in seen and {"city": "Edinb"} in seen and {"city": "Edinburgh", "country": "UK"} in seen
    assert seen[-1] == {"city": "Edinburgh", "country": "UK", "units": "c"}


def test_reasoning_content_becomes_thinking_and_is_replayed() -> None:
    reasoner = model(id="deepseek-reasoner", provider="deepseek-local", reasoning=True)
    message, events, _ = run(serve([Reply(chunks=[fixture("reasoning.sse")])], reasoner))
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking_signature == "reasoning_content"
    assert thinking.thinking.startswith("Okay, the user says hello")
    assert isinstance(text, TextContent) and text.text == "Hello! How can I help you today?"
    assert message.usage.reasoning == 81 and message.usage.output == 92
    history = Context(messages=[UserMessage(content="hi"), message, UserMessage(content="again")])
    payload = build_payload(reasoner, history, _options())
    replayed = payload["messages"][1]
    assert replayed == {"role": "assistant", "content": "Hello! How can I help you today?",
                        "reasoning_content": thinking.thinking}


def _options(**kw: Any):
    from pi_core.ai import StreamOptions

    return StreamOptions(**kw)


def test_error_frame_mid_stream_keeps_partial_text() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("error_midstream.sse")])]))
    assert message.stop_reason == "error"
    assert message.error_message == "The server had an error while processing your request. Sorry about that!"
    assert message.text() == "Here is the start"
    assert "text_end" not in types_of(events)


def test_length_stop() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("length.sse")])]))
    assert message.stop_reason == "length" and message.text() == "I"


@pytest.mark.parametrize(("status", "body", "expected"), [
    (400, {"error": {"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error",
                     "param": "messages", "code": "context_length_exceeded"}},
     '400: {"message":"This model\'s maximum context length is 128000 tokens.","type":"invalid_request_error",'
     '"param":"messages","code":"context_length_exceeded"}'),
    (401, {"error": {"message": "Incorrect API key provided: sk-test.", "type": "invalid_request_error",
                     "param": None, "code": "invalid_api_key"}},
     '401: {"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,'
     '"code":"invalid_api_key"}'),
    (413, b"", "413 status code (no body)"),
    (502, b"<html>Bad Gateway</html>", "502 <html>Bad Gateway</html>"),
])
def test_http_error_bodies_are_formatted_like_the_sdk(status: int, body: Any, expected: str) -> None:
    message, events, _ = run(serve([json_reply(status, body)]))
    assert message.stop_reason == "error" and message.error_message == expected
    assert types_of(events) == ["error"]  # no start: the request never got going
    assert events[-1].status == status


def test_retry_after_is_reported_on_the_error_event() -> None:
    reply = json_reply(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, {"retry-after": "7"})
    message, events, _ = run(serve([reply]))
    assert message.error_message.startswith("429: ") and events[-1].retry_after_ms == 7000


def test_connection_cut_mid_stream_is_an_error_with_partial_content() -> None:
    chunks = fixture("text.sse").split(b"\n\n")
    chunks = [c + b"\n\n" for c in chunks if c]
    message, events, _ = run(serve([Reply(chunks=chunks, cut_after=6)]))
    assert message.stop_reason == "error"
    assert message.error_message.startswith("Connection error")
    assert message.text() == "I'm unable to provide real"


def test_stream_without_finish_reason_is_an_error() -> None:
    chunks = sse([{"id": "c1", "choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}]},
                  "data: [DONE]\n\n"])
    message, events, _ = run(serve([Reply(chunks=chunks)]))
    assert message.stop_reason == "error" and message.error_message == "Stream ended without finish_reason"
    assert message.text() == "half" and "text_end" in types_of(events)


def test_content_filter_is_an_error() -> None:
    chunks = sse([{"id": "c1", "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "content_filter"}]}])
    message, _, _ = run(serve([Reply(chunks=chunks)]))
    assert message.error_message == "Provider finish_reason: content_filter" and message.raw_stop_reason == "content_filter"


def test_connection_refused_is_an_error_event() -> None:
    async def scenario() -> AssistantMessage:
        server = FakeProviderServer()
        async with server:
            url = server.url
        return (await consume(stream(model(url + "/v1"), CTX, registry=REGISTRY, api_key="k")))[0]

    message = run(scenario())
    assert message.stop_reason == "error" and message.error_message.startswith("Connection error")


def test_abort_mid_stream_closes_the_connection_and_keeps_what_arrived() -> None:
    chunks = [c + b"\n\n" for c in fixture("text.sse").split(b"\n\n") if c]

    async def scenario() -> tuple[AssistantMessage, list[Any], FakeProviderServer]:
        controller = AbortController()
        async with FakeProviderServer([Reply(chunks=chunks, chunk_delay=0.05)]) as server:
            s = stream(model(server.url + "/v1"), CTX, registry=REGISTRY, api_key="k", signal=controller.signal)
            events = []
            async for event in s:
                events.append(event)
                if event.type == "text_delta" and len([e for e in events if e.type == "text_delta"]) == 2:
                    controller.abort()
            await asyncio.sleep(0.2)  # the server notices the closed socket on its next write
            return await s.result(), events, server

    message, events, server = run(scenario())
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert message.text() == "I'm unable"
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert server.disconnects == 1


def test_every_chunk_boundary_gives_the_same_result() -> None:
    # The stream shape pi 1.6 was recorded against (thinking, text and two tool calls, usage, [DONE]),
    # with a multi-byte character so that some splits fall inside a UTF-8 sequence.
    turn = {"thinking": "Need both files.", "text": "Reading them — now.",
            "tool_calls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.py"}},
                           {"id": "call_2", "name": "read", "arguments": {"path": "b.py"}}]}
    data = b"".join(openai_chunks(turn, {"model": "gpt-4o", "stream_options": {"include_usage": True}}, 1))
    tried = run(every_split(model(reasoning=True), CTX, data, REGISTRY), timeout=120)
    assert tried == len(data) - 1 > 2000


def test_crlf_line_endings_give_the_same_result() -> None:
    data = fixture("two_tools.sse")

    async def both() -> tuple[Any, Any]:
        from ai_helpers import comparable, stream_chunks

        lf, _ = await stream_chunks(model(), CTX, [data], REGISTRY)
        crlf, _ = await stream_chunks(model(), CTX, [data.replace(b"\n", b"\r\n")], REGISTRY)
        cr, _ = await stream_chunks(model(), CTX, [data.replace(b"\n", b"\r")], REGISTRY)
        return comparable(lf), (comparable(crlf), comparable(cr))

    lf, (crlf, cr) = run(both())
    assert lf == crlf == cr


def test_interleaved_parallel_tool_call_deltas_are_kept_apart() -> None:
    def tc(index: int, **fields: Any) -> dict[str, Any]:
        return {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, **fields}]},
                                        "finish_reason": None}]}

    chunks = sse([tc(0, id="a", function={"name": "read", "arguments": ""}),
                  tc(1, id="b", function={"name": "ls", "arguments": '{"pa'}),
                  tc(0, function={"arguments": '{"path": "x"'}), tc(1, function={"arguments": 'th": "."}'}),
                  tc(0, function={"arguments": "}"}),
                  {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}])
    message, _, _ = run(serve([Reply(chunks=chunks)]))
    assert [(c.id, c.arguments) for c in message.tool_calls()] == [("a", {"path": "x"}), ("b", {"path": "."})]


# --- request bodies and compat dialects ---------------------------------------------------------------

def payload_for(m: Model, context: Context = CTX, **options: Any) -> dict[str, Any]:
    return build_payload(m, context, _options(**options))


def test_openai_host_gets_developer_role_store_and_reasoning_effort() -> None:
    m = model(base_url="https://api.openai.com/v1", provider="openai", reasoning=True)
    payload = payload_for(m, reasoning="high")
    assert payload["messages"][0]["role"] == "developer"
    assert payload["store"] is False and payload["reasoning_effort"] == "high"
    assert "max_completion_tokens" in payload


def test_reasoning_off_sends_no_reasoning_fields() -> None:
    payload = payload_for(model(reasoning=True), reasoning="off")
    assert "reasoning_effort" not in payload and "reasoning" not in payload


def test_ollama_compat() -> None:
    m = model(base_url="http://localhost:11434/v1", provider="ollama", reasoning=True,
              compat={"supportsDeveloperRole": False, "supportsReasoningEffort": False})
    payload = payload_for(m, reasoning="medium")
    assert payload["messages"][0]["role"] == "system" and "reasoning_effort" not in payload


def test_llama_cpp_compat_without_usage_streaming() -> None:
    m = model(base_url="http://127.0.0.1:8080/v1", provider="llama-cpp",
              compat={"maxTokensField": "max_tokens", "supportsUsageInStreaming": False})
    payload = payload_for(m)
    assert "stream_options" not in payload and "max_tokens" in payload and "max_completion_tokens" not in payload


def test_vllm_qwen_chat_template_and_thinking_budget() -> None:
    m = model(provider="vllm", reasoning=True, max_tokens=8192,
              compat={"thinkingFormat": "qwen-chat-template", "thinkingTokenBudgetField": "thinking_token_budget"})
    payload = payload_for(m, reasoning="low")
    assert payload["chat_template_kwargs"] == {"enable_thinking": True, "preserve_thinking": True}
    assert payload["thinking_token_budget"] == 2048
    assert payload_for(m)["chat_template_kwargs"]["enable_thinking"] is False


def test_lm_studio_reasoning_field_is_read() -> None:
    chunks = sse([{"id": "c", "choices": [{"index": 0, "delta": {"reasoning": "think"}, "finish_reason": None}]},
                  {"id": "c", "choices": [{"index": 0, "delta": {"content": "done"}, "finish_reason": "stop"}]}])
    message, _, _ = run(serve([Reply(chunks=chunks)], model(provider="lmstudio")))
    assert message.content[0].thinking_signature == "reasoning" and message.text() == "done"


def test_openrouter_reasoning_and_anthropic_cache_markers() -> None:
    m = model(base_url="https://openrouter.ai/api/v1", provider="openrouter", id="anthropic/claude-sonnet-4.5",
              reasoning=True)
    payload = payload_for(m, reasoning="medium")
    assert payload["reasoning"] == {"effort": "medium"}
    assert payload["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert payload["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert payload["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_xai_and_groq_dialects() -> None:
    grok = payload_for(model(base_url="https://api.x.ai/v1", provider="xai", reasoning=True), reasoning="high")
    assert "store" not in grok and "reasoning_effort" not in grok
    groq = payload_for(model(base_url="https://api.groq.com/openai/v1", provider="groq", reasoning=True),
                       reasoning="low")
    assert groq["store"] is False and groq["reasoning_effort"] == "low"


def test_mistral_dialect_normalises_foreign_tool_call_ids() -> None:
    foreign = AssistantMessage(content=[ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="read", arguments={})],
                               api="anthropic-messages", provider="anthropic", model="claude", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="toolu_01A09q90qw90lq917835lq9", tool_name="read",
                               content=[TextContent(text="ok")])
    m = model(base_url="https://api.mistral.ai/v1", provider="mistral",
              compat={"toolCallIdFormat": "mistral", "supportsStore": False, "maxTokensField": "max_tokens"})
    payload = payload_for(m, Context(messages=[UserMessage(content="x"), foreign, result]))
    call_id = payload["messages"][1]["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum() and payload["messages"][2]["tool_call_id"] == call_id
    assert "store" not in payload and "max_tokens" in payload


def test_responses_style_ids_are_shortened_for_completions() -> None:
    foreign = AssistantMessage(content=[ToolCall(id="call_abc|fc_" + "x" * 60, name="ls", arguments={})],
                               api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id=foreign.content[0].id, tool_name="ls", content=[])
    payload = payload_for(model(), Context(messages=[UserMessage(content="x"), foreign, result]))
    new_id = payload["messages"][1]["tool_calls"][0]["id"]
    assert len(new_id) <= 40 and "|" not in new_id and payload["messages"][2]["tool_call_id"] == new_id
    assert payload["messages"][2]["content"] == "(no tool output)"


def test_tool_result_images_go_in_a_following_user_message() -> None:
    from pi_core.ai import ImageContent

    call = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={})], api=API,
                            provider="openai-compatible", model="gpt-4o", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="c1", tool_name="read",
                               content=[ImageContent(data="AAAA", mime_type="image/png")])
    payload = payload_for(model(input=["text", "image"]), Context(messages=[UserMessage(content="x"), call, result]))
    roles = [m["role"] for m in payload["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    assert payload["messages"][2]["content"] == "(see attached image)"
    assert payload["messages"][3]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def test_on_payload_can_replace_the_body() -> None:
    async def rewrite(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "temperature": 0.25, "stream": False}

    _, _, server = run(serve([Reply(chunks=[fixture("length.sse")])], on_payload=rewrite))
    assert server.requests[0].body["temperature"] == 0.25 and server.requests[0].body["stream"] is True


def test_missing_key_for_a_remote_host_is_an_error() -> None:
    async def scenario() -> AssistantMessage:
        m = model(base_url="https://api.example.invalid/v1", provider="nokey")
        return (await consume(stream(m, CTX, registry=REGISTRY)))[0]

    message = run(scenario())
    assert message.stop_reason == "error" and message.error_message.startswith("No API key for provider: nokey. ")
    assert "auth.json" in message.error_message and "--api-key" in message.error_message


def test_compat_overrides_are_field_by_field() -> None:
    compat = get_compat(model(base_url="https://api.x.ai/v1", provider="xai", compat={"supportsStore": True}))
    assert compat["supportsStore"] is True and compat["supportsReasoningEffort"] is False


def test_chunks_msgspec_refuses_are_read_as_before() -> None:
    """Stream chunks are decoded by msgspec; what it refuses (NaN, which Python's parser takes) is read by
    the standard parser, and a chunk that is not JSON at all is skipped, as before."""
    text = 'data: {"choices":[{"delta":{"content":"a"},"finish_reason":null}],"x":NaN}\n\n'
    chunks = [text, "data: {not json\n\n",
              'data: {"choices":[{"delta":{"content":"b\\u00e9"},"finish_reason":"stop"}]}\n\n', "data: [DONE]\n\n"]
    message, _, _ = run(serve([Reply(chunks=["".join(chunks).encode()])]))
    assert message.stop_reason == "stop" and message.text() == "abé"


# --- the plain-chunk fast path -------------------------------------------------------------------------

_ODD_CHUNKS = [
    {"id": "c2", "object": "chat.completion.chunk", "model": "m", "system_fingerprint": "fp",
     "choices": [{"index": 0, "delta": {"content": "plain"}, "logprobs": None, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": None}]},
    {"choices": [{"index": 0, "delta": "text?"}]},
    {"choices": [{"index": 0, "delta": {"content": 7}}]},
    {"choices": [{"index": 0, "delta": {"content": ["a", "b"]}}]},
    {"choices": [{"index": 0, "delta": {"content": None, "reasoning_content": "hmm"}}]},
    {"choices": [{"index": 0, "delta": {"reasoning": "", "content": "after empty reasoning"}}]},
    {"choices": [{"index": 0, "delta": {"reasoning_text": "r", "content": "both"}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "t", "function": {"name": "ls",
                                                                                           "arguments": "{}"}}]}}]},
    {"choices": [{"index": 0, "delta": {"content": "x"}, "usage": {"prompt_tokens": 3, "completion_tokens": 1}}]},
    {"usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": []},
    {"usage": {}, "choices": [{"index": 0, "delta": {"content": "empty usage"}}]},
    {"choices": []},
    {"id": 12, "choices": [{"index": 0, "delta": {"content": "numeric id"}}]},
    {"id": "", "choices": [{"index": 0, "delta": {"content": "no id"}}]},
    {"choices": [{"index": 0, "delta": {"content": "second choice ignored"}}, {"index": 1, "delta": {"content": "?"}}]},
    {"choices": "not a list"},
    [1, 2],
    "a string",
    {"choices": [{"index": 0, "delta": {"content": "tok "}, "finish_reason": None}], "extra": {"deep": [1, {"x": None}]}},
    {"choices": [{"index": 0, "delta": {"content": "stopping"}, "finish_reason": "stop"}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # odd values (a numeric id) serialize with pydantic's warning
@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(range(len(_ODD_CHUNKS))), min_size=1, max_size=10), st.booleans())
def test_the_plain_chunk_path_gives_what_the_general_path_gives(picks: list[int], broken: bool) -> None:
    # Without an observer, chunks of the common shape are read by a typed decoder; with one, every chunk is a dict
    # through _Parser.chunk. Both must build the same message from any mix of chunk shapes.
    body = [json.dumps(_ODD_CHUNKS[i]) for i in picks]
    if broken:
        body.insert(len(body) // 2, '{"choices": [{"delta": {"content": "cut')
    data = "".join(f"data: {line}\n\n" for line in body).encode() + b"data: [DONE]\n\n"

    async def both() -> tuple[Any, Any, list[Any]]:
        from ai_helpers import EventRecorder, comparable, stream_chunks

        plain, plain_events = await stream_chunks(model(reasoning=True), CTX, [data], REGISTRY)
        observer = EventRecorder()
        general, general_events = await stream_chunks(model(reasoning=True), CTX, [data], REGISTRY, observer=observer)
        return ((comparable(plain), [e.type for e in plain_events]),
                (comparable(general), [e.type for e in general_events]), observer.events)

    plain, general, seen = run(both())
    assert plain == general
    assert seen or not isinstance(_ODD_CHUNKS[picks[0]], dict)  # the general path did run, chunk by chunk
