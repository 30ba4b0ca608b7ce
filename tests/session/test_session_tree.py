"""Tree navigation, labels, names, fork and clone — through the public API, with real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    BranchSummaryEntry,
    EntryNotFoundError,
    LabelEntry,
    MessageEntry,
    SessionManager,
    SessionReadOnlyError,
    SessionTreeNode,
)
from pi_core.ai.types import AssistantMessage, TextContent, UserMessage

CWD = "/home/user/project"


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def reply(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], provider="p", model="m",
                            stop_reason="stop")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def text_of(entry: Any) -> str:
    content = entry.message.content
    return content if isinstance(content, str) else content[0].text


@pytest.fixture
def session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create(CWD, tmp_path)
    yield manager
    manager.close()


def test_every_append_is_a_child_of_the_leaf_and_becomes_the_leaf(session: SessionManager) -> None:
    ids = [session.append_message(user("q")),
           session.append_thinking_level_change("low"),
           session.append_model_change("p", "m"),
           session.append_custom_entry("state", {"a": 1}),
           session.append_custom_message_entry("note", "n"),
           session.append_session_info("name"),
           session.append_usage("cache_warm", "p", "m", {"input": 1}),
           session.append_compaction("s", None, 1)]
    ids.append(session.append_label_change(ids[0], "first"))
    ids.append(session.append_context_edit(ids[0], None))
    entries = session.raw_entries()
    assert [e["id"] for e in entries] == ids
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    assert session.get_leaf_id() == ids[-1]


def test_branch_and_reset_leaf_write_nothing(session: SessionManager) -> None:
    first = session.append_message(user("q1"))
    session.append_message(reply("a1"))
    size = session.session_file.stat().st_size
    session.branch(first)
    assert session.get_leaf_id() == first and session.session_file.stat().st_size == size
    sibling = session.append_message(reply("another a1"))
    assert session.get_raw_entry(sibling)["parentId"] == first
    session.reset_leaf()
    assert session.get_leaf_id() is None and session.build_session_context().messages == []
    root = session.append_message(user("new root"))
    assert session.get_raw_entry(root)["parentId"] is None
    with pytest.raises(EntryNotFoundError):
        session.branch("nope")


def test_leaf_is_restored_from_the_file_as_pi_does(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    first = manager.append_message(user("q"))
    last = manager.append_message(reply("a"))
    manager.branch(first)  # navigation that appends nothing is not remembered
    path = manager.session_file
    manager.close()
    with SessionManager.open(path) as reopened:
        assert reopened.get_leaf_id() == last


def test_branch_with_summary_hangs_off_the_target(session: SessionManager) -> None:
    root = session.append_message(user("start"))
    old_leaf = session.append_message(reply("explored"))
    summary = session.branch_with_summary(root, "what was explored", details={"readFiles": ["a"]})
    entry = session.get_entry(summary)
    assert isinstance(entry, BranchSummaryEntry)
    assert entry.parent_id == root and entry.from_id == old_leaf and session.get_leaf_id() == summary
    raw = session.get_raw_entry(summary)
    assert list(raw) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details"]
    session.reset_leaf()
    top = session.branch_with_summary(None, "from the top")
    assert session.get_raw_entry(top)["parentId"] is None
    assert session.get_raw_entry(top)["fromId"] == "root"
    with pytest.raises(EntryNotFoundError):
        session.branch_with_summary("nope", "x")


def test_tree_children_and_branches(session: SessionManager) -> None:
    root = session.append_message(user("root"))
    left = session.append_message(reply("left"))
    session.branch(root)
    right = session.append_message(reply("right"))
    tip = session.append_message(user("deeper"))
    session.append_label_change(left, "the left one")
    roots = session.get_tree()
    assert len(roots) == 1 and isinstance(roots[0], SessionTreeNode)
    assert roots[0].id == root and [c.id for c in roots[0].children] == [left, right]
    assert roots[0].children[0].label == "the left one"
    assert isinstance(roots[0].entry, MessageEntry) and text_of(roots[0].entry) == "root"
    assert [e.id for e in session.get_children(root)] == [left, right]
    assert [e.id for e in session.get_children(None)] == [root]
    assert [e.id for e in session.get_branch(tip)] == [root, right, tip]
    assert [e.id for e in session.get_branch()] == [root, right, tip, session.get_leaf_id()]
    session.branch(left)
    later = session.append_message(user("after left"))
    assert [e.id for e in session.get_children(left)] == [later]  # kept up to date


def test_labels_last_change_wins_and_clears(session: SessionManager) -> None:
    target = session.append_message(user("q"))
    session.append_label_change(target, "one")
    session.append_label_change(target, "two")
    assert session.get_label(target) == "two"
    cleared = session.append_label_change(target)
    assert "label" not in session.get_raw_entry(cleared) and session.get_label(target) is None
    assert isinstance(session.get_entry(cleared), LabelEntry)
    with pytest.raises(EntryNotFoundError):
        session.append_label_change("nope", "x")


def test_session_name_is_the_latest_and_survives_reopening(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_message(user("q"))
    manager.append_session_info("  first\r\nname  ")
    assert manager.get_session_name() == "first name"
    manager.append_session_info("second")
    path = manager.session_file
    manager.close()
    with SessionManager.open(path) as reopened:
        assert reopened.get_session_name() == "second"
        reopened.append_session_info("")
        assert reopened.get_session_name() is None


# ---------------------------------------------------------------------------------------------
# fork and clone


def test_create_branched_session_extracts_the_path_with_labels(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_model_change("p", "m")
    q1 = manager.append_message(user("q1"))
    label = manager.append_label_change(q1, "important")
    a1 = manager.append_message(reply("a1"))  # its parent is the label
    kept = manager.append_compaction("summary", a1, 5)
    manager.branch(q1)
    manager.append_message(reply("other branch"))
    old_file = manager.session_file
    old_id = manager.session_id
    new_file = manager.create_branched_session(kept)
    assert new_file != old_file and manager.session_file == new_file and manager.session_id != old_id
    written = lines(new_file)
    assert written[0]["parentSession"] == str(old_file)
    body = written[1:]
    assert [e["type"] for e in body] == ["model_change", "message", "message", "compaction", "label"]
    assert [e["parentId"] for e in body[:4]] == [None, body[0]["id"], q1, a1]  # label skipped
    assert body[4] == {"type": "label", "id": body[4]["id"], "parentId": kept,
                       "timestamp": body[4]["timestamp"], "targetId": q1, "label": "important"}
    assert body[4]["id"] != label
    assert manager.get_label(q1) == "important" and manager.get_leaf_id() == body[4]["id"]
    assert [m.role for m in manager.build_session_context().messages] == [
        "compactionSummary", "assistant"]
    assert len(lines(old_file)) == 7  # the old file is left as it was
    manager.append_message(user("continues in the new file"))
    manager.close()
    assert len(lines(new_file)) == 7


def test_branching_a_path_without_conversation_defers_the_file(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    change = manager.append_model_change("p", "m")
    manager.append_message(user("q"))
    new_file = manager.create_branched_session(change)
    assert not new_file.exists()
    manager.append_message(user("now"))
    assert [e["type"] for e in lines(new_file)] == ["session", "model_change", "message"]
    manager.close()


def test_clone_copies_the_active_branch_and_keeps_ids(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    q = manager.append_message(user("q"))
    a = manager.append_message(reply("a"))
    manager.branch(q)
    b = manager.append_message(reply("b"))
    original = manager.session_file
    clone = manager.clone()
    assert [e["id"] for e in lines(clone)[1:]] == [q, b]
    assert lines(clone)[0]["parentSession"] == str(original)
    assert manager.get_raw_entry(a) is None
    manager.close()


def test_fork_and_clone_release_the_old_file(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_message(user("q"))
    old = manager.session_file
    manager.clone()
    with SessionManager.open(old) as other:  # no longer locked by the first manager
        assert len(other.raw_entries()) == 1
    manager.close()


def test_in_memory_branching_stays_in_memory(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(tmp_path)
    q = manager.append_message(user("q"))
    assert manager.create_branched_session(q) is None
    assert manager.get_header().parent_session is None and len(manager.raw_entries()) == 1
    assert list(tmp_path.iterdir()) == []


def test_fork_from_copies_every_branch_into_another_project(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path / "a")
    q = manager.append_message(user("q"))
    manager.append_message(reply("a"))
    manager.branch(q)
    manager.append_message(reply("b"))
    source = manager.session_file
    manager.close()
    forked = SessionManager.fork_from(source, tmp_path / "other-project", tmp_path / "b")
    assert forked.get_header().cwd == str(tmp_path / "other-project")
    assert forked.get_header().parent_session == str(source)
    assert forked.raw_entries() == lines(source)[1:]
    forked.append_message(user("more"))
    forked.close()
    assert len(lines(forked.session_file)) == 5


def test_a_read_only_view_cannot_fork(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    q = manager.append_message(user("q"))
    path = manager.session_file
    manager.close()
    view = SessionManager.open(path, read_only=True)
    with pytest.raises(SessionReadOnlyError):
        view.create_branched_session(q)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
