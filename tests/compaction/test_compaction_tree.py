"""Tree navigation with branch summaries through a real session: placement, plugins, aborts, what the model sees."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from compaction_helpers import entries, new_session, run, user_texts

from pi_core import Cancel, TreeOverride, hookimpl
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_text
from pi_core.runtime.agent_session import SessionBusyError


class Tree:
    __name__ = "tree"

    def __init__(self, *decisions: Any) -> None:
        self.decisions = list(decisions)
        self.before: list[Any] = []
        self.moves: list[Any] = []

    @hookimpl
    def session_before_tree(self, event: Any) -> Any:
        self.before.append(event.preparation)
        return self.decisions.pop(0) if self.decisions else None

    @hookimpl
    def session_tree(self, event: Any) -> None:
        self.moves.append(event)


def test_branch_summary_is_attached_at_the_target_and_the_abandoned_branch_is_gone(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("answer A", "tried approach B and it failed", "BRANCH SUMMARY", "continuing from A")
    plugin = Tree()

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("question A")
        target = session.session.get_leaf_id()
        await session.prompt("try approach B")
        old_leaf = session.session.get_leaf_id()
        (tmp_path / "on-disk.txt").write_text("kept")
        result = await session.navigate_tree(target, summarize=True, label="back to A")
        await session.prompt("now try C")
        return session, target, old_leaf, result

    session, target, old_leaf, result = run(scenario())
    records = entries(session)
    summary = next(e for e in records if e["type"] == "branch_summary")
    assert summary["parentId"] == target and summary["fromId"] == old_leaf and summary["fromHook"] is False
    assert "BRANCH SUMMARY" in summary["summary"] and summary["details"] == {"readFiles": [], "modifiedFiles": []}
    assert result == {"cancelled": False, "summary_entry": summary}
    label = next(e for e in records if e["type"] == "label")
    assert label["targetId"] == summary["id"] and label["label"] == "back to A"  # pi: the label is on the summary
    after_label = next(e for e in records if e.get("parentId") == label["id"])
    assert after_label["message"]["content"][0]["text"] == "now try C"
    texts = user_texts(faux.requests[-1].context)
    assert texts[0] == "question A" and "BRANCH SUMMARY" in texts[1] and texts[-1] == "now try C"
    assert texts[1].startswith("What follows summarizes a branch") and texts[1].endswith("</summary>")
    assert "try approach B" not in json.dumps(texts)
    assert (tmp_path / "on-disk.txt").read_text() == "kept"  # navigation never touches files
    summary_request = faux.requests[2].context.messages[0].content[0].text
    assert "[User]: try approach B" in summary_request and "question A" not in summary_request
    assert "## Critical Context" not in summary_request and "## Next Steps" in summary_request
    [move] = plugin.moves
    assert (move.new_leaf_id, move.old_leaf_id, move.summary_entry, move.from_plugin) == \
        (label["id"], old_leaf, summary, False)  # as pi: the leaf after the label entry
    [prep] = plugin.before
    assert prep.target_id == target and prep.old_leaf_id == old_leaf and prep.user_wants_summary
    assert [e["message"]["role"] for e in prep.entries_to_summarize] == ["user", "assistant"]


def test_going_back_to_a_user_message_offers_it_for_editing(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two", "two again")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        before_second = session.session.get_leaf_id()
        await session.prompt("second, to be rewritten")
        second = next(e for e in reversed(session.session.get_raw_branch()) if e["type"] == "message"
                      and e["message"]["role"] == "user")
        assert await session.navigate_tree(session.session.get_leaf_id()) == {"cancelled": False}  # already there
        result = await session.navigate_tree(second["id"])
        assert session.session.get_leaf_id() == before_second
        await session.prompt("second, rewritten")
        return session, result

    session, result = run(scenario())
    assert result == {"cancelled": False, "editor_text": "second, to be rewritten"}
    assert not [e for e in entries(session) if e["type"] in ("branch_summary", "label")]
    assert user_texts(faux.requests[-1].context) == ["first", "second, rewritten"]  # nothing of the old branch


def test_plugin_decisions_cancel_replace_and_instruct(tmp_path: Path) -> None:
    plugin = Tree(Cancel("stay"), TreeOverride(summary="plugin summary", details={"by": "plugin"}, label="mine"),
                  TreeOverride(custom_instructions="ONLY LIST FILES", replace_instructions=True))
    faux = FauxProvider(seed=1)
    faux.enqueue("a", "b", "c", "instructed summary", "d")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        await session.prompt("two")
        leaf = session.session.get_leaf_id()
        assert await session.navigate_tree(target, summarize=True) == {"cancelled": True}
        assert session.session.get_leaf_id() == leaf and len(plugin.moves) == 0
        first = await session.navigate_tree(target, summarize=True)
        await session.prompt("three")
        await session.navigate_tree(target, summarize=True)
        await session.prompt("four")
        return session, target, first

    session, target, first = run(scenario())
    records = entries(session)
    summaries = [e for e in records if e["type"] == "branch_summary"]
    assert summaries[0]["summary"] == "plugin summary" and summaries[0]["fromHook"] is True
    assert summaries[0]["details"] == {"by": "plugin"} and first["summary_entry"]["id"] == summaries[0]["id"]
    assert next(e for e in records if e["type"] == "label")["targetId"] == summaries[0]["id"]
    instructed = faux.requests[3].context.messages[0].content[0].text
    assert instructed.endswith("</conversation>\n\nONLY LIST FILES") and "## Goal" not in instructed
    assert "[User]: three" in instructed and "[User]: two" not in instructed  # the branch just left
    assert [m.from_plugin for m in plugin.moves] == [True, False]
    assert user_texts(faux.requests[-1].context)[0] == "one" and user_texts(faux.requests[-1].context)[-1] == "four"


def test_a_plugin_summary_needs_the_user_to_want_one(tmp_path: Path) -> None:
    plugin = Tree(TreeOverride(summary="unwanted"))
    faux = FauxProvider(seed=1)
    faux.enqueue("a", "b")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        await session.prompt("two")
        return session, target, await session.navigate_tree(target)

    session, target, result = run(scenario())
    assert result == {"cancelled": False} and session.session.get_leaf_id() == target
    assert not [e for e in entries(session) if e["type"] == "branch_summary"]


def test_hidden_messages_of_the_abandoned_branch_stay_hidden_from_its_summary(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("a", "SECRET ANSWER", "summary")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        await session.prompt("two")
        session.session.append_context_edit(session.session.get_leaf_id(), None)
        await session.navigate_tree(target, summarize=True)

    run(scenario())
    request = faux.requests[2].context.messages[0].content[0].text
    assert "[User]: two" in request and "SECRET ANSWER" not in request


def test_aborting_a_branch_summary_stays_put(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("a", "b", FauxTurn([faux_text("slow")], delay=5))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        await session.prompt("two")
        leaf = session.session.get_leaf_id()
        before = session.session.session_file.read_text()
        task = asyncio.ensure_future(session.navigate_tree(target, summarize=True))
        while len(faux.requests) < 3:
            await asyncio.sleep(0.01)
        assert session.is_compacting
        with pytest.raises(SessionBusyError):
            await session.navigate_tree(target)
        await session.abort()
        result = await task
        assert session.session.get_leaf_id() == leaf and session.session.session_file.read_text() == before
        assert not session.is_compacting
        return result

    assert run(scenario()) == {"cancelled": True, "aborted": True}


def test_navigation_refuses_unknown_entries_and_running_sessions(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("a", FauxTurn([faux_text("slow answer")], delay=5))

    async def scenario() -> None:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        with pytest.raises(ValueError, match="no entry"):
            await session.navigate_tree("nope")
        task = asyncio.ensure_future(session.prompt("two"))
        while not session.is_streaming:
            await asyncio.sleep(0.01)
        with pytest.raises(SessionBusyError):
            await session.navigate_tree(target)
        await session.abort()
        await task

    run(scenario())
