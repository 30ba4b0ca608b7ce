"""Listing sessions (per project and across projects), continuing the most recent one, finding by id."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pi_core import SessionInfo, SessionManager
from pi_core.ai.types import AssistantMessage, TextContent, UserMessage

CONFORMANCE = Path(__file__).resolve().parent.parent / "fixtures" / "session" / "conformance"


def user(text: str, ts: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def reply(text: str, ts: int) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], provider="p", model="m",
                            stop_reason="stop", timestamp=ts)


def make(cwd: str | Path, first: str, ts: int, *, name: str | None = None,
         session_dir: Path | None = None) -> Path:
    manager = SessionManager.create(cwd, session_dir)
    manager.append_message(user(first, ts))
    manager.append_custom_entry("x", {"nested": {"type": "message", "role": "user"}})
    manager.append_message(reply("ok", ts + 10))
    if name:
        manager.append_session_info(name)
    manager.append_thinking_level_change("low")
    path = manager.session_file
    manager.close()
    return path


def test_list_gives_pi_fields_newest_first(isolated_home: Path) -> None:
    old = make("/w/proj", "older question", 1_700_000_000_000, name="Old one")
    new = make("/w/proj", "newer question", 1_800_000_000_000)
    make("/w/other", "elsewhere", 1_900_000_000_000)
    infos = SessionManager.list("/w/proj")
    assert [i.path for i in infos] == [new, old]
    first = infos[1]
    assert isinstance(first, SessionInfo)
    header = json.loads(old.read_text().splitlines()[0])
    assert first.id == header["id"] and first.cwd == "/w/proj" and first.name == "Old one"
    assert first.message_count == 2 and first.first_message == "older question"
    assert first.modified == datetime.fromtimestamp(1_700_000_000_010 / 1000, tz=timezone.utc)
    assert first.created.isoformat().startswith(header["timestamp"][:19])
    assert first.parent_session_path is None


def test_list_all_spans_every_project(isolated_home: Path) -> None:
    make("/w/a", "a", 1_000)
    make("/w/b", "b", 3_000)
    make("/w/c", "c", 2_000)
    assert [i.first_message for i in SessionManager.list_all()] == ["b", "c", "a"]


def test_custom_session_dir_is_filtered_by_cwd(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    make("/w/a", "mine", 1_000, session_dir=flat)
    make("/w/b", "theirs", 2_000, session_dir=flat)
    assert [i.first_message for i in SessionManager.list("/w/a", flat)] == ["mine"]
    assert len(SessionManager.list_all(flat)) == 2


def test_listing_ignores_what_is_not_a_session(isolated_home: Path) -> None:
    path = make("/w/p", "real", 1_000)
    (path.parent / "junk.jsonl").write_text("not json\n")
    (path.parent / "empty.jsonl").write_text("")
    (path.parent / "notes.txt").write_text("hello")
    assert [i.path for i in SessionManager.list("/w/p")] == [path]


def test_fast_listing_agrees_with_a_full_read(tmp_path: Path) -> None:
    """Files in pi's compact form are listed by byte search; a file written with spaces is read in
    full. Both must give the same row."""
    compact = make("/w/p", "same", 5_000, name="Named", session_dir=tmp_path / "c")
    spaced = tmp_path / "s" / compact.name
    spaced.parent.mkdir()
    spaced.write_text("".join(json.dumps(json.loads(x)) + "\n" for x in compact.read_text().splitlines()))
    fast, = SessionManager.list_all(tmp_path / "c")
    slow, = SessionManager.list_all(tmp_path / "s")
    assert fast.__dict__ | {"path": None} == slow.__dict__ | {"path": None}


def test_listing_the_recorded_pi_sessions(tmp_path: Path) -> None:
    for path in CONFORMANCE.glob("*/*/sessions/*/*.jsonl"):
        shutil.copyfile(path, tmp_path / path.name)
    infos = SessionManager.list_all(tmp_path)
    assert len(infos) == 11
    by_name = {i.path.name: i for i in infos}
    e_compaction = by_name["2026-12-02T14-29-33-188Z_01a23729-2582-74c2-8c0a-a2824a5bac34.jsonl"]
    assert e_compaction.message_count == 11  # the system message counts, as in pi
    assert e_compaction.first_message == "Remember: the project is called Zephyr."
    assert e_compaction.modified == datetime.fromtimestamp(1796221773612 / 1000, tz=timezone.utc)


def test_continue_recent_opens_the_newest_file(isolated_home: Path) -> None:
    older = make("/w/p", "older", 1_000)
    newer = make("/w/p", "newer", 2_000)
    os.utime(older, (2_000_000_000, 2_000_000_000))  # most recently modified wins, as in pi
    with SessionManager.continue_recent("/w/p") as manager:
        assert manager.session_file == older
    os.utime(newer, (2_100_000_000, 2_100_000_000))
    with SessionManager.continue_recent("/w/p") as manager:
        assert manager.session_file == newer
        manager.append_message(user("continued", 3_000))
    assert json.loads(newer.read_text().splitlines()[-1])["message"]["content"][0]["text"] == "continued"


def test_continue_recent_without_sessions_creates_one(isolated_home: Path) -> None:
    with SessionManager.continue_recent("/w/fresh") as manager:
        assert manager.raw_entries() == [] and not manager.session_file.exists()


def test_find_by_id(isolated_home: Path) -> None:
    path = make("/w/p", "x", 1)
    session_id = json.loads(path.read_text().splitlines()[0])["id"]
    assert SessionManager.find_by_id("/w/p", session_id) == path
    assert SessionManager.find_by_id("/w/p", "missing") is None


@pytest.mark.parametrize("header_only", [True, False])
def test_session_without_messages_uses_header_time(tmp_path: Path, header_only: bool) -> None:
    path = tmp_path / "s.jsonl"
    stamp = "2026-05-05T05:05:05.005Z"
    records = [{"type": "session", "version": 3, "id": "abc", "timestamp": stamp, "cwd": "/w"}]
    if not header_only:
        records.append({"type": "model_change", "id": "e1", "parentId": None, "timestamp": stamp,
                        "provider": "p", "modelId": "m"})
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    info, = SessionManager.list_all(tmp_path)
    assert info.message_count == 0 and info.first_message == "(no messages)"
    assert info.modified == datetime(2026, 5, 5, 5, 5, 5, 5000, tzinfo=timezone.utc)
