"""Gemini requests on a long conversation reuse the turns of the previous request (O(new) per turn); the
contents must be what converting everything afresh gives: consecutive tool results in one ``user`` content,
thought signatures only for the model that made them, tool call ids for the models that take them."""

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
from plugins.providers import google
from plugins.providers.google import API, build_payload


def model(**changes: Any) -> Model:
    base = dict(id="gemini-2.5-flash", api=API, provider="google", base_url="http://127.0.0.1:9", reasoning=True,
                context_window=1_000_000, max_tokens=1000, input=["text", "image"])
    return Model(**{**base, **changes})


def turn(n: int, *, answered: bool = True, other: bool = False) -> list[Any]:
    calls = [ToolCall(id=f"call {n}.{k}", name="read", arguments={"n": n}, thought_signature="QUJDRA==")
             for k in range(1 + n % 2)]
    assistant = AssistantMessage(content=[ThinkingContent(thinking=f"hmm {n}", thinking_signature="QUJDRA=="),
                                          TextContent(text=f"t{n}"), *calls],
                                 provider="anthropic" if other else "google", api=API,
                                 model="claude" if other else "gemini-2.5-flash", stop_reason="toolUse")
    out: list[Any] = [assistant]
    for call in calls if answered else calls[:-1]:
        content: list[Any] = [TextContent(text=f"r{n}")]
        if n % 6 == 2:
            content.append(ImageContent(data="aGVsbG8=", mime_type="image/png"))
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=content, is_error=n % 4 == 0))
    return out


def request(m: Model, messages: list[Any], *, fresh: bool = False) -> list[dict[str, Any]]:
    if fresh:
        google._TURNS.clear()  # noqa: SLF001 - the reference: nothing reused
    return list(build_payload(m, Context(system_prompt="s", messages=list(messages)), StreamOptions())["contents"])


@pytest.mark.parametrize("model_id", ["gemini-2.5-flash", "gemini-3-pro", "gemini-2.0-flash"])
def test_a_growing_conversation_sends_what_a_fresh_conversion_sends(model_id: str) -> None:
    m = model(id=model_id)
    google._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(14):
        messages += turn(n, answered=n % 5 != 3, other=n % 4 == 1)
        if n % 3 == 0:
            messages.append(UserMessage(content=f"steer {n}"))
        got = request(m, messages)
        assert got == request(m, messages, fresh=True)
        request(m, messages)
    merged = [c for c in got if c["role"] == "user" and len(c["parts"]) > 1
              and all("functionResponse" in p for p in c["parts"])]
    assert merged  # two results of one answer share a content


def test_a_turn_on_a_long_conversation_converts_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model()
    google._TURNS.clear()  # noqa: SLF001
    converted: list[int] = []
    original = google._convert_turn  # noqa: SLF001

    def counting(turn: list[Any], *args: Any) -> Any:
        converted.append(len(turn))
        return original(turn, *args)

    monkeypatch.setattr(google, "_convert_turn", counting)
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(200):
        messages += turn(n)
    request(m, messages)
    assert len(converted) == 201
    converted.clear()
    messages += turn(200)
    got = request(m, messages)
    assert len(converted) == 2  # the turn that was last (it may have grown) and the new one
    assert got == request(m, messages, fresh=True)
