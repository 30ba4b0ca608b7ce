"""mistral-conversations (pi's API for the ``mistral`` provider) against a local fake server speaking
Mistral's stream format: completion chunks whose ``content`` is a string or a list of ``text`` /
``thinking`` chunks, tool calls with nine-character ids, usage with cached prompt tokens, ``[DONE]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ai_helpers import consume, run, types_of

from pi_core.ai import (
    ApiProvider,
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    ModelCost,
    ModelRegistry,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDeclaration,
    ToolResultMessage,
    Usage,
    UserMessage,
    stream,
)
from pi_core.testing import FakeProviderServer, Reply, json_reply, sse
from plugins.providers.mistral import API, ToolCallIds, build_payload, stream_mistral

REGISTRY = ModelRegistry([ApiProvider(API, stream_mistral)], load_files=False)
TOOL = ToolDeclaration(name="read", description="Read a file",
                       parameters={"type": "object", "properties": {"path": {"type": "string"}}})
CTX = Context(system_prompt="Be brief.", messages=[UserMessage(content="Say hi")], tools=[TOOL])


def model(**changes: Any) -> Model:
    base = Model(id="mistral-large-latest", name="Mistral Large", api=API, provider="mistral",
                 base_url="https://api.mistral.ai", reasoning=True, input=["text", "image"],
                 cost=ModelCost(input=0.5, output=1.5, cache_read=0.05), context_window=262_144, max_tokens=8192,
                 thinking_level_map={"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high"})
    return base.model_copy(update=changes)


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "cmpl-7f3", "object": "chat.completion.chunk", "created": 1764800000, "model": "mistral-large-latest",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


USAGE = {"prompt_tokens": 120, "total_tokens": 140, "completion_tokens": 20, "num_cached_tokens": 100}


async def serve(replies: list[Any], m: Model | None = None, context: Context = CTX, **options: Any):
    async with FakeProviderServer(replies) as server:
        target = (m or model()).model_copy(update={"base_url": server.url})
        options.setdefault("api_key", "mistral-test-key")
        message, events = await consume(stream(target, context, registry=REGISTRY, **options), target)
        return message, events, server


def test_thinking_chunks_text_and_cached_usage() -> None:
    body = sse([
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "The user "}]}]}),
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "greets."}]}]}),
        chunk({"content": ""}),
        chunk({"content": "Hi"}),
        chunk({"content": [{"type": "text", "text": " there!"}]}),
        chunk({"content": ""}, "stop", usage=USAGE),
        "data: [DONE]\n\n"])
    message, events, server = run(serve([Reply(chunks=body)], reasoning="high", session_id="sess-9"))
    assert message.stop_reason == "stop" and message.response_id == "cmpl-7f3", message.error_message
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "The user greets." and message.text() == "Hi there!"
    assert types_of(events) == ["start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
                                "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert (message.usage.input, message.usage.cache_read, message.usage.output, message.usage.total_tokens) \
        == (20, 100, 20, 140)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer mistral-test-key"
    assert request.headers["accept"] == "text/event-stream" and request.headers["x-affinity"] == "sess-9"
    body = request.body
    assert body["model"] == "mistral-large-latest" and body["stream"] is True
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}]
    assert body["reasoning_effort"] == "high" and "prompt_mode" not in body
    assert body["prompt_cache_key"] == "sess-9" and body["max_tokens"] == 8192
    assert body["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "Read a file", "parameters": TOOL.parameters, "strict": False}}]


def test_thinking_off_and_reasoning_without_a_map() -> None:
    off = build_payload(model(thinking_level_map={"off": "none", "high": "high"}), CTX,
                        _options(reasoning="off"))
    assert off["reasoning_effort"] == "none"
    unmapped = build_payload(model(thinking_level_map=None, id="magistral-small"), CTX, _options(reasoning="medium"))
    assert unmapped["prompt_mode"] == "reasoning" and "reasoning_effort" not in unmapped
    plain = build_payload(model(reasoning=False, thinking_level_map=None), CTX, _options(reasoning="high"))
    assert "prompt_mode" not in plain and "reasoning_effort" not in plain
    no_cache = build_payload(model(), CTX, _options(session_id="s", cache_retention="none"))
    assert "prompt_cache_key" not in no_cache


def _options(**values: Any) -> Any:
    from pi_core.ai import StreamOptions

    return StreamOptions(**values)


def test_tool_call_stream_and_the_replayed_conversation() -> None:
    body = sse([
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [{"id": "D681PevKs", "function": {"name": "read", "arguments": ""}, "index": 0}]}),
        chunk({"tool_calls": [{"id": "null", "function": {"name": "", "arguments": "{\"path\": "}, "index": 0}]}),
        chunk({"tool_calls": [{"function": {"name": "", "arguments": "\"a.txt\"}"}, "index": 0}]}),
        chunk({"tool_calls": [{"id": "null", "function": {"name": "read", "arguments": {"path": "b.txt"}},
                               "index": 1}]}),
        chunk({"content": ""}, "tool_calls", usage={"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}),
        "data: [DONE]\n\n"])
    message, events, _ = run(serve([Reply(chunks=body)]))
    assert message.stop_reason == "toolUse", message.error_message
    calls = message.tool_calls()
    assert [(c.id, c.name, c.arguments) for c in calls][0] == ("D681PevKs", "read", {"path": "a.txt"})
    assert calls[1].name == "read" and calls[1].arguments == {"path": "b.txt"}
    assert len(calls[1].id) == 9 and calls[1].id.isalnum()

    # the next request replays it, with a foreign (Anthropic) call id made a Mistral one
    foreign = AssistantMessage(content=[ThinkingContent(thinking="Need the file.", thinking_signature="sig"),
                                        TextContent(text="Reading."),
                                        ToolCall(id="toolu_01ABCdefGHIjklMNOpqr", name="read",
                                                 arguments={"path": "c.txt"})],
                               api="anthropic-messages", provider="anthropic", model="claude-x", usage=Usage(),
                               stop_reason="toolUse")
    history = Context(system_prompt="Be brief.", tools=[TOOL], messages=[
        UserMessage(content=[TextContent(text="Look"), ImageContent(data="iVBORw0KGgo=", mime_type="image/png")]),
        foreign,
        ToolResultMessage(tool_call_id="toolu_01ABCdefGHIjklMNOpqr", tool_name="read",
                          content=[TextContent(text="no such file")], is_error=True),
        message,
        ToolResultMessage(tool_call_id=calls[0].id, tool_name="read", content=[TextContent(text="alpha")]),
        ToolResultMessage(tool_call_id=calls[1].id, tool_name="read", content=[]),
    ])
    done = sse([chunk({"role": "assistant", "content": "Done."}), chunk({}, "stop"), "data: [DONE]\n\n"])
    reply, _, server = run(serve([Reply(chunks=done)], context=history))
    assert reply.text() == "Done."
    sent = server.requests[0].body["messages"]
    mapped = ToolCallIds()("toolu_01ABCdefGHIjklMNOpqr")
    assert len(mapped) == 9 and mapped.isalnum()
    assert sent[1] == {"role": "user", "content": [{"type": "text", "text": "Look"},
                                                   {"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}
    # another model's thinking is dropped (cross-provider handoff), in Mistral's assistant shape
    assert sent[2]["role"] == "assistant" and sent[2]["prefix"] is False
    assert sent[2]["tool_calls"] == [{"id": mapped, "type": "function", "index": 0,
                                      "function": {"name": "read", "arguments": "{\"path\":\"c.txt\"}"}}]
    assert sent[3] == {"role": "tool", "tool_call_id": mapped, "name": "read",
                       "content": [{"type": "text", "text": "[tool error] no such file"}]}
    assert sent[4]["tool_calls"][0]["id"] == "D681PevKs"
    assert sent[5]["content"] == [{"type": "text", "text": "alpha"}] and sent[5]["tool_call_id"] == "D681PevKs"
    assert sent[6]["content"] == [{"type": "text", "text": "(no tool output)"}]


def test_own_thinking_is_replayed_as_thinking_chunks() -> None:
    own = AssistantMessage(content=[ThinkingContent(thinking="hmm"), TextContent(text="Hello")], api=API,
                           provider="mistral", model="mistral-large-latest", usage=Usage(), stop_reason="stop")
    payload = build_payload(model(), Context(messages=[UserMessage(content="hi"), own, UserMessage(content="again")]),
                            _options())
    assert payload["messages"][1] == {"role": "assistant", "prefix": False, "content": [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}, {"type": "text", "text": "Hello"}]}


def test_errors_http_finish_error_and_no_finish_reason() -> None:
    limited = json_reply(429, {"object": "error", "message": "Requests rate limit exceeded", "type": "rate_limited",
                               "param": None, "code": "1300"})
    message, _, _ = run(serve([limited]))
    assert message.stop_reason == "error"
    assert message.error_message.startswith('Mistral API error (429): {"object": "error", "message": "Requests rate')

    failed = sse([chunk({"role": "assistant", "content": "Par"}), chunk({}, "error"), "data: [DONE]\n\n"])
    message, _, _ = run(serve([Reply(chunks=failed)]))
    assert message.stop_reason == "error" and message.error_message == "Provider stopped with: error (server error)"

    cut = sse([chunk({"role": "assistant", "content": "Par"}), "data: [DONE]\n\n"])
    message, _, _ = run(serve([Reply(chunks=cut)]))
    assert message.error_message == "Mistral stream ended without a finish reason"

    message, _, _ = run(serve([Reply(chunks=[b'data: {"object": "error"}\n\n'])]))
    assert message.error_message == "Invalid Mistral streaming event"


def test_model_length_is_a_length_stop() -> None:
    body = sse([chunk({"role": "assistant", "content": "long"}), chunk({}, "model_length"), "data: [DONE]\n\n"])
    message, _, _ = run(serve([Reply(chunks=body)]))
    assert message.stop_reason == "length" and message.raw_stop_reason == "model_length"


def test_pi_talks_to_the_mistral_provider_through_its_own_api(tmp_path: Path) -> None:
    """The CLI with the built-in catalog: ``mistral`` models are ``mistral-conversations`` ones."""
    answer = sse([chunk({"role": "assistant", "content": "Bonjour"}), chunk({}, "stop", usage=USAGE),
                  "data: [DONE]\n\n"])
    with FakeProviderServer([Reply(chunks=answer)]) as server:
        agent = tmp_path / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps({"providers": {"mistral": {"baseUrl": server.url}}}))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "MISTRAL_API_KEY": "mk-1", "HOME": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "pi_core", "--model", "mistral/devstral-medium-latest", "-p",
                               "salut"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Bonjour" in done.stdout
        request = server.requests[0]
        assert request.path == "/v1/chat/completions" and request.headers["authorization"] == "Bearer mk-1"
        assert request.body["model"] == "devstral-medium-latest" and request.body["messages"][-1] == {
            "role": "user", "content": [{"type": "text", "text": "salut"}]}
