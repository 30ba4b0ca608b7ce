"""Anthropic requests on a long conversation reuse the turns of the previous request (O(new) per turn);
what is sent must be what converting everything afresh sends, prompt-cache marker included."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.ai import Context, Model
from pi_core.ai.options import StreamOptions
from pi_core.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from plugins.providers import anthropic
from plugins.providers.anthropic import API, build_payload

MARKER = {"type": "ephemeral"}


def model(**changes: Any) -> Model:
    base = dict(id="claude", api=API, provider="anthropic", base_url="http://127.0.0.1:9", reasoning=True,
                context_window=1_000_000, max_tokens=1000, input=["text", "image"])
    return Model(**{**base, **changes})


def turn(n: int, *, answered: bool = True, other_model: bool = False, image: bool = False) -> list[Any]:
    calls = [ToolCall(id=f"call|{n}.{k}", name="read", arguments={"path": f"f{n}.py"}) for k in range(1 + n % 2)]
    thinking = ThinkingContent(thinking=f"hmm {n}", thinking_signature=f"sig{n}" if n % 3 else None)
    assistant = AssistantMessage(content=[thinking, TextContent(text=f"t{n}"), *calls],
                                 provider="openai" if other_model else "anthropic",
                                 api="openai-responses" if other_model else API,
                                 model="gpt" if other_model else "claude", stop_reason="toolUse")
    out: list[Any] = [assistant]
    for call in calls if answered else calls[:-1]:
        content: list[Any] = [TextContent(text=f"r{n}")]
        if image:
            content.append(ImageContent(data="aGVsbG8=", mime_type="image/png"))
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=content, is_error=n % 4 == 0))
    return out


def request(m: Model, messages: list[Any], *, fresh: bool = False) -> list[dict[str, Any]]:
    if fresh:
        anthropic._TURNS.clear()  # noqa: SLF001 - the reference: nothing reused
    payload, _ = build_payload(m, Context(system_prompt="s", messages=list(messages)), StreamOptions())
    return list(payload["messages"])


def test_a_growing_conversation_sends_what_a_fresh_conversion_sends() -> None:
    m = model()
    anthropic._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(14):
        messages += turn(n, answered=n % 5 != 3, other_model=n % 4 == 1, image=n % 6 == 2)
        if n % 3 == 0:
            messages.append(UserMessage(content=f"steer {n}"))
        got = request(m, messages)
        assert got == request(m, messages, fresh=True)
        assert got[-1]["role"] == "user" and got[-1]["content"][-1]["cache_control"] == MARKER
        assert sum("cache_control" in str(item) for item in got) == 1  # only the last user block is marked
        request(m, messages)  # warm for the next round, as the agent's next turn finds it


def test_a_turn_on_a_long_conversation_converts_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model()
    anthropic._TURNS.clear()  # noqa: SLF001
    converted: list[int] = []
    original = anthropic._convert_turn  # noqa: SLF001

    def counting(turn: list[Any], *args: Any) -> list[dict[str, Any]]:
        converted.append(len(turn))
        return original(turn, *args)

    monkeypatch.setattr(anthropic, "_convert_turn", counting)
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(200):
        messages += turn(n)
    request(m, messages)
    assert len(converted) == 201  # the first request converts every turn
    converted.clear()
    messages += turn(200)
    request(m, messages)
    assert len(converted) == 2  # the turn that was last (it may have grown) and the new one


def test_changes_to_a_payload_do_not_reach_the_next_request() -> None:
    m = model()
    messages: list[Any] = [UserMessage(content="go"), *turn(0), *turn(1), UserMessage(content="and")]
    before = request(m, messages, fresh=True)
    payload, _ = build_payload(m, Context(system_prompt="s", messages=messages), StreamOptions())
    payload["messages"][1]["content"][0]["text"] = "changed by a plugin"
    payload["messages"].append({"role": "user", "content": "extra"})
    assert request(m, messages) == before


def test_models_and_sign_ins_do_not_share_turns() -> None:
    messages: list[Any] = [UserMessage(content="go"), *turn(0, other_model=True), *turn(1), *turn(2)]
    a, b, text_only = model(), model(id="other"), model(input=["text"])
    for m in (a, b, text_only, a):
        assert request(m, messages) == request(m, messages, fresh=True)
    anthropic._TURNS.clear()  # noqa: SLF001
    oauth = StreamOptions(api_key="sk-ant-oat01-x")
    key = StreamOptions(api_key="sk-ant-api03-x")
    names = []
    for options in (key, oauth, key):
        payload, _ = build_payload(a, Context(system_prompt="s", messages=messages), options)
        names.append(payload["messages"][1]["content"][-1]["name"])
    assert names == ["read", "Read", "read"]  # Claude Code's tool names only for the subscription


def test_results_after_a_failed_answer_keep_their_order() -> None:
    """A failed answer is left out of the request; results stored after one (a hand-edited file: pi runs
    no tool of a failed answer) follow the previous results in a user message of their own, which the API
    joins with the one before."""
    m = model()
    first = turn(0)
    failed = AssistantMessage(content=[ToolCall(id="late", name="read", arguments={})], provider="anthropic",
                              api=API, model="claude", stop_reason="error")
    late = ToolResultMessage(tool_call_id="late", tool_name="read", content=[TextContent(text="late")])
    got = request(m, [UserMessage(content="go"), *first, failed, late], fresh=True)
    ids = [block["tool_use_id"] for item in got[2:] for block in item["content"]]
    assert ids == ["call|0.0", "late"] and all(item["role"] == "user" for item in got[2:])
