"""Requests on a long conversation reuse the turns of the previous request (O(new) per turn) in the
Anthropic, OpenAI Responses and Gemini providers, as in openai-completions (test_ai_request_turn_cache.py);
what is sent must be what converting everything afresh sends."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.ai import Context, Model, transform_messages
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
from plugins.providers import anthropic, google, openai_responses

#: provider module -> (the payload's field of messages, the model the conversation was held with)
PROVIDERS: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "anthropic": (anthropic, "messages", {"api": anthropic.API, "provider": "anthropic", "id": "claude"}),
    "openai-responses": (openai_responses, "input", {"api": openai_responses.API, "provider": "openai", "id": "gpt"}),
    "google": (google, "contents", {"api": google.API, "provider": "google", "id": "gemini-2.5-flash"}),
}


def model(name: str, **changes: Any) -> Model:
    base = dict(base_url="http://127.0.0.1:9", reasoning=True, context_window=1_000_000, max_tokens=1000,
                input=["text", "image"], **PROVIDERS[name][2])
    return Model(**{**base, **changes})


def turn(name: str, n: int, *, answered: bool = True, other: bool = False, failed: bool = False) -> list[Any]:
    """One answer with thinking (signed), two texts and tool calls, then its results (an image now and
    then, an error now and then); ``other``: made by another provider's model."""
    own = PROVIDERS[name][2]
    calls = [ToolCall(id=f"call_{n}_{k}|fc_{n}_{k}", name="read", arguments={"n": n}, thought_signature="QUJDRA==")
             for k in range(1 + n % 2)]
    assistant = AssistantMessage(
        content=[ThinkingContent(thinking=f"hmm {n}", thinking_signature="QUJDRA==" if n % 3 else None),
                 TextContent(text=f"t{n}"), TextContent(text=f"u{n}"), *calls],
        api="elsewhere" if other else own["api"], provider="elsewhere" if other else own["provider"],
        model=own["id"], stop_reason="error" if failed else "toolUse")
    out: list[Any] = [assistant]
    for call in calls if answered else calls[:-1]:
        content: list[Any] = [TextContent(text=f"r{n}")]
        if n % 6 == 2:
            content.append(ImageContent(data="aGVsbG8=", mime_type="image/png"))
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=content, is_error=n % 4 == 0))
    return out


def grow(name: str, messages: list[Any], n: int) -> list[Any]:
    """``messages`` with answer ``n`` added (the same objects stay: the agent's transcript grows so)."""
    messages += turn(name, n, answered=n % 5 != 3, other=n % 4 == 1, failed=n % 7 == 4)
    if n % 3 == 0:
        messages.append(UserMessage(content=f"steer {n}"))
    return messages


def conversation(name: str, turns: int) -> list[Any]:
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(turns):
        grow(name, messages, n)
    return messages


def request(name: str, m: Model, messages: list[Any], *, fresh: bool = False,
            options: StreamOptions | None = None) -> list[dict[str, Any]]:
    module, field, _ = PROVIDERS[name]
    if fresh:
        module._TURNS.clear()  # noqa: SLF001 - the reference: nothing reused
    built = module.build_payload(m, Context(system_prompt="s", messages=list(messages)), options or StreamOptions())
    payload = built[0] if isinstance(built, tuple) else built
    return list(payload[field])


@pytest.mark.parametrize("name", PROVIDERS)
def test_a_growing_conversation_sends_what_a_fresh_conversion_sends(name: str) -> None:
    m = model(name)
    PROVIDERS[name][0]._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(14):
        got = request(name, m, grow(name, messages, n))  # the turns of the round before reused
        assert got == request(name, m, messages, fresh=True)
        request(name, m, messages)  # warm again for the next round, as the agent's next turn finds it


@pytest.mark.parametrize("name", PROVIDERS)
def test_a_turn_on_a_long_conversation_converts_only_what_is_new(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = PROVIDERS[name][0]
    m = model(name)
    module._TURNS.clear()  # noqa: SLF001
    converted: list[int] = []
    original = module._convert_turn  # noqa: SLF001

    def counting(messages: list[Any], *args: Any) -> Any:
        converted.append(len(messages))
        return original(messages, *args)

    monkeypatch.setattr(module, "_convert_turn", counting)
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(200):
        messages += turn(name, n)
    request(name, m, messages)
    assert len(converted) == 201  # the first request converts every turn
    converted.clear()
    messages += turn(name, 200)
    got = request(name, m, messages)
    assert len(converted) == 2  # the turn that was last (it may have grown) and the new one
    assert got == request(name, m, messages, fresh=True)


@pytest.mark.parametrize("name", PROVIDERS)
def test_models_do_not_share_turns(name: str) -> None:
    messages = conversation(name, 6)
    for m in (model(name), model(name, id="other"), model(name, input=["text"]), model(name, provider="q"),
              model(name, id="gemini-3-pro"), model(name)):
        assert request(name, m, messages) == request(name, m, messages, fresh=True)


@pytest.mark.parametrize("name", PROVIDERS)
def test_changes_to_a_payload_do_not_reach_the_next_request(name: str) -> None:
    m = model(name)
    messages = [*conversation(name, 3), UserMessage(content="and")]
    before = request(name, m, messages, fresh=True)
    changed = request(name, m, messages)
    changed[0]["role"] = "changed by a plugin"
    changed[-1]["role"] = "changed too"
    changed.append({"role": "user", "content": "extra"})
    assert request(name, m, messages) == before


def test_anthropic_marks_the_last_user_block_only_and_names_tools_for_the_sign_in() -> None:
    m = model("anthropic")
    anthropic._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(6):  # each request reuses the turns of the one before, whose last block was marked
        got = request("anthropic", m, grow("anthropic", messages, n))
        assert got[-1]["role"] == "user" and got[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert sum("cache_control" in str(item) for item in got) == 1
    names = []
    for key in ("sk-ant-api03-x", "sk-ant-oat01-x", "sk-ant-api03-x"):  # an API key, a Claude sign-in
        got = request("anthropic", m, messages, options=StreamOptions(api_key=key))
        names.append(got[1]["content"][-1]["name"])
    assert names == ["read", "Read", "read"]


def test_results_after_a_failed_answer_keep_their_order() -> None:
    """A failed answer is left out of a request; results stored after one (an edited file: pi runs no
    tool of a failed answer) follow the results before them in a user message of their own, which the
    Messages API joins with the one before."""
    failed = AssistantMessage(content=[ToolCall(id="late", name="read", arguments={})], provider="anthropic",
                              api=anthropic.API, model="claude", stop_reason="error")
    late = ToolResultMessage(tool_call_id="late", tool_name="read", content=[TextContent(text="late")])
    got = request("anthropic", model("anthropic"), [UserMessage(content="go"), *turn("anthropic", 0), failed, late],
                  fresh=True)
    ids = [block["tool_use_id"] for item in got[2:] for block in item["content"]]
    assert ids == ["call_0_0|fc_0_0", "late"] and all(item["role"] == "user" for item in got[2:])


def test_responses_number_assistant_texts_across_reused_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model("openai-responses")
    openai_responses._TURNS.clear()  # noqa: SLF001
    messages = conversation("openai-responses", 10)
    request("openai-responses", m, messages)
    converted: list[int] = []
    original = openai_responses._convert_turn  # noqa: SLF001

    def counting(turn_messages: list[Any], model_: Model, offset: int) -> Any:
        converted.append(offset)
        return original(turn_messages, model_, offset)

    monkeypatch.setattr(openai_responses, "_convert_turn", counting)
    got = request("openai-responses", m, grow("openai-responses", grow("openai-responses", messages, 10), 11))
    # turns reused up to the old last one, which starts at its place in the whole transformed conversation
    old_last = [i for i, message in enumerate(messages) if message.role == "assistant"][9]
    place = len(transform_messages(messages[:old_last], m, openai_responses.normalize_tool_call_id))
    assert len(converted) == 3 and converted[0] == place > 20
    assert got == request("openai-responses", m, messages, fresh=True)


def test_gemini_results_of_one_answer_share_a_content() -> None:
    got = request("google", model("google"), conversation("google", 6), fresh=True)
    merged = [c for c in got if c["role"] == "user" and len(c["parts"]) > 1
              and all("functionResponse" in p for p in c["parts"])]
    assert merged
