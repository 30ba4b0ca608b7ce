"""The rules of where to cut, what to summarise and which files were touched (pure logic, real session trees)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core import AssistantMessage, SessionManager, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_core.ai.faux import FauxProvider, faux_tool_call
from pi_core.session.compaction import (
    CompactionSettings,
    conversation_chunks,
    estimate_projected_tokens,
    estimate_tokens,
    file_ops_of,
    fit_conversation,
    prepare_compaction,
    serialize_conversation,
    summary_request,
)

Turn = list[tuple[str, Any]]


def build(turns: list[Turn]) -> SessionManager:
    """A session from turns: ("user", text), ("text", text) assistant answers, ("calls", [(name, path, result)])."""
    manager = SessionManager.in_memory("/tmp/project")
    manager.append_model_change("p", "m")
    n = 0
    for turn in turns:
        for kind, value in turn:
            if kind == "user":
                manager.append_message(UserMessage(content=value))
            elif kind == "text":
                manager.append_message(AssistantMessage(content=[TextContent(text=value)], stop_reason="stop"))
            else:
                calls = []
                for name, path, _result in value:
                    n += 1
                    calls.append(ToolCall(id=f"c{n}", name=name, arguments={"path": path}))
                manager.append_message(AssistantMessage(content=calls, stop_reason="toolUse"))
                for call, (_name, _path, result) in zip(calls, value, strict=True):
                    manager.append_message(ToolResultMessage(tool_call_id=call.id, tool_name=call.name,
                                                             content=[TextContent(text=result)]))
    return manager


def visible_messages(manager: SessionManager) -> list[dict[str, Any]]:
    return [m for m in manager.build_session_context().raw_messages if m.get("role") != "system"]


words = st.text(alphabet="abcdefgh ", min_size=1, max_size=80)
call = st.tuples(st.sampled_from(["read", "edit", "write", "bash"]), st.sampled_from(["a.py", "b.py", "c.md"]), words)
step = st.one_of(st.tuples(st.just("text"), words), st.tuples(st.just("calls"), st.lists(call, min_size=1, max_size=3)))
turn = st.builds(lambda u, rest: [("user", u), *rest], words, st.lists(step, max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.lists(turn, min_size=1, max_size=8), st.integers(min_value=1, max_value=300),
       st.lists(st.integers(min_value=0, max_value=200), max_size=3))
def test_cut_points_never_split_a_call_from_its_result(turns: list[Turn], keep: int, hidden: list[int]) -> None:
    manager = build(turns)
    messages = [e for e in manager.get_raw_branch() if e["type"] == "message"]
    for n in hidden:  # some answers hidden by context edits, as retries and recoveries leave them
        target = messages[n % len(messages)]
        if target["message"]["role"] == "assistant" and not any(
                b["type"] == "toolCall" for b in target["message"]["content"]):
            manager.append_context_edit(target["id"], None)
    path = manager.get_raw_branch()
    context = manager.build_session_context()
    pairs = [(m, src) for m, src in zip(context.raw_messages, context.source_ids, strict=True)
             if m.get("role") != "system"]
    visible = [m for m, _ in pairs]
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep))
    if prep is None:
        return
    ids = [e["id"] for e in path]
    cut = ids.index(prep.first_kept_entry_id)
    kept_ids = set(ids[cut:])
    kept = [m for m, src in pairs if src in kept_ids]
    assert not kept or kept[0]["role"] != "toolResult"
    kept_calls = {b["id"] for m in kept if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"}
    prefix_calls = {b["id"] for m in prep.turn_prefix_messages if m["role"] == "assistant"
                    for b in m["content"] if b["type"] == "toolCall"}
    for message in kept:
        if message["role"] == "toolResult":
            assert message["toolCallId"] in kept_calls | prefix_calls
    # the kept range is within budget: without its first cut point it would be under keep_recent_tokens
    later = kept[1:]
    if any(m["role"] != "toolResult" for m in later):
        first_later = next(n for n, m in enumerate(later) if m["role"] != "toolResult")
        assert sum(estimate_tokens(m) for m in later[first_later:]) < keep
    # nothing is lost or doubled: what is summarised plus what is kept is what the model saw
    summarized = prep.messages_to_summarize + prep.turn_prefix_messages
    assert summarized + kept == visible


def test_a_single_long_turn_is_split_with_its_beginning_summarised_separately() -> None:
    long = "x" * 400
    manager = build([[("user", "short question"), ("text", "ok")],
                     [("user", "do the big task"), ("calls", [("read", "a.py", long)]), ("calls", [("read", "b.py", long)]),
                      ("calls", [("edit", "a.py", long)]), ("text", "done")]])
    prep = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=150))
    assert prep is not None and prep.is_split_turn
    assert prep.turn_prefix_messages[0]["role"] == "user" and prep.turn_prefix_messages[0]["content"] == "do the big task"
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]
    first_kept = manager.get_raw_entry(prep.first_kept_entry_id)["message"]
    assert first_kept["role"] == "assistant"
    assert prep.file_ops.details() == {"readFiles": ["a.py", "b.py"], "modifiedFiles": []}  # the edit is kept


def test_split_turn_summary_has_both_parts(tmp_path: Path) -> None:
    from pi_core import create_agent_session

    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 30}}))
    (tmp_path / "big.txt").write_text("y" * 600)
    faux = FauxProvider(seed=1)
    faux.enqueue("ok", [faux_tool_call("read", {"path": "big.txt"})], [faux_tool_call("read", {"path": "big.txt"})],
                 "finished", "HISTORY PART", "PREFIX PART")

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], tools=["read"],
                                             agent_dir=tmp_path / "agent")
        await session.prompt("a short first question")
        await session.prompt("read big.txt twice please")
        return await session.compact("mention sizes")

    result = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert result.summary.startswith("HISTORY PART\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX PART")
    prefix_request = faux.requests[-1].context.messages[0].content[0].text
    assert prefix_request.startswith("# Conversation\n[User]: read big.txt twice please")
    assert "## Original Request" in prefix_request and prefix_request.endswith("Additional focus: mention sizes")
    history_request = faux.requests[-2].context.messages[0].content[0].text
    assert "a short first question" in history_request and "read big.txt" not in history_request


def test_a_second_compaction_updates_the_first_summary_and_carries_files() -> None:
    manager = build([[("user", "q1 " * 10), ("calls", [("read", "a.py", "aaa"), ("edit", "b.py", "ok")]),
                      ("text", "t1 " * 10)],
                     [("user", "q2 " * 10), ("text", "t2 " * 10)]])
    first = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=5))
    assert first is not None and first.file_ops.details() == {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]}
    manager.append_compaction("FIRST SUMMARY", first.first_kept_entry_id, 100, first.file_ops.details())
    manager.append_message(UserMessage(content="q3 " * 10))
    manager.append_message(AssistantMessage(content=[ToolCall(id="z", name="read", arguments={"path": "c.md"})],
                                            stop_reason="toolUse"))
    manager.append_message(ToolResultMessage(tool_call_id="z", tool_name="read", content=[TextContent(text="c")]))
    manager.append_message(AssistantMessage(content=[TextContent(text="t3 " * 10)], stop_reason="stop"))
    manager.append_message(UserMessage(content="q4 " * 10))
    manager.append_message(AssistantMessage(content=[TextContent(text="t4 " * 10)], stop_reason="stop"))
    second = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=5))
    assert second is not None and second.previous_summary == "FIRST SUMMARY"
    assert second.file_ops.details() == {"readFiles": ["a.py", "c.md"], "modifiedFiles": ["b.py"]}
    # what the first compaction kept is summarised again now, with the new turns
    texts = serialize_conversation(second.messages_to_summarize)
    kept_before = manager.get_raw_entry(first.first_kept_entry_id)["message"]["content"][0]["text"]
    assert kept_before.startswith("t2") and "t2" in texts and "q3" in texts
    assert "q4" not in texts and "q1" not in texts and "q2" not in texts
    assert "FIRST SUMMARY" not in texts  # the summary is updated, not summarised as conversation
    request = summary_request(second.messages_to_summarize, previous_summary=second.previous_summary)
    body = request.messages[0].content[0].text
    assert "<previous-summary>\nFIRST SUMMARY\n</previous-summary>" in body and "happened after the summary" in body
    # a plugin's compaction carries no file lists forward: its details are its own
    manager.append_compaction("PLUGIN SUMMARY", second.first_kept_entry_id, 50, {"mine": 1}, True)
    manager.append_message(UserMessage(content="q5 " * 10))
    manager.append_message(AssistantMessage(content=[TextContent(text="t5 " * 10)], stop_reason="stop"))
    third = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=5))
    assert third is not None and third.file_ops.details() == {"readFiles": [], "modifiedFiles": []}


def test_nothing_to_prepare() -> None:
    assert prepare_compaction([], CompactionSettings()) is None
    small = build([[("user", "hi"), ("text", "hello")]])
    assert prepare_compaction(small.get_raw_branch(), CompactionSettings(keep_recent_tokens=1000)) is None
    small.append_compaction("S", None, 1)
    assert prepare_compaction(small.get_raw_branch(), CompactionSettings(keep_recent_tokens=1)) is None


def test_context_edits_are_respected_when_preparing() -> None:
    manager = build([[("user", "keep me " * 5), ("text", "answer one " * 5)], [("user", "hide me " * 5),
                     ("text", "answer two " * 5)], [("user", "last " * 5), ("text", "final " * 5)]])
    hidden = next(e for e in manager.get_raw_branch() if e["type"] == "message"
                  and e["message"].get("content") == "hide me " * 5)
    manager.append_context_edit(hidden["id"], None)
    prep = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=10))
    assert prep is not None
    assert "hide me" not in serialize_conversation(prep.messages_to_summarize)


def test_a_hidden_failed_answer_after_an_oversized_request_keeps_nothing() -> None:
    """pi 1.6's recovery rule: when the only thing after the cut is a failed answer that is hidden anyway,
    the oversized request itself is summarised rather than kept (keeping it would overflow again)."""
    manager = build([[("user", "first " * 20), ("text", "answer " * 20)], [("user", "huge " * 400)]])
    failed = manager.append_message(AssistantMessage(stop_reason="error", error_message="prompt is too long"))
    manager.append_context_edit(failed, None)
    prep = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=100))
    assert prep is not None and prep.first_kept_entry_id == failed
    assert "huge" in serialize_conversation(prep.messages_to_summarize + prep.turn_prefix_messages)
    manager.append_compaction("S", prep.first_kept_entry_id, prep.tokens_before)
    assert [m["role"] for m in visible_messages(manager)] == ["compactionSummary"]


def test_a_cut_pulled_back_over_silent_entries_is_not_a_split_turn() -> None:
    manager = build([[("user", "one " * 30), ("text", "two " * 30)]])
    manager.append_model_change("p", "other")
    manager.append_message(UserMessage(content="three " * 30))
    manager.append_message(AssistantMessage(content=[TextContent(text="four " * 30)], stop_reason="stop"))
    prep = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=60))
    assert prep is not None and not prep.is_split_turn and not prep.turn_prefix_messages
    assert manager.get_raw_entry(prep.first_kept_entry_id)["type"] == "model_change"
    assert [m["content"] for m in prep.messages_to_summarize if m["role"] == "user"] == ["one " * 30]


def test_token_estimates_count_as_javascript_does() -> None:
    assert estimate_tokens({"role": "user", "content": "abcd" * 3}) == 3
    assert estimate_tokens({"role": "user", "content": "\U0001F600" * 4}) == 2  # 8 UTF-16 units
    image = {"type": "image", "data": "x" * 100_000, "mimeType": "image/png"}
    assert estimate_tokens({"role": "user", "content": [{"type": "text", "text": "see"}, image]}) == 1201
    call = {"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "read",
                                              "arguments": {"path": "a b", "n": [1, 2]}}]}
    assert estimate_tokens(call) == -(-(4 + len('{"path":"a b","n":[1,2]}')) // 4)
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "a\nb"}) == 2


def test_projected_estimate_trusts_usage_only_after_the_last_edit() -> None:
    manager = build([[("user", "question " * 20)]])
    answer = manager.append_message(AssistantMessage(content=[TextContent(text="ok")], stop_reason="stop",
                                                     usage={"input": 900, "output": 100, "totalTokens": 1000}))
    manager.append_message(UserMessage(content="more " * 8))
    context = manager.build_session_context()
    path = manager.get_raw_branch()
    assert estimate_projected_tokens(context.raw_messages, context.source_ids, path) == 1000 + 10
    manager.append_context_edit(answer, {"content": "changed"})
    context = manager.build_session_context()
    estimated = estimate_projected_tokens(context.raw_messages, context.source_ids, manager.get_raw_branch())
    assert estimated == sum(estimate_tokens(m) for m in context.raw_messages)


def test_serialization_leaves_out_thinking_and_empty_results_and_keeps_javascript_json() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "secret plan"},
                                          {"type": "text", "text": "one"}, {"type": "text", "text": "two"},
                                          {"type": "toolCall", "id": "1", "name": "edit",
                                           "arguments": {"path": "é.py", "edits": [{"old": "x"}]}}]},
        {"role": "toolResult", "toolCallId": "1", "toolName": "edit", "content": [], "isError": False},
        {"role": "toolResult", "toolCallId": "2", "toolName": "bash", "content": [{"type": "text", "text": "z" * 2500}],
         "isError": False},
        {"role": "bashExecution", "command": "ls", "output": "f", "exitCode": 0},
    ]
    text = serialize_conversation(messages)
    blocks = text.split("\n\n")
    assert blocks[0] == "[User]: ab" and blocks[1] == "[Assistant]: one\ntwo"
    assert blocks[2] == '[Assistant tool calls]: edit(path="é.py", edits=[{"old":"x"}])'
    assert "secret plan" not in text and text.count("[Tool result]") == 1
    assert "z" * 2000 + "\n\n[... 500 more characters truncated]" in text
    bash = serialize_conversation(messages[-1:])
    assert bash.startswith("[User]: ") and "`ls`" in bash and text.endswith(bash)
    assert file_ops_of(messages).details() == {"readFiles": [], "modifiedFiles": ["é.py"]}
    nested = {"role": "toolResult", "toolCallId": "3", "toolName": "code", "content": [],
              "nestedCalls": {"calls": [{"name": "read", "arguments": {"path": "n.py"}}]}}
    assert file_ops_of([nested]).details() == {"readFiles": ["n.py"], "modifiedFiles": []}


def test_a_history_too_large_for_one_request_is_cut_into_pieces() -> None:
    messages = [{"role": "user", "content": f"message {n} " + "w" * 400} for n in range(50)]
    whole = serialize_conversation(messages)
    assert conversation_chunks(messages, 100_000) == [whole]
    chunks = conversation_chunks(messages, 1000)
    assert len(chunks) > 3 and "\n\n".join(chunks) == whole
    assert all(len(c) <= 4000 for c in chunks)
    giant = [{"role": "user", "content": "g" * 50_000}]
    [piece] = conversation_chunks(giant, 1000)
    assert len(piece) <= 4000 and piece.startswith("[User]: ggg") and "left out" in piece
    fitted = fit_conversation(messages, 1000)
    assert len(fitted) <= 4200 and fitted.startswith("[User]: message 0 ") and "message 49 " in fitted
    assert "parts of the conversation left out" in fitted
    assert fit_conversation(messages[:2], 1000) == serialize_conversation(messages[:2])
