"""Mistral messages are converted turn by turn and reused between requests, like the other providers'.

The whole conversation used to be converted for every request (its tool-call ids are mapped across the
conversation). Converted turn by turn, with the id map kept beside the turns, a request must hold what
converting the whole conversation at once gives, and a later request — turns appended, a branch taken —
must convert only what is new and still hold what a conversion from scratch gives.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from pi_core.ai import Context, Model
from pi_core.ai.types import (AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
                              UserMessage)
from plugins.providers import mistral
from plugins.providers.mistral import ToolCallIds

MODELS = [Model(id="mistral-large", api="mistral-conversations", provider="mistral", base_url="http://127.0.0.1:9",
                context_window=100_000, max_tokens=1000, input=["text", "image"]),
          Model(id="devstral", api="mistral-conversations", provider="mistral", base_url="http://127.0.0.1:9",
                context_window=100_000, max_tokens=1000, input=["text"])]
IDS = st.sampled_from(["abc123XYZ", "call_1", "call_2", "toolu_01ABCDEFGHIJKLMNOP", "x|y", "call 3"])
TEXTS = st.sampled_from(["", " ", "plain", "é and 😀", "  padded  "])


@st.composite
def user_message(draw: Any, texts: Any = TEXTS) -> UserMessage:
    """Text, or blocks of text and images."""
    blocks = draw(st.lists(st.sampled_from(["text", "text", "image"]), max_size=3))
    if not blocks:
        return UserMessage(content=draw(texts))
    return UserMessage(content=[TextContent(text=draw(texts)) if b == "text" else
                                ImageContent(data="aGVsbG8=", mime_type="image/png") for b in blocks])


@st.composite
def tool_result(draw: Any, ids: Any = IDS, texts: Any = TEXTS, image_type: str = "image/png") -> ToolResultMessage:
    """A text, and maybe an image; failed or not."""
    content: list[Any] = [TextContent(text=draw(texts))]
    if draw(st.booleans()):
        content.append(ImageContent(data="aGVsbG8=", mime_type=image_type))
    return ToolResultMessage(tool_call_id=draw(ids), tool_name="read", content=content, is_error=draw(st.booleans()))


@st.composite
def message(draw: Any) -> Any:
    role = draw(st.sampled_from(["user", "assistant", "assistant", "toolResult", "toolResult"]))
    if role == "user":
        return draw(user_message())
    if role == "toolResult":
        return draw(tool_result())
    blocks = []
    for kind in draw(st.lists(st.sampled_from(["text", "thinking", "call", "call"]), max_size=4)):
        if kind == "text":
            blocks.append(TextContent(text=draw(TEXTS)))
        elif kind == "thinking":
            blocks.append(ThinkingContent(thinking=draw(TEXTS)))
        else:
            blocks.append(ToolCall(id=draw(IDS), name="read", arguments={"path": draw(TEXTS)}))
    return AssistantMessage(content=blocks, provider=draw(st.sampled_from(["mistral", "anthropic"])),
                            api=draw(st.sampled_from(["mistral-conversations", "anthropic-messages"])),
                            model=draw(st.sampled_from(["mistral-large", "claude"])),
                            stop_reason=draw(st.sampled_from(["stop", "toolUse", "toolUse", "error", "aborted"])))


def whole(model: Model, messages: list[Any]) -> list[dict[str, Any]]:
    """The reference: the whole conversation converted at once, with one id map (the former converter)."""
    return [{"role": "system", "content": "sys"}, *mistral._convert_turn(messages, model, ToolCallIds())]  # noqa: SLF001


def request(model: Model, messages: list[Any]) -> list[dict[str, Any]]:
    return mistral.convert_messages(model, Context(system_prompt="sys", messages=messages))


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(message(), min_size=1, max_size=20))
def test_turn_by_turn_holds_what_the_whole_conversation_gives(messages: list[Any]) -> None:
    for model in MODELS:
        mistral._TURNS.clear()  # noqa: SLF001 - nothing converted before
        assert request(model, messages) == whole(model, messages)


@settings(max_examples=300, deadline=None)
@given(first=st.lists(message(), min_size=1, max_size=16), later=st.lists(message(), min_size=1, max_size=8),
       cut=st.integers(0, 16))
def test_a_later_request_holds_a_fresh_conversion(first: list[Any], later: list[Any], cut: int) -> None:
    """Turns appended to the conversation, or to a branch of it (``first`` cut short at ``cut``): the
    turns reused and those converted again make what converting from scratch makes."""
    model = MODELS[0]
    mistral._TURNS.clear()  # noqa: SLF001
    request(model, first)
    messages = first[:cut] + later
    assert request(model, messages) == whole(model, messages)


def test_a_long_conversation_converts_only_the_last_turns(monkeypatch: Any) -> None:
    model = MODELS[0]
    messages: list[Any] = [UserMessage(content="start")]
    for n in range(200):
        call = ToolCall(id=f"toolu_{n:020d}", name="read", arguments={"n": n})  # another model's: mapped
        messages += [AssistantMessage(content=[TextContent(text=f"step {n}"), call], provider="anthropic",
                                      api="anthropic-messages", model="claude", stop_reason="toolUse"),
                     ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text=f"out {n}")])]
    mistral._TURNS.clear()  # noqa: SLF001
    assert request(model, messages) == whole(model, messages)
    converted: list[int] = []
    real = mistral._convert_turn  # noqa: SLF001

    def spy(turn: list[Any], model: Model, ids: ToolCallIds) -> list[dict[str, Any]]:
        converted.append(len(turn))
        return real(turn, model, ids)

    monkeypatch.setattr(mistral, "_convert_turn", spy)
    messages += [AssistantMessage(content=[TextContent(text="done")], provider="mistral", api="mistral-conversations",
                                  model="mistral-large", stop_reason="stop"), UserMessage(content="more")]
    body = request(model, messages)
    assert converted == [2, 2]  # the last turn of the request before (never kept: its items are handed out) and the new one
    assert body == whole(model, messages)
    ids = [call["id"] for item in body for call in item.get("tool_calls", [])]
    assert len(ids) == len(set(ids)) == 200 and all(len(i) == 9 for i in ids)
