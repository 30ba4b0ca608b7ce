"""Version 1 and 2 files are migrated on load, by pi's rules, and rewritten once.

``migration/*.pi-migrated.jsonl`` is what pi 1.6.0's own ``migrateSessionEntries`` made of the file next
to it (new ids are random, so records are compared with ids matched up by position).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_core import SessionManager

MIGRATION = Path(__file__).resolve().parent.parent / "fixtures" / "session" / "migration"
HEX8 = re.compile(r"^[0-9a-f]{8}$")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def without_ids(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with every generated id replaced by its position, so two migrations compare."""
    position = {r["id"]: f"#{i}" for i, r in enumerate(recs) if "id" in r and i > 0}
    out = []
    for record in recs:
        copy = dict(record)
        for key in ("id", "parentId", "firstKeptEntryId"):
            if isinstance(copy.get(key), str) and copy[key] in position:
                copy[key] = position[copy[key]]
        out.append(copy)
    return out


@pytest.fixture(params=["v1", "v2"])
def old_file(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    target = tmp_path / f"{request.param}.jsonl"
    shutil.copyfile(MIGRATION / f"{request.param}.jsonl", target)
    return request.param, target


def test_migrates_like_pi_and_rewrites_the_file_once(old_file: tuple[str, Path]) -> None:
    name, path = old_file
    pi = records(MIGRATION / f"{name}.pi-migrated.jsonl")
    with SessionManager.open(path) as manager:
        migrated = [manager.get_header().to_json(), *manager.raw_entries()]
    on_disk = records(path)
    assert without_ids(on_disk) == without_ids(pi)
    assert without_ids(migrated) == without_ids(pi)
    assert on_disk[0]["version"] == 3
    rewritten = path.read_bytes()
    with SessionManager.open(path):  # already v3: nothing to do
        pass
    assert path.read_bytes() == rewritten


def test_v1_entries_get_a_chain_of_fresh_ids(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(MIGRATION / "v1.jsonl", path)
    with SessionManager.open(path) as manager:
        entries = manager.raw_entries()
        ids = [e["id"] for e in entries]
        assert all(HEX8.match(i) for i in ids) and len(set(ids)) == len(ids)
        assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
        assert manager.get_leaf_id() == ids[-1]
        compactions = [e for e in entries if e["type"] == "compaction"]
        # index 8 counts the header as record 0: the user message "Open a.py"
        assert manager.get_raw_entry(compactions[0]["firstKeptEntryId"])["message"]["content"][0][
            "text"] == "Open a.py"
        assert all("firstKeptEntryIndex" not in c for c in compactions)
        assert "firstKeptEntryId" not in compactions[1]  # index 0 is the header
        assert "firstKeptEntryId" not in compactions[2]  # points ahead of itself: no id yet
        header = manager.get_header().to_json()
        assert header["branchedFrom"].endswith("earlier.jsonl")  # legacy fields are kept


def test_v2_hook_messages_become_custom(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    shutil.copyfile(MIGRATION / "v2.jsonl", path)
    with SessionManager.open(path) as manager:
        assert manager.get_raw_entry("a3")["message"]["role"] == "custom"
        context = manager.build_session_context()
        assert [m.role for m in context.messages] == ["compactionSummary", "assistant", "user"]
        manager.branch("a3")
        custom = manager.build_session_context().to_llm()[-1]
        assert custom.role == "user" and custom.content[0].text == "Remember the tests."


def test_read_only_migrates_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(MIGRATION / "v1.jsonl", path)
    before = path.read_bytes()
    manager = SessionManager.open(path, read_only=True)
    assert manager.get_header().version == 3 and all("id" in e for e in manager.raw_entries())
    assert path.read_bytes() == before


def test_fork_from_an_old_file_migrates_the_copy_only(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(MIGRATION / "v1.jsonl", path)
    before = path.read_bytes()
    forked = SessionManager.fork_from(path, tmp_path / "elsewhere", tmp_path / "out")
    copied = records(forked.session_file)
    forked.close()
    assert path.read_bytes() == before
    assert copied[0]["version"] == 3 and copied[0]["parentSession"] == str(path)
    assert all(HEX8.match(r["id"]) for r in copied[1:])
    assert without_ids(copied)[1:] == without_ids(records(MIGRATION / "v1.pi-migrated.jsonl"))[1:]
