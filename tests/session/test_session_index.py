"""Reopening a big session through its derived index gives exactly what a full scan gives.

The index (pi_core/session/scan_index.py) stands in for the part of the file it describes; whatever
happens to the file — lines appended by another program, a byte changed in the middle, a torn tail, the
index itself damaged — the scan must come out the same as scanning the whole file, and the index is
used only where it still matches.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core import SessionManager
from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_core.session import scan as scan_module
from pi_core.session import scan_index
from pi_core.session.scan import Scan, scan_session_file


def _columns(scan: Scan) -> dict[str, Any]:
    return {"header": scan.header, "types": scan.types, "ids": scan.ids, "parents": scan.parent_ids,
            "roles": scan.roles, "offsets": scan.offsets.tolist(), "lengths": scan.lengths.tolist(),
            "parsed": scan.parsed, "broken": scan.broken, "size": scan.size, "tail_offset": scan.tail_offset,
            "tail": scan.tail, "tail_parsed": scan.tail_parsed,
            "diagnostics": [(d.kind, d.message, d.line, d.offset) for d in scan.diagnostics]}


def _big_session(folder: Path, odd: bool = True) -> Path:
    """A >4 MiB session with branches, labels, a name, a custom entry and a malformed line (without ``odd``:
    only the branches and a custom entry)."""
    s = SessionManager.create(folder, folder)
    first = s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(160):
        s.append_message(AssistantMessage(content=[ToolCall(id=f"c{n}", name="read", arguments={"path": "f"})],
                                          provider="p", model="m", stop_reason="toolUse"))
        s.append_message(ToolResultMessage(tool_call_id=f"c{n}", tool_name="read",
                                           content=[TextContent(text=f"{n} " + "y" * 30_000)]))
        if n == 40:
            if odd:
                s.append_label_change(first, "start")
                s.append_session_info("indexed")
            s.append_custom_entry("plugin.state", {"n": n})
        if n == 80:
            s.branch(first)
    path = s.session_file
    assert path is not None
    s.close()
    if odd:
        lines = path.read_bytes().splitlines(keepends=True)
        lines.insert(100, b'{"type":"message","id":"broken01","parentId":null,"message":{oops\n')
        path.write_bytes(b"".join(lines))
    assert path.stat().st_size > scan_index.MIN_SIZE
    return path


@pytest.fixture
def scanned_from(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file offsets scans started reading at (0: a full scan)."""
    starts: list[int] = []
    real = scan_module._read_blocks

    def spy(handle: Any, scanner: Any, base: int = 0, line: int = 0) -> tuple[int, int]:
        starts.append(base)
        return real(handle, scanner, base, line)

    monkeypatch.setattr(scan_module, "_read_blocks", spy)
    return starts


def test_a_reopened_file_is_read_from_its_index_and_scans_the_same(tmp_path: Path, scanned_from: list[int]) -> None:
    path = _big_session(tmp_path)
    full = _columns(scan_session_file(path))
    assert full["diagnostics"] and full["parsed"]  # the odd cases are in the file
    assert _columns(scan_session_file(path, use_index=True)) == full  # builds the index
    assert list(scan_index.index_dir().glob("*.idx"))
    assert _columns(scan_session_file(path, use_index=True)) == full
    assert scanned_from == [0, 0, path.stat().st_size]  # the last one read nothing but the index


def test_lines_another_program_appends_are_scanned_after_the_index(tmp_path: Path, scanned_from: list[int]) -> None:
    path = _big_session(tmp_path)
    scan_session_file(path, use_index=True)
    indexed_size = path.stat().st_size
    last = scan_session_file(path).ids[-1]
    with open(path, "ab") as out:  # what pi does: one line per entry, no lock
        out.write(json.dumps({"type": "message", "id": "appended", "parentId": last, "timestamp": "t",
                              "message": {"role": "user", "content": "more", "timestamp": 1}}).encode() + b"\n")
        out.write(b'{"type":"label","id":"lab2","parentId":"appended","targetId":"appended","label":"x"}\n')
        out.write(b'{"type":"message","id":"torn"')  # and a write cut short
    reopened = scan_session_file(path, use_index=True)
    assert _columns(reopened) == _columns(scan_session_file(path))
    assert reopened.ids[-2:] == ["appended", "lab2"] and reopened.tail == b'{"type":"message","id":"torn"'
    assert scanned_from[-2] == indexed_size


@pytest.mark.parametrize("damage", ["byte in the middle", "shorter file", "damaged index"])
def test_an_index_that_no_longer_matches_is_not_used(tmp_path: Path, scanned_from: list[int], damage: str) -> None:
    path = _big_session(tmp_path)
    scan_session_file(path, use_index=True)
    data = bytearray(path.read_bytes())
    if damage == "byte in the middle":
        at = data.index(b"y" * 100, len(data) // 2)
        data[at] = ord("z")  # same length, same line structure: only the content check can tell
        path.write_bytes(bytes(data))
    elif damage == "shorter file":
        path.write_bytes(bytes(data[:data.rindex(b"\n", 0, len(data) // 2) + 1]))
    else:
        for index in scan_index.index_dir().glob("*.idx"):
            index.write_bytes(b"\x93not an index" + index.read_bytes()[:100])
    assert _columns(scan_session_file(path, use_index=True)) == _columns(scan_session_file(path))
    assert scanned_from[-2] == 0


def _tree(nodes: list[Any]) -> list[Any]:
    return [(node.raw, node.label, _tree(node.children)) for node in nodes]


def _state(session: SessionManager) -> tuple[Any, ...]:
    return (list(session.build_session_context().raw_messages), _tree(session.get_tree()),
            session.get_session_name(), session.get_leaf_id())


def test_the_session_opened_through_its_index_has_the_same_context(tmp_path: Path) -> None:
    path = _big_session(tmp_path)
    first = SessionManager.open(path, read_only=True)  # scans the whole file and writes the index
    before = _state(first)
    first.close()
    again = SessionManager.open(path)  # from the index, for writing: appends go after what it holds
    assert _state(again) == before
    again.append_message(UserMessage(content=[TextContent(text="after the index")]))
    again.close()
    reopened = SessionManager.open(path, read_only=True)  # the index, then the appended line
    state = _state(reopened)
    reopened.close()
    assert state[0][-1]["content"][0]["text"] == "after the index"
    assert state == _without_index(path)


def _without_index(path: Path) -> tuple[Any, ...]:
    for index in scan_index.index_dir().glob("*.idx"):
        index.unlink()
    session = SessionManager.open(path, read_only=True)
    try:
        return _state(session)
    finally:
        session.close()


def test_a_later_line_reusing_an_id_is_indexed_as_a_whole_scan_would(tmp_path: Path) -> None:
    path = _big_session(tmp_path)
    SessionManager.open(path, read_only=True).close()
    records = [json.loads(line) for line in path.read_bytes().splitlines()[1:20] if line.startswith(b'{"type":"message"')]
    reused = {**records[3], "parentId": records[-1]["id"]}  # an id seen before, now elsewhere in the tree
    with open(path, "ab") as out:
        out.write(json.dumps(reused).encode() + b"\n")
    session = SessionManager.open(path, read_only=True)
    state = _state(session)
    session.close()
    assert state == _without_index(path)


@pytest.fixture
def crc_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes the index check summed (on any thread)."""
    runs: list[int] = []
    real = scan_index.prefix_crc

    def spy(path: Any, size: int, verified: Any = None, **options: Any) -> Any:
        runs.append(size)
        return real(path, size, verified, **options)

    monkeypatch.setattr(scan_index, "prefix_crc", spy)
    return runs


def test_a_check_started_early_stands_in_for_the_one_at_open(tmp_path: Path, scanned_from: list[int],
                                                              crc_runs: list[int]) -> None:
    path = _big_session(tmp_path)
    full = _columns(scan_session_file(path, use_index=True))  # writes the index
    crc_runs.clear()
    scan_index.check_early(path)
    reopened = scan_session_file(path, use_index=True)
    assert _columns(reopened) == full and reopened.verified  # the turn store's checkpoints come along
    assert len(crc_runs) == 1 and scanned_from[-1] == path.stat().st_size  # summed once, on the early thread


@pytest.mark.parametrize("change", ["same size, other bytes", "appended"])
def test_an_early_check_is_not_trusted_once_the_file_changed(tmp_path: Path, scanned_from: list[int],
                                                             crc_runs: list[int], change: str) -> None:
    path = _big_session(tmp_path)
    scan_session_file(path, use_index=True)
    scan_index.check_early(path)
    scan_index._early[os.path.abspath(path)].thread.join()  # the check has seen the file as it was
    data = bytearray(path.read_bytes())
    if change == "appended":
        data += b'{"type":"label","id":"late","parentId":null,"targetId":"broken01","label":"x"}\n'
    else:
        at = data.index(b"y" * 100, len(data) // 2)
        data[at] = ord("z")
    path.write_bytes(bytes(data))
    crc_runs.clear()
    assert _columns(scan_session_file(path, use_index=True)) == _columns(scan_session_file(path))
    assert crc_runs  # the open checked again itself
    if change != "appended":
        assert scanned_from[-2] == 0  # and found the index stale


def test_an_early_check_of_a_path_that_is_no_session_costs_nothing(tmp_path: Path) -> None:
    scan_index.check_early(tmp_path / "missing.jsonl")
    scan_index.check_early(tmp_path)  # a folder
    small = tmp_path / "small.jsonl"
    small.write_text('{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n')
    scan_index.check_early(small)
    assert _columns(scan_session_file(small, use_index=True)) == _columns(scan_session_file(small))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), max_size=90),
       st.lists(st.tuples(st.sampled_from(["get", "in", "item", "add", "len", "values"]),
                          st.sampled_from("abcdefghxyz")), max_size=30))
def test_the_deferred_id_map_answers_as_the_map_would(ids: list[str], operations: list[tuple[str, str]]) -> None:
    # A tree read from the session index builds its id -> position map only when a lookup needs it
    # (pi_core.session.index._Positions); until then it answers from the ids list. Any sequence of lookups
    # and appends must give what the map built at once gives (the last position of a repeated id).
    from pi_core.session.index import _Positions

    deferred_ids, eager_ids = list(ids), list(ids)
    deferred, eager = _Positions(deferred_ids), dict(zip(eager_ids, range(len(eager_ids))))
    for operation, entry_id in operations:
        if operation == "get":
            assert deferred.get(entry_id, -7) == eager.get(entry_id, -7)
        elif operation == "in":
            assert (entry_id in deferred) == (entry_id in eager)
        elif operation == "item":
            assert (deferred[entry_id] if entry_id in eager else None) == eager.get(entry_id)
        elif operation == "add":  # what TreeIndex does for a new entry: the position, then the id
            deferred[entry_id] = len(deferred_ids)
            deferred_ids.append(entry_id)
            eager[entry_id] = len(eager_ids)
            eager_ids.append(entry_id)
        elif operation == "len":
            assert len(deferred) == len(eager)
        else:
            assert list(deferred.values()) == list(eager.values())
    assert list(deferred.values()) == list(eager.values())


@pytest.mark.parametrize("kept", ["on the branch", "on another branch", "unknown", "none"])
def test_a_compacted_session_opened_through_its_index_has_the_same_context(tmp_path: Path, kept: str) -> None:
    # The compaction window is found without the id map (TreeIndex.first_on_path) while the map is not built
    # (no label, no broken line: nothing at open looks an old id up).
    path = _big_session(tmp_path, odd=False)
    session = SessionManager.open(path)
    branch = [e["id"] for e in session.get_raw_branch()]
    other = next(e.id for e in session.get_entries() if e.id not in branch and e.type == "message")
    session.append_compaction("the story so far", branch[-40], tokens_before=1000)
    session.append_message(UserMessage(content=[TextContent(text="after the compaction")]))
    session.close()
    if kept != "on the branch":  # as another program may have written it
        first_kept = {"on another branch": f'"{other}"', "unknown": '"nosuchid"', "none": "null"}[kept]
        data = path.read_bytes()
        assert data.count(f'"firstKeptEntryId":"{branch[-40]}"'.encode()) == 1
        path.write_bytes(data.replace(f'"firstKeptEntryId":"{branch[-40]}"'.encode(),
                                      f'"firstKeptEntryId":{first_kept}'.encode()))
    SessionManager.open(path, read_only=True).close()  # index it as it is now
    reopened = SessionManager.open(path, read_only=True)
    state = _state(reopened)
    reopened.close()
    assert state == _without_index(path)
    assert state[0][-1]["content"][0]["text"] == "after the compaction"
    assert (len(state[0]) > 2) == (kept == "on the branch")  # the kept entries, the summary and the message
