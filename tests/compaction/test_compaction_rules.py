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
    estimate_tokens,
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
                for call, (_name, _path, result) in zip(calls, value):
                    manager.append_message(ToolResultMessage(tool_call_id=call.id, tool_name=call.name,
                                                             content=[TextContent(text=result)]))
    return manager


words = st.text(alphabet="abcdefgh ", min_size=1, max_size=80)
call = st.tuples(st.sampled_from(["read", "edit", "write", "bash"]), st.sampled_from(["a.py", "b.py", "c.md"]), words)
step = st.one_of(st.tuples(st.just("text"), words), st.tuples(st.just("calls"), st.lists(call, min_size=1, max_size=3)))
turn = st.builds(lambda u, rest: [("user", u), *rest], words, st.lists(step, max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.lists(turn, min_size=1, max_size=8), st.integers(min_value=1, max_value=300))
def test_cut_points_never_split_a_call_from_its_result(turns: list[Turn], keep: int) -> None:
    manager = build(turns)
    path = manager.get_raw_branch()
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep))
    if prep is None:
        return
    ids = [e["id"] for e in path]
    cut = ids.index(prep.first_kept_entry_id)
    kept = [e["message"] for e in path[cut:] if e["type"] == "message"]
    assert kept and kept[0]["role"] != "toolResult"
    kept_calls = {b["id"] for m in kept if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"}
    prefix_calls = {b["id"] for m in prep.turn_prefix_messages if m["role"] == "assistant"
                    for b in m["content"] if b["type"] == "toolCall"}
    for message in kept:
        if message["role"] == "toolResult":
            assert message["toolCallId"] in kept_calls | prefix_calls
    # the kept range is within budget: without its first entry it would be under keep_recent_tokens
    later = sum(estimate_tokens(m) for e in path[cut + 1:] if e["type"] == "message" for m in [e["message"]])
    cut_points_after = [n for n in range(cut + 1, len(path)) if path[n]["type"] == "message"
                        and path[n]["message"]["role"] != "toolResult"]
    assert later < keep or not cut_points_after
    summarized = prep.messages_to_summarize + prep.turn_prefix_messages
    assert len(summarized) + len(kept) == sum(1 for e in path if e["type"] == "message")


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
        return await session.compact()

    result = asyncio.run(scenario())
    assert result.summary.startswith("HISTORY PART\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX PART")
    prefix_request = faux.requests[-1].context.messages[0].content[0].text
    assert "Original Request" in prefix_request and "read big.txt twice please" in prefix_request


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
    request = summary_request(second.messages_to_summarize, previous_summary=second.previous_summary)
    body = request.messages[0].content[0].text
    assert "<previous-summary>\nFIRST SUMMARY\n</previous-summary>" in body and "happened after the summary" in body
    assert prepare_compaction([*manager.get_raw_branch()][:0], CompactionSettings()) is None


def test_context_edits_are_respected_when_preparing() -> None:
    manager = build([[("user", "keep me " * 5), ("text", "answer one " * 5)], [("user", "hide me " * 5),
                     ("text", "answer two " * 5)], [("user", "last " * 5), ("text", "final " * 5)]])
    hidden = next(e for e in manager.get_raw_branch() if e["type"] == "message"
                  and e["message"].get("content") == "hide me " * 5)
    manager.append_context_edit(hidden["id"], None)
    prep = prepare_compaction(manager.get_raw_branch(), CompactionSettings(keep_recent_tokens=10))
    assert prep is not None
    assert "hide me" not in serialize_conversation(prep.messages_to_summarize)
