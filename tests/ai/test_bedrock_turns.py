"""Bedrock messages are converted turn by turn and reused between requests, like the other providers'.

The whole conversation used to be converted (every message typed) for every request. Converted turn by
turn, a request must hold what converting the whole conversation at once gives — a turn's tool results in
one user message, the cache point on the last user message — and a later request (turns appended, a
branch taken) must convert only what is new and still hold what a conversion from scratch gives.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings, strategies as st

from pi_core.ai import Context, Model
from pi_core.ai.options import StreamOptions
from pi_core.ai.types import (AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
                              UserMessage)
from pi_core.ai.wire import body_bytes
from plugins.providers import amazon_bedrock

from test_mistral_turns import tool_result, user_message

MODELS = [Model(id="anthropic.claude-sonnet-4-5", api="bedrock-converse-stream", provider="amazon-bedrock",
                base_url="http://127.0.0.1:9", context_window=100_000, max_tokens=1000, input=["text", "image"],
                reasoning=True),
          Model(id="openai.gpt-oss-120b", api="bedrock-converse-stream", provider="amazon-bedrock",
                base_url="http://127.0.0.1:9", context_window=100_000, max_tokens=1000, input=["text"])]
IDS = st.sampled_from(["tooluse_1", "tooluse_2", "call|item", "call 3"])
TEXTS = st.sampled_from(["", " ", "plain", "é and 😀", "  padded  "])
CACHE_POINT = {"type": "default"}


@st.composite
def message(draw: Any) -> Any:
    """Any message but an answer the conversion leaves out (failed, or with nothing to send): after such
    an answer, converting at once joins the results on both sides of it, turn by turn does not."""
    role = draw(st.sampled_from(["user", "assistant", "assistant", "toolResult", "toolResult"]))
    if role == "user":
        return draw(user_message(TEXTS))
    if role == "toolResult":
        return draw(tool_result(IDS, TEXTS, "image/jpeg"))
    blocks: list[Any] = [TextContent(text=f"answer {draw(st.integers(0, 9))}")]
    for kind in draw(st.lists(st.sampled_from(["text", "thinking", "redacted", "call", "call"]), max_size=4)):
        if kind == "text":
            blocks.append(TextContent(text=draw(TEXTS)))
        elif kind == "thinking":
            blocks.append(ThinkingContent(thinking=draw(TEXTS), thinking_signature=draw(st.sampled_from([None, "", "sig"]))))
        elif kind == "redacted":
            blocks.append(ThinkingContent(thinking="", redacted=True, thinking_signature=draw(st.sampled_from([None, "x"]))))
        else:
            blocks.append(ToolCall(id=draw(IDS), name="read", arguments={"path": draw(TEXTS)}))
    draw(st.randoms()).shuffle(blocks)
    return AssistantMessage(content=blocks, provider=draw(st.sampled_from(["amazon-bedrock", "anthropic"])),
                            api=draw(st.sampled_from(["bedrock-converse-stream", "anthropic-messages"])),
                            model=draw(st.sampled_from(["anthropic.claude-sonnet-4-5", "claude"])),
                            stop_reason=draw(st.sampled_from(["stop", "toolUse"])))


def in_place(messages: list[Any]) -> list[Any]:
    """``messages`` without the results of an id called in an earlier turn (pi stores a result right after
    the answer holding its call, and ids are not reused: only an edited file has them, and converting at
    once renames such a result like that earlier call, turn by turn does not: docs/sessions.md)."""
    out: list[Any] = []
    earlier: set[str] = set()
    current: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            earlier |= current
            current = {b.id for b in m.content if b.type == "toolCall"}
        elif m.role == "toolResult" and m.tool_call_id in earlier:
            continue
        out.append(m)
    return out


def whole(model: Model, messages: list[Any], cache_point: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The reference: the whole conversation converted at once (the former converter)."""
    out = amazon_bedrock._convert_turn(messages, model)  # noqa: SLF001
    if cache_point and out and out[-1]["role"] == "user":
        out[-1]["content"].append({"cachePoint": cache_point})
    return out


def request(model: Model, messages: list[Any]) -> list[dict[str, Any]]:
    return amazon_bedrock.convert_messages(model, Context(system_prompt="sys", messages=messages), CACHE_POINT)


@settings(max_examples=80, deadline=None)
@given(messages=st.lists(message(), min_size=1, max_size=20))
def test_turn_by_turn_holds_what_the_whole_conversation_gives(messages: list[Any]) -> None:
    messages = in_place(messages)
    for model in MODELS:
        amazon_bedrock._TURNS.clear()  # noqa: SLF001 - nothing converted before
        assert request(model, messages) == whole(model, messages, CACHE_POINT)


@settings(max_examples=80, deadline=None)
@given(first=st.lists(message(), min_size=1, max_size=16), later=st.lists(message(), min_size=1, max_size=8),
       cut=st.integers(0, 16))
def test_a_later_request_holds_a_fresh_conversion(first: list[Any], later: list[Any], cut: int) -> None:
    """Turns appended to the conversation, or to a branch of it (``first`` cut short at ``cut``)."""
    model = MODELS[0]
    amazon_bedrock._TURNS.clear()  # noqa: SLF001
    first = in_place(first)
    request(model, first)
    messages = in_place(first[:cut] + later)
    assert request(model, messages) == whole(model, messages, CACHE_POINT)


def test_a_long_conversation_converts_only_the_last_turns_and_the_body_holds_the_cache_point(monkeypatch: Any) -> None:
    model = MODELS[0]
    messages: list[Any] = [UserMessage(content="start")]
    for n in range(200):
        call = ToolCall(id=f"tooluse_{n}", name="read", arguments={"n": n})
        messages += [AssistantMessage(content=[TextContent(text=f"step {n}"), call], provider="amazon-bedrock",
                                      api="bedrock-converse-stream", model=model.id, stop_reason="toolUse"),
                     ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text=f"out {n}")])]
    amazon_bedrock._TURNS.clear()  # noqa: SLF001
    options = StreamOptions()
    body = body_bytes(amazon_bedrock.build_payload(model, Context(system_prompt="sys", messages=messages), options))
    assert json.loads(body)["messages"] == whole(model, messages, CACHE_POINT)
    converted: list[int] = []
    real = amazon_bedrock._convert_turn  # noqa: SLF001

    def spy(turn: list[Any], model: Model) -> list[dict[str, Any]]:
        converted.append(len(turn))
        return real(turn, model)

    monkeypatch.setattr(amazon_bedrock, "_convert_turn", spy)
    messages += [AssistantMessage(content=[TextContent(text="done")], provider="amazon-bedrock",
                                  api="bedrock-converse-stream", model=model.id, stop_reason="stop"),
                 UserMessage(content="more")]
    body = body_bytes(amazon_bedrock.build_payload(model, Context(system_prompt="sys", messages=messages), options))
    assert converted == [2, 2]  # the last turn of the request before (never kept: it is handed out) and the new one
    sent = json.loads(body)["messages"]
    assert sent == whole(model, messages, CACHE_POINT)
    assert sent[-1]["content"][-1] == {"cachePoint": CACHE_POINT}
    assert sum(1 for item in sent if any("cachePoint" in c for c in item["content"])) == 1  # only the last one


def test_what_a_turn_sends() -> None:
    """The former converter's output for one conversation, written out: thinking signed and unsigned, a
    redacted block, two results of one answer in one user message, another model's unsafe id renamed."""
    model = MODELS[0]
    calls = [ToolCall(id="tooluse_a", name="read", arguments={"path": "a"}),
             ToolCall(id="tooluse_b", name="read", arguments={})]
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=[ThinkingContent(thinking="signed", thinking_signature="sig"),
                                  ThinkingContent(thinking="unsigned"),
                                  ThinkingContent(thinking="", redacted=True, thinking_signature="opaque"),
                                  TextContent(text="reading"), *calls],
                         provider="amazon-bedrock", api="bedrock-converse-stream", model=model.id, stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="tooluse_a", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="tooluse_b", tool_name="read", content=[TextContent(text=" ")], is_error=True),
        AssistantMessage(content=[ToolCall(id="call 1", name="read", arguments={"n": 1})], provider="anthropic",
                         api="anthropic-messages", model="claude", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call 1", tool_name="read", content=[TextContent(text="one")]),
        UserMessage(content="thanks")]
    amazon_bedrock._TURNS.clear()  # noqa: SLF001
    assert request(model, messages) == [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "signed", "signature": "sig"}}},
            {"text": "unsigned"},
            {"reasoningContent": {"redactedContent": "opaque"}},
            {"text": "reading"},
            {"toolUse": {"toolUseId": "tooluse_a", "name": "read", "input": {"path": "a"}}},
            {"toolUse": {"toolUseId": "tooluse_b", "name": "read", "input": {}}}]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "A"}], "status": "success"}},
            {"toolResult": {"toolUseId": "tooluse_b", "content": [{"text": amazon_bedrock.EMPTY_TEXT}],
                            "status": "error"}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "call_1", "name": "read", "input": {"n": 1}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "call_1", "content": [{"text": "one"}],
                                                     "status": "success"}}]},
        {"role": "user", "content": [{"text": "thanks"}, {"cachePoint": CACHE_POINT}]}]
