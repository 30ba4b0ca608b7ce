"""google-generative-ai over a local fake server: SSE chunks, thought parts and signatures, errors, abort."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core.testing import FakeProviderServer, Reply, json_reply
from ai_helpers import consume, every_split, run, types_of

from pi_core.ai import (
    AbortController,
    ApiProvider,
    AssistantMessage,
    Context,
    ImageContent,
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
from plugins.providers.google import API, build_payload, stream_google

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "google"
REGISTRY = ModelRegistry([ApiProvider(API, stream_google)], load_files=False)
TOOL = ToolDeclaration(name="pelican_name_generator", description="Names for pelicans",
                       parameters={"type": "object", "properties": {"type": {"type": "string", "enum": ["funny", "serious"]}}})
CTX = Context(system_prompt="Be brief.", messages=[UserMessage(content="Say hi")], tools=[TOOL])


def model(url: str = "https://generativelanguage.googleapis.com/v1beta", **changes: Any) -> Model:
    base = Model(id="gemini-3-flash-preview", name="Gemini 3 Flash", api=API, provider="google", base_url=url,
                 reasoning=True, input=["text", "image"], cost=ModelCost(input=0.5, output=3, cache_read=0.05),
                 context_window=1_048_576, max_tokens=65_536)
    return base.model_copy(update=changes)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def serve(replies: list[Any], m: Model | None = None, context: Context = CTX, **options: Any):
    async with FakeProviderServer(replies) as server:
        target = (m or model()).model_copy(update={"base_url": server.url + "/v1beta"})
        options.setdefault("api_key", "AIza-test")
        message, events = await consume(stream(target, context, registry=REGISTRY, **options), target)
        return message, events, server


def test_text_with_trailing_signature_part() -> None:
    message, events, server = run(serve([Reply(chunks=[fixture("text.sse")])]))
    assert message.text() == "Hello" and message.stop_reason == "stop" and message.raw_stop_reason == "STOP"
    assert message.content[0].text_signature == "ErUBCrIBAdHtim9kX2bQn4s+J3yL8Q=="
    assert types_of(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert (message.usage.input, message.usage.output, message.usage.reasoning, message.usage.total_tokens) == (
        4, 28, 27, 32)
    request = server.requests[0]
    assert request.path == "/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "AIza-test"
    body = request.body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Say hi"}]}]
    assert body["tools"] == [{"functionDeclarations": [{"name": "pelican_name_generator", "description": "Names for pelicans",
                                                        "parametersJsonSchema": TOOL.parameters}]}]


def test_two_function_calls_arrive_whole() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("two_tools.sse")])]))
    assert message.stop_reason == "toolUse"
    first, second = message.tool_calls()
    assert (first.id, first.arguments, first.thought_signature) == ("c9bjmkfz", {"type": "funny"},
                                                                    "EosJCogJAdHtim/2o3XqW1z8x9f0bQ==")
    assert (second.id, second.arguments, second.thought_signature) == ("k2ptq8xa", {"type": "serious"}, None)
    assert types_of(events)[1:4] == ["toolcall_start", "toolcall_delta", "toolcall_end"]
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"type":"funny"}', '{"type":"serious"}']


def test_thought_parts_become_thinking_and_cached_tokens_are_not_input() -> None:
    message, events, _ = run(serve([Reply(chunks=[fixture("thinking.sse")])], model(id="gemini-2.5-flash")))
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "**Planning the answer**\n\nThe user wants a greeting. Keep it short."
    assert text.text == "Hi there!"
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (8, 4, 129)
    assert types_of(events).index("thinking_end") < types_of(events).index("text_start")


def test_missing_call_ids_are_generated_uniquely() -> None:
    chunk = (b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"ls"}},{"functionCall":{"name":"ls",'
             b'"args":{"path":"."}}}],"role":"model"},"finishReason":"STOP","index":0}]}\n\n')
    message, _, _ = run(serve([Reply(chunks=[chunk])], model(id="gemini-2.5-pro")))
    first, second = message.tool_calls()
    assert first.id != second.id and first.id.startswith("ls_") and first.arguments == {}


def test_safety_stop_is_an_error() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("safety.sse")])]))
    assert message.stop_reason == "error" and message.error_message == "Provider stopped with: SAFETY"
    assert message.text() == "I will"


def test_error_object_in_the_stream() -> None:
    message, _, _ = run(serve([Reply(chunks=[fixture("error_midstream.sse")])]))
    assert message.stop_reason == "error" and "The model is overloaded" in message.error_message
    assert message.text() == "Par"


def test_http_error_is_the_json_body() -> None:
    body = {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                      "status": "RESOURCE_EXHAUSTED"}}
    message, events, _ = run(serve([json_reply(429, body)]))
    assert message.error_message == ('{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",'
                                     '"status":"RESOURCE_EXHAUSTED"}}')
    assert events[-1].status == 429


def test_stream_ending_without_finish_reason() -> None:
    data = fixture("text.sse").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    message, _, _ = run(serve([Reply(chunks=[data])]))
    assert message.error_message == "Google stream ended without a finish reason"


def test_connection_cut() -> None:
    chunks = [c + b"\r\n\r\n" for c in fixture("thinking.sse").split(b"\r\n\r\n") if c]
    message, _, _ = run(serve([Reply(chunks=chunks, cut_after=2)], model(id="gemini-2.5-flash")))
    assert message.stop_reason == "error" and message.error_message.startswith("Connection error")


def test_abort_mid_stream() -> None:
    chunks = [c + b"\r\n\r\n" for c in fixture("thinking.sse").split(b"\r\n\r\n") if c]

    async def scenario() -> AssistantMessage:
        controller = AbortController()
        async with FakeProviderServer([Reply(chunks=chunks, chunk_delay=0.05)]) as server:
            target = model(server.url + "/v1beta", id="gemini-2.5-flash")
            s = stream(target, CTX, registry=REGISTRY, api_key="k", signal=controller.signal)
            async for event in s:
                if event.type == "thinking_delta":
                    controller.abort()
            await asyncio.sleep(0.15)
            assert server.disconnects == 1
            return await s.result()

    message = run(scenario())
    assert message.stop_reason == "aborted" and message.content[0].thinking.startswith("**Planning")


def test_every_chunk_boundary_gives_the_same_result() -> None:
    data = fixture("two_tools.sse") + b""
    assert run(every_split(model(), CTX, data, REGISTRY), timeout=120) == len(data) - 1


# --- requests ---------------------------------------------------------------------------------------

def test_thinking_config_per_model_family() -> None:
    g3 = build_payload(model(), CTX, StreamOptions(reasoning="medium"))["generationConfig"]["thinkingConfig"]
    assert g3 == {"includeThoughts": True, "thinkingLevel": "MEDIUM"}
    pro = build_payload(model(id="gemini-2.5-pro"), CTX, StreamOptions(reasoning="high"))["generationConfig"]
    assert pro["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 32768}
    flash = build_payload(model(id="gemini-2.5-flash"), CTX, StreamOptions(reasoning="minimal"))["generationConfig"]
    assert flash["thinkingConfig"]["thinkingBudget"] == 128
    off = build_payload(model(id="gemini-2.5-flash"), CTX, StreamOptions())["generationConfig"]
    assert off["thinkingConfig"] == {"thinkingBudget": 0}
    plain = build_payload(model(reasoning=False), CTX, StreamOptions(reasoning="high"))["generationConfig"]
    assert "thinkingConfig" not in plain and plain["maxOutputTokens"] > 0


def test_signatures_replay_only_to_the_same_model_and_results_merge() -> None:
    history = AssistantMessage(content=[ThinkingContent(thinking="plan", thinking_signature="c2lnbmF0dXJl"),
                                        ToolCall(id="c1", name="pelican_name_generator", arguments={"type": "funny"},
                                                 thought_signature="c2lnMg=="),
                                        ToolCall(id="c2", name="pelican_name_generator", arguments={})],
                               api=API, provider="google", model="gemini-3-flash-preview", stop_reason="toolUse")
    results = [ToolResultMessage(tool_call_id="c1", tool_name="pelican_name_generator", content=[TextContent(text="Pete")]),
               ToolResultMessage(tool_call_id="c2", tool_name="pelican_name_generator", is_error=True,
                                 content=[TextContent(text="failed")])]
    context = Context(messages=[UserMessage(content="names"), history, *results])
    contents = build_payload(model(), context, StreamOptions())["contents"]
    assert contents[1] == {"role": "model", "parts": [
        {"thought": True, "text": "plan", "thoughtSignature": "c2lnbmF0dXJl"},
        {"functionCall": {"name": "pelican_name_generator", "args": {"type": "funny"}, "id": "c1"},
         "thoughtSignature": "c2lnMg=="},
        {"functionCall": {"name": "pelican_name_generator", "args": {}, "id": "c2"}}]}
    assert contents[2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "pelican_name_generator", "response": {"output": "Pete"}, "id": "c1"}},
        {"functionResponse": {"name": "pelican_name_generator", "response": {"error": "failed"}, "id": "c2"}}]}
    other = build_payload(model(id="gemini-2.5-pro"), context, StreamOptions())["contents"]
    assert "text" not in other[1]["parts"][0]  # another model's thinking is dropped, as pi does
    assert "thoughtSignature" not in other[1]["parts"][0] and "id" not in other[1]["parts"][0]["functionCall"]


def test_tool_result_images_nest_for_gemini_3_and_follow_for_older() -> None:
    call = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={})], api=API, provider="google",
                            model="gemini-3-flash-preview", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="c1", tool_name="read",
                               content=[ImageContent(data="AAAA", mime_type="image/png")])
    context = Context(messages=[UserMessage(content="look"), call, result])
    g3 = build_payload(model(), context, StreamOptions())["contents"]
    assert g3[-1]["parts"][0]["functionResponse"]["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]
    old = build_payload(model(id="gemini-2.5-pro"), context, StreamOptions())["contents"]
    assert old[-1] == {"role": "user", "parts": [{"text": "Tool result image:"},
                                                 {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}
