"""OpenAI Responses requests on a long conversation reuse the turns of the previous request (O(new) per
turn); the input items must be what converting everything afresh gives, the numbered ids of assistant
text items included (they count the messages of the whole conversation)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.ai import Context, Model
from pi_core.ai.options import StreamOptions
from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from plugins.providers import openai_responses
from plugins.providers.openai_responses import API, build_payload


def model(**changes: Any) -> Model:
    base = dict(id="gpt", api=API, provider="openai", base_url="http://127.0.0.1:9/v1", reasoning=True,
                context_window=1_000_000, max_tokens=1000, input=["text", "image"])
    return Model(**{**base, **changes})


def turn(n: int, *, answered: bool = True, failed: bool = False, other: bool = False) -> list[Any]:
    calls = [ToolCall(id=f"call_{n}_{k}|fc_{n}_{k}", name="read", arguments={"n": n}) for k in range(1 + n % 2)]
    assistant = AssistantMessage(content=[TextContent(text=f"t{n}"), TextContent(text=f"u{n}"), *calls],
                                 provider="anthropic" if other else "openai",
                                 api="anthropic-messages" if other else API, model="gpt",
                                 stop_reason="error" if failed else "toolUse")
    out: list[Any] = [assistant]
    for call in calls if answered else calls[:-1]:
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text=f"r{n}")]))
    return out


def request(m: Model, messages: list[Any], *, fresh: bool = False) -> list[dict[str, Any]]:
    if fresh:
        openai_responses._TURNS.clear()  # noqa: SLF001 - the reference: nothing reused
    payload = build_payload(m, Context(system_prompt="s", messages=list(messages)), StreamOptions())
    return list(payload["input"])


def test_a_growing_conversation_sends_what_a_fresh_conversion_sends() -> None:
    m = model()
    openai_responses._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(14):
        messages += turn(n, answered=n % 5 != 3, failed=n % 7 == 4, other=n % 4 == 1)
        if n % 3 == 0:
            messages.append(UserMessage(content=f"steer {n}"))
        got = request(m, messages)
        assert got == request(m, messages, fresh=True)
        request(m, messages)  # warm for the next round
    ids = [item["id"] for item in got if item.get("type") == "message"]
    assert len(ids) == len(set(ids)) and any(i.startswith("msg_pi_") and "_" in i[7:] for i in ids)


def test_a_turn_on_a_long_conversation_converts_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model()
    openai_responses._TURNS.clear()  # noqa: SLF001
    converted: list[int] = []
    original = openai_responses._convert_turn  # noqa: SLF001

    def counting(turn: list[Any], *args: Any) -> Any:
        converted.append(len(turn))
        return original(turn, *args)

    monkeypatch.setattr(openai_responses, "_convert_turn", counting)
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(200):
        messages += turn(n)
    request(m, messages)
    assert len(converted) == 201
    converted.clear()
    messages += turn(200)
    got = request(m, messages)
    assert len(converted) == 2
    assert got == request(m, messages, fresh=True)


def test_other_models_do_not_share_turns() -> None:
    messages: list[Any] = [UserMessage(content="go"), *turn(0, other=True), *turn(1), *turn(2)]
    for m in (model(), model(id="other"), model(provider="azure", api="azure-openai-responses"),
              model(input=["text"]), model()):
        assert request(m, messages) == request(m, messages, fresh=True)
