"""Request building on a long conversation reuses the turns of the previous request (O(new) per turn);
the result must be what converting everything afresh gives, whatever changes between requests."""

from __future__ import annotations

from typing import Any

from pi_core.ai import Context, Model
from pi_core.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage
from plugins.providers import openai_completions
from plugins.providers.openai_completions import build_payload, convert_messages, get_compat
from pi_core.ai.options import StreamOptions


def model(**changes: Any) -> Model:
    base = dict(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9/v1",
                context_window=100_000, max_tokens=1000)
    return Model(**{**base, **changes})


def turn(n: int, *, answered: bool = True, other_model: bool = False) -> list[Any]:
    call = ToolCall(id=f"call|{n}", name="read", arguments={"path": f"f{n}.py"})
    assistant = AssistantMessage(content=[ThinkingContent(thinking=f"hmm {n}"), TextContent(text=f"t{n}"), call],
                                 provider="q" if other_model else "p", api="openai-completions",
                                 model="m", stop_reason="toolUse")
    out: list[Any] = [assistant]
    if answered:
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text=f"r{n}")]))
    return out


def fresh(m: Model, messages: list[Any]) -> list[dict[str, Any]]:
    openai_completions._TURNS.clear()  # noqa: SLF001 - the reference: no cache at all
    return convert_messages(m, Context(system_prompt="s", messages=messages), get_compat(m))


def cached(m: Model, messages: list[Any]) -> list[dict[str, Any]]:
    return convert_messages(m, Context(system_prompt="s", messages=messages), get_compat(m))


def test_growing_conversation_equals_a_fresh_conversion() -> None:
    m = model()
    openai_completions._TURNS.clear()  # noqa: SLF001
    messages: list[Any] = [UserMessage(content="go")]
    for n in range(12):
        messages += turn(n, answered=n % 5 != 3, other_model=n % 4 == 1)  # unanswered calls, handoffs
        if n % 3 == 0:
            messages.append(UserMessage(content=f"steer {n}"))
        got = cached(m, list(messages))
        assert got == fresh(m, list(messages))
        cached(m, list(messages))  # leave the cache warm for the next round


def test_an_edited_or_replaced_message_is_converted_again() -> None:
    m = model()
    messages: list[Any] = [UserMessage(content="go"), *turn(0), *turn(1), *turn(2)]
    cached(m, messages)
    edited = list(messages)
    edited[3] = ToolResultMessage(tool_call_id="call|1", tool_name="read", content=[TextContent(text="other")])
    assert cached(m, edited) == fresh(m, edited)
    shorter = messages[:3]  # a compaction or a tree move: fewer messages
    assert cached(m, shorter) == fresh(m, shorter)


def test_results_added_to_the_last_turn() -> None:
    m = model()
    first = turn(0, answered=False)[0]
    messages: list[Any] = [UserMessage(content="go"), first]
    cached(m, messages)
    result = ToolResultMessage(tool_call_id="call|0", tool_name="read", content=[TextContent(text="late")])
    grown = [*messages, result, UserMessage(content="next")]
    assert cached(m, grown) == fresh(m, grown)


def test_models_do_not_share_a_cache() -> None:
    messages: list[Any] = [UserMessage(content="go"), *turn(0, other_model=True), *turn(1)]
    a, b = model(), model(id="other", provider="q")
    for m in (a, b, a):
        assert cached(m, messages) == fresh(m, messages)


def test_changes_to_a_payload_do_not_reach_the_next_request() -> None:
    m = model()
    messages: list[Any] = [UserMessage(content="go"), *turn(0), *turn(1)]
    options = StreamOptions()
    before = fresh(m, messages)
    openai_completions._TURNS.clear()  # noqa: SLF001
    payload = build_payload(m, Context(system_prompt="s", messages=messages), options)
    payload["messages"][1]["content"] = "changed by the caller"
    payload["messages"].append({"role": "user", "content": "extra"})
    again = build_payload(m, Context(system_prompt="s", messages=messages), options)
    assert again["messages"] == before
