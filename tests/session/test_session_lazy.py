"""Opening a file reads entries on demand: the result must be exactly what the writer held in memory.

A session is built through the public API with every entry type, branches, compactions and context
edits; the manager that wrote it (whose entries are the dicts it appended) is compared with the same
file reopened (whose entries are scanned and read back from the file when asked for): contexts at
every leaf, typed messages, the tree, labels, the name, raw entries. Then torn tails and a broken line
in the middle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_core import SessionManager
from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage


def _assistant(text: str, call: str | None = None) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)]
    if call:
        content.append(ToolCall(id=call, name="read", arguments={"path": f"{call}.py"}))
    return AssistantMessage(content=content, provider="p", model="m", usage=Usage(input=10, output=2),
                            stop_reason="toolUse" if call else "stop")


def build(directory: Path) -> tuple[SessionManager, list[str]]:
    """A session with every entry type; returns it (still open) and the ids of some leaves."""
    s = SessionManager.create(directory, directory)
    s.append_message({"role": "system", "content": "", "sections": {"preamble": "be good"},
                      "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}],
                      "timestamp": 1})
    s.append_model_change("p", "m")
    s.append_thinking_level_change("high")
    first = s.append_message(UserMessage(content=[TextContent(text="hello")]))
    leaves = []
    for n in range(30):
        s.append_message(_assistant(f"turn {n}", f"c{n}"))
        s.append_message(ToolResultMessage(tool_call_id=f"c{n}", tool_name="read",
                                           content=[TextContent(text="x" * (n * 37))]))
        if n == 5:
            s.append_custom_entry("plugin.state", {"n": n})
            s.append_label_change(first, "start")
            s.append_session_info("a name")
            s.append_custom_message_entry("note", "remember this", display=True, details={"k": 1})
        if n == 9:
            failed = s.append_message(AssistantMessage(content=[], provider="p", model="m",
                                                       stop_reason="error", error_message="boom"))
            s.append_context_edit(failed, None)
        if n == 12:
            leaves.append(s.get_leaf_id())
            s.branch(first)
            s.append_message(_assistant("another way"))
            leaves.append(s.get_leaf_id())
            s.branch_with_summary(leaves[0], "tried another way")
        if n == 20:
            kept = s.get_raw_branch()[-6]["id"]
            s.append_compaction("summary of the start", kept, 1234, {"readFiles": ["a"]})
        if n == 25:
            target = s.get_raw_branch()[-2]["id"]
            s.append_context_edit(target, {"content": "shorter"})
    s.append_usage("summary", "p", "m", {"input": 1, "output": 1})
    s.append_message(_assistant("done"))
    leaves.append(s.get_leaf_id())
    return s, leaves


def same_view(a: SessionManager, b: SessionManager, leaves: list[Any]) -> None:
    assert a.raw_entries() == b.raw_entries()
    assert a.get_leaf_id() == b.get_leaf_id()
    assert a.get_session_name() == b.get_session_name()
    assert [a.get_label(e["id"]) for e in a.raw_entries()] == [b.get_label(e["id"]) for e in b.raw_entries()]
    for leaf in [*leaves, None, "no-such-entry"]:
        ca, cb = a.build_session_context(leaf), b.build_session_context(leaf)
        assert list(ca.raw_messages) == list(cb.raw_messages)
        assert ca.source_ids == cb.source_ids
        assert (ca.thinking_level, ca.model) == (cb.thinking_level, cb.model)
        assert list(ca.messages) == list(cb.messages)
        assert ca.to_llm() == cb.to_llm()
    assert [n.id for n in a.get_tree()] == [n.id for n in b.get_tree()]
    assert [e.to_json() for e in a.get_entries()] == [e.to_json() for e in b.get_entries()]


def test_reopened_file_gives_what_the_writer_had(tmp_path: Path) -> None:
    written, leaves = build(tmp_path)
    reopened = SessionManager.open(written.session_file, read_only=True)
    same_view(written, reopened, leaves)
    assert reopened.diagnostics == []
    written.close()


def test_entries_are_read_only_when_asked_for(tmp_path: Path) -> None:
    written, _ = build(tmp_path)
    written.close()
    reopened = SessionManager.open(written.session_file, read_only=True)
    records = reopened._tree.records  # noqa: SLF001 - what was parsed is the point of this test
    loaded_at_open = sum(records.is_loaded(n) for n in range(len(records)))
    assert loaded_at_open <= 3  # the label and the session name; no message
    context = reopened.build_session_context()
    assert sum(records.is_loaded(n) for n in range(len(records))) < len(records) // 2
    assert len(list(context.raw_messages)) == len(context.source_ids)


@pytest.mark.parametrize("tail", [b'{"type":"message","id":"zz', b'{"type":"custom","customType":"x","id":"t1",'
                                  b'"parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}', b"   "])
def test_torn_and_unterminated_tails(tmp_path: Path, tail: bytes) -> None:
    written, leaves = build(tmp_path)
    written.close()
    file = written.session_file
    before = file.read_bytes()
    file.write_bytes(before + tail)
    view = SessionManager.open(file, read_only=True)
    assert file.read_bytes() == before + tail  # a read-only view changes nothing
    full = SessionManager.open(file)  # repairs the tail, then appends
    same_view(view, full, leaves[:-1])
    full.append_message(UserMessage(content=[TextContent(text="after the tail")]))
    full.close()
    again = SessionManager.open(file, read_only=True)
    assert again.build_session_context().raw_messages[-1]["content"][0]["text"] == "after the tail"


def test_a_broken_line_in_the_middle_is_skipped_and_linked_around(tmp_path: Path) -> None:
    written, _ = build(tmp_path)
    written.close()
    file = written.session_file
    lines = file.read_bytes().split(b"\n")
    victim = next(n for n, line in enumerate(lines) if b'"turn 3"' in line)
    broken_id = json.loads(lines[victim])["id"]
    lines[victim] = lines[victim][:-40] + b"#broken"  # its start (type, id, parentId) survives
    file.write_bytes(b"\n".join(lines))
    original = file.read_bytes()
    view = SessionManager.open(file)
    assert [d.line for d in view.diagnostics] == [victim + 1]
    assert "line" in view.diagnostics[0].message
    context = view.build_session_context()
    texts = [b.get("text") for m in context.raw_messages for b in m.get("content") or [] if isinstance(b, dict)]
    assert "turn 2" in texts or "summary of the start" in json.dumps(list(context.raw_messages))
    assert broken_id not in context.source_ids
    assert view.get_raw_branch()[0]["message"]["role"] == "system"  # the path still reaches the root
    view.close()
    assert file.read_bytes() == original  # the bad line stays on disk untouched


def test_custom_entries_are_found_without_reading_the_branch(tmp_path: Path) -> None:
    written, _ = build(tmp_path)
    written.append_custom_entry("other.plugin", {"x": 1})
    written.close()
    reopened = SessionManager.open(written.session_file, read_only=True)
    records = reopened._tree.records  # noqa: SLF001 - what was parsed is the point of this test
    found = reopened.get_custom_entries("plugin.state")
    assert [e["data"] for e in found] == [{"n": 5}]
    assert [e["customType"] for e in reopened.get_custom_entries()] == ["plugin.state", "other.plugin"]
    assert sum(records.is_loaded(n) for n in range(len(records))) <= 5
    reopened.branch(reopened.raw_entries()[3]["id"])  # before the entry: not on this branch
    assert reopened.get_custom_entries("plugin.state") == []
    assert len(reopened.get_custom_entries("plugin.state", branch=False)) == 1


@pytest.mark.parametrize("block", [7, 64, 1000, 1 << 16])
@pytest.mark.parametrize("bom", [False, True])
def test_the_scan_reads_the_same_at_any_block_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    block: int, bom: bool) -> None:
    """The scan reads the file in blocks into one reused buffer; lines that cross a block, lines longer
    than the buffer, a byte-order mark, blank lines and a torn tail must give what the writer had."""
    from pi_core.session import scan

    written, leaves = build(tmp_path)
    written.append_message(UserMessage(content=[TextContent(text="long " * 5000)]))  # longer than a block
    leaves.append(written.get_leaf_id())
    written.close()
    file = written.session_file
    data = file.read_bytes()
    lines = data.split(b"\n")
    lines.insert(7, b"")  # a blank line in the middle (skipped, like pi)
    data = b"\n".join(lines) + b'{"type":"message","id":"torn'
    file.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    monkeypatch.setattr(scan, "_BLOCK", block)
    reopened = SessionManager.open(file, read_only=True)
    same_view(written, reopened, leaves)
    assert [d.kind for d in reopened.diagnostics] == ["torn_tail"]
    records = reopened._tree.records  # noqa: SLF001 - each offset must point at its entry's own line
    assert [records.peek(at) for at in range(len(records))] == written.raw_entries()
    assert reopened.build_session_context().raw_messages[-1]["content"][0]["text"].startswith("long long")


def test_paths_asked_in_any_order_match_a_fresh_open(tmp_path: Path) -> None:
    """The index keeps the last path it walked and extends it for an entry below it: asking for the
    context at every entry, in an order that jumps between branches, gives what a fresh open gives."""
    written, _ = build(tmp_path)
    ids = [e["id"] for e in written.raw_entries()]
    order = ids[::3] + ids[1::3][::-1] + ids[2::3] + ids[::-1]
    warm = SessionManager.open(written.session_file, read_only=True)
    for entry_id in order:
        cold = SessionManager.open(written.session_file, read_only=True)
        a, b = warm.build_session_context(entry_id), cold.build_session_context(entry_id)
        assert list(a.raw_messages) == list(b.raw_messages) and a.source_ids == b.source_ids
        assert (a.thinking_level, a.model) == (b.thinking_level, b.model)
        assert warm.get_raw_branch(entry_id) == cold.get_raw_branch(entry_id)
        cold.close()
    # the writer's own index grew entry by entry: its paths came from extending the cached one
    same_view(written, warm, [None])
    written.close()


def _line(**fields: Any) -> str:
    return json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", **fields}) + "\n"


def test_compaction_keeps_from_the_first_entry_of_the_path_with_that_id(tmp_path: Path) -> None:
    """The kept range of a compaction starts at the first entry of its path with ``firstKeptEntryId``:
    with unique ids (found through the id index), with an id written twice (lookups take the later
    entry, as pi's ``Map.set``; here the path loops back through it) and with an id not on the path."""
    def message(entry_id: str, parent: str | None, text: str) -> str:
        return _line(type="message", id=entry_id, parentId=parent,
                     message={"role": "user", "content": text, "timestamp": 1})

    head = _line(type="session", version=3, id="s", cwd=str(tmp_path))
    body = [message("a", None, "A"), message("b", "a", "B"), message("c", "b", "C"),
            message("d", "c", "D")]
    unique = head + "".join(body) + _line(type="compaction", id="k", parentId="d", summary="S",
                                          firstKeptEntryId="c", tokensBefore=1)
    twice = head + "".join(body) + message("c", "d", "C again") + \
        _line(type="compaction", id="k", parentId="c", summary="S", firstKeptEntryId="c", tokensBefore=1)
    missing = head + "".join(body) + _line(type="compaction", id="k", parentId="d", summary="S",
                                           firstKeptEntryId="zz", tokensBefore=1)
    expected = {"unique": ["C", "D"], "twice": ["C again"], "missing": []}
    for name, text in (("unique", unique), ("twice", twice), ("missing", missing)):
        file = tmp_path / f"{name}.jsonl"
        file.write_text(text)
        s = SessionManager.open(file, read_only=True)
        messages = list(s.build_session_context().raw_messages)
        assert messages[0]["role"] == "compactionSummary"
        assert [m["content"] for m in messages[1:]] == expected[name], name
        s.close()
