"""The line format: JSON text as JavaScript writes it, typed entry views in pi's key order, unknown
types and fields kept, ids and timestamps, and the public names."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import pytest

import pi_core
from pi_core import (
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    SessionManager,
    UnknownEntry,
    UnknownMessage,
    convert_to_llm,
)
from pi_core.ai.types import TextContent, UserMessage
from pi_core.session.jsonfmt import dumps, js_number, loads

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "session"


def test_json_text_is_node_json_stringify() -> None:
    """node_stringify.jsonl: ~1000 doubles (random bit patterns and edge cases), big integers,
    integer-like keys, lone surrogates and control characters, each with node's output."""
    text = (FIXTURES / "node_stringify.jsonl").read_text(encoding="utf-8")
    cases = [json.loads(line) for line in text.split("\n") if line]  # (lines hold a raw U+2028)
    assert len(cases) > 1000
    for case in cases:
        assert dumps(loads(case["src"])) == case["out"], case["src"]


@pytest.mark.parametrize(("value", "text"), [
    (1.8e-05, "0.000018"), (5.0, "5"), (1e21, "1e+21"), (1e-7, "1e-7"), (-0.0, "0"),
    (123456789.125, "123456789.125"), (float("nan"), "null")])
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_loads_follows_json_parse() -> None:
    with pytest.raises(ValueError):
        loads("NaN")
    assert loads(b'{"a":"\xff"}') == {"a": "\ufffd"}  # invalid UTF-8 is replaced, as node decodes it


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def test_each_entry_type_is_written_in_pis_key_order(tmp_path: Path) -> None:
    manager = SessionManager.create("/w", tmp_path)
    first = manager.append_message(user("q"))
    manager.append_custom_entry("state", {"a": 1})
    manager.append_custom_entry("empty")
    manager.append_custom_message_entry("note", "hi", display=False, details={"d": 1})
    manager.append_context_edit(first, None)
    manager.append_label_change(first, "l")
    manager.append_session_info("n")
    manager.append_usage("cache_warm", "p", "m", {"input": 1, "output": 2}, note="warm")
    manager.append_compaction("s", first, 7, {"readFiles": []}, False, {"input": 3})
    keys = [list(json.loads(x)) for x in manager.session_file.read_text().splitlines()[1:]]
    manager.close()
    base = ["type", "id", "parentId", "timestamp"]
    assert keys == [
        base + ["message"],
        ["type", "customType", "data", "id", "parentId", "timestamp"],
        ["type", "customType", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        base + ["targetId", "replacement"],
        base + ["targetId", "label"],
        base + ["name"],
        base + ["kind", "provider", "model", "usage", "note"],
        base + ["summary", "firstKeptEntryId", "tokensBefore", "details", "usage", "fromHook"],
    ]


def test_typed_views_round_trip_to_the_same_json(tmp_path: Path) -> None:
    manager = SessionManager.in_memory("/w")
    first = manager.append_message(user("q"))
    manager.append_custom_entry("state", {"a": 1})
    manager.append_custom_message_entry("note", [{"type": "text", "text": "x"}])
    manager.append_context_edit(first, None)
    manager.append_compaction("s", first, 7)
    types = [type(e) for e in manager.get_entries()]
    assert types[1:] == [CustomEntry, CustomMessageEntry, ContextEditEntry, CompactionEntry]
    for entry, raw in zip(manager.get_entries(), manager.raw_entries(), strict=True):
        assert entry.to_json() == raw and list(entry.to_json()) == list(raw)
    edit = manager.get_entries()[3]
    assert edit.to_json()["replacement"] is None and edit.to_json()["targetId"] == first


def test_unknown_types_roles_and_fields_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    records = [
        {"type": "session", "version": 2, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
         "cwd": "/w", "futureHeaderField": [1, 2]},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1, "mood": "curious"},
         "entryExtra": {"x": None}},
        {"type": "hologram", "id": "h1", "parentId": "m1", "timestamp": "2026-01-01T00:00:02.000Z",
         "payload": {"deep": [1.5, "two"]}},
        {"type": "message", "id": "m2", "parentId": "h1", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "telepathy", "content": "?", "timestamp": 2}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with SessionManager.open(path) as manager:  # version 2: migrated and rewritten
        context = manager.build_session_context()
        assert [m.role for m in context.messages] == ["user"]  # unknown type and role say nothing
        assert context.messages[0].model_extra == {"mood": "curious"}
        assert isinstance(manager.get_entry("h1"), UnknownEntry)
        assert isinstance(manager.get_entry("m2").message, UnknownMessage)
        assert convert_to_llm([manager.get_entry("m2").message]) == []
    rewritten = [json.loads(x) for x in path.read_text().splitlines()]
    assert rewritten[0] == {**records[0], "version": 3}
    assert rewritten[1:] == records[1:]


def test_session_and_entry_ids_and_times() -> None:
    manager = SessionManager.in_memory("/w")
    assert uuid.UUID(manager.session_id).version == 7
    ids = {manager.append_message(user(str(n))) for n in range(200)}
    assert len(ids) == 200 and all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
    entry = manager.get_leaf_entry()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry.timestamp)
    with pytest.raises(ValueError, match="invalid session id"):
        SessionManager.create("/w", "/tmp/never-used", id="bad id!")


def test_public_names_are_exported_from_pi_core() -> None:
    for name in ("SessionManager", "SessionContext", "SessionInfo", "SessionLockedError",
                 "SessionTreeNode", "convert_to_llm", "MessageEntry", "CompactionEntry",
                 "BranchSummaryEntry", "ContextEditEntry", "SessionHeader", "BashExecutionMessage",
                 "CustomMessage", "BranchSummaryMessage", "CompactionSummaryMessage", "agent_dir"):
        assert getattr(pi_core, name) is not None and name in pi_core.__all__
    manager = SessionManager.in_memory("/w")
    for method in ("append_message", "append_model_change", "append_thinking_level_change",
                   "append_compaction", "append_custom_entry", "append_custom_message_entry",
                   "append_context_edit", "append_label_change", "append_session_info", "branch",
                   "reset_leaf", "branch_with_summary", "get_leaf_id", "get_entry", "get_entries",
                   "get_header", "get_tree", "get_children", "get_branch", "build_session_context"):
        assert callable(getattr(manager, method))
    for constructor in ("create", "open", "in_memory", "continue_recent", "list", "list_all",
                        "fork_from"):
        assert callable(getattr(SessionManager, constructor))


def test_conformance_entries_validate_as_typed_models(tmp_path: Path) -> None:
    for source in FIXTURES.glob("conformance/*/*/sessions/*/*.jsonl"):
        shutil.copyfile(source, tmp_path / source.name)
        manager = SessionManager.open(tmp_path / source.name, read_only=True)
        entries = manager.get_entries()
        assert not any(isinstance(e, UnknownEntry) for e in entries), source
        assert not any(isinstance(m, UnknownMessage) for m in manager.build_session_context().messages)
