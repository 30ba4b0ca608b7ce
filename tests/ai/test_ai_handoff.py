"""Cross-provider handoff rules (transform_messages) and their effect on each wire format."""

from __future__ import annotations

from pi_core.ai import (
    AssistantMessage,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    sanitize_id,
    transform_messages,
)

TARGET = Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic", input=["text"])


def assistant(*blocks, provider="openai", api="openai-responses", model="gpt-5", stop="toolUse") -> AssistantMessage:
    return AssistantMessage(content=list(blocks), api=api, provider=provider, model=model, stop_reason=stop)


def test_thinking_of_another_model_is_dropped() -> None:
    source = assistant(ThinkingContent(thinking="step by step", thinking_signature='{"id":"rs_1"}'),
                       ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="x", redacted=True),
                       ThinkingContent(thinking="   "), TextContent(text="done", text_signature="msg_1"), stop="stop")
    out = transform_messages([UserMessage(content="q"), source], TARGET)
    blocks = out[1].content
    assert [b.to_json() for b in blocks] == [{"type": "text", "text": "done"}]  # pi 1.6's rule


def test_same_model_keeps_signed_thinking_even_when_empty() -> None:
    same = assistant(ThinkingContent(thinking="", thinking_signature="sig"), ThinkingContent(thinking=" "),
                     TextContent(text="t", text_signature="s"), provider="anthropic", api="anthropic-messages",
                     model="claude-sonnet-4-5", stop="stop")
    out = transform_messages([UserMessage(content="q"), same], TARGET)[1]
    assert [b.type for b in out.content] == ["thinking", "text"] and out.content[1].text_signature == "s"


def test_tool_call_ids_are_normalised_and_results_follow() -> None:
    call = ToolCall(id="call_1|fc_a.b", name="read", arguments={"path": "x"}, thought_signature="gsig")
    result = ToolResultMessage(tool_call_id="call_1|fc_a.b", tool_name="read", content=[TextContent(text="ok")])
    out = transform_messages([UserMessage(content="q"), assistant(call), result], TARGET,
                             lambda i, m, s: sanitize_id(i, 64))
    new_call = out[1].content[0]
    assert new_call.id == "call_1_fc_a_b" and new_call.thought_signature is None and out[2].tool_call_id == new_call.id
    assert call.id == "call_1|fc_a.b"  # inputs are not modified


def test_long_ids_stay_distinct_after_truncation() -> None:
    a, b = "x" * 70 + "A", "x" * 70 + "B"
    assert sanitize_id(a, 64) != sanitize_id(b, 64) and len(sanitize_id(a, 64)) == 64


def test_errored_and_aborted_turns_are_skipped() -> None:
    aborted = assistant(TextContent(text="half"), ToolCall(id="c9", name="bash", arguments={}), stop="aborted")
    errored = assistant(TextContent(text="oops"), stop="error")
    out = transform_messages([UserMessage(content="a"), aborted, UserMessage(content="b"), errored,
                              UserMessage(content="c")], TARGET)
    assert [m.role for m in out] == ["user", "user", "user"]


def test_orphaned_tool_calls_get_synthetic_error_results() -> None:
    calls = assistant(ToolCall(id="c1", name="read", arguments={}), ToolCall(id="c2", name="ls", arguments={}))
    answered = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="ok")])
    out = transform_messages([UserMessage(content="a"), calls, answered, UserMessage(content="next")], TARGET)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "toolResult", "user"]
    synthetic = out[3]
    assert (synthetic.tool_call_id, synthetic.tool_name, synthetic.is_error) == ("c2", "ls", True)
    assert synthetic.content[0].text == "No result provided"
    at_end = transform_messages([UserMessage(content="a"), calls], TARGET)
    assert [m.tool_call_id for m in at_end[2:]] == ["c1", "c2"]


def test_system_messages_wait_until_pending_results_are_closed() -> None:
    calls = assistant(ToolCall(id="c1", name="read", arguments={}))
    note = SystemMessage(content="tools changed")
    out = transform_messages([UserMessage(content="a"), calls, note,
                              ToolResultMessage(tool_call_id="c1", tool_name="read", content=[])], TARGET)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "system"]


def test_images_become_placeholders_for_text_only_models() -> None:
    user = UserMessage(content=[TextContent(text="see"), ImageContent(data="AA", mime_type="image/png"),
                                ImageContent(data="BB", mime_type="image/png")])
    result = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[ImageContent(data="AA", mime_type="image/png")])
    out = transform_messages([user, assistant(ToolCall(id="c1", name="read", arguments={})), result], TARGET)
    assert [b.to_json() for b in out[0].content] == [
        {"type": "text", "text": "see"}, {"type": "text", "text": "(image omitted: model does not support images)"}]
    assert out[2].content[0].text == "(tool image omitted: model does not support images)"
    vision = TARGET.model_copy(update={"input": ["text", "image"]})
    assert transform_messages([user], vision)[0] is user
