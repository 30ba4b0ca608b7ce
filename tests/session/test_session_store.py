"""The file side: location and naming, deferred and append-only writes, torn tails, bad lines,
invalid files, the one-writer lock (in-process and across processes) and read-only views."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    InvalidSessionError,
    SessionConflictError,
    SessionLockedError,
    SessionManager,
    SessionReadOnlyError,
    agent_dir,
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


def written_session(tmp_path: Path, turns: int = 3) -> Path:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_model_change("p", "m")
    for n in range(turns):
        manager.append_message(user(f"question {n} é"))
        manager.append_message(reply(f"answer {n} ✓ ünïcödé"))
    path = manager.session_file
    manager.close()
    return path


# ---------------------------------------------------------------------------------------------
# where and when


def test_default_location_and_name_are_pis(isolated_home: Path) -> None:
    manager = SessionManager.create(CWD)
    manager.append_message(user("hi"))
    path = manager.session_file
    header = lines(path)[0]
    assert path.parent == agent_dir() / "sessions" / "--home-user-project--"
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    assert path.name == f"{stamp}_{header['id']}.jsonl"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", header["timestamp"])
    assert uuid.UUID(header["id"]).version == 7
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    manager.close()


def test_agent_dir_and_session_dir_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert agent_dir() == tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "flat"))
    manager = SessionManager.create(CWD)
    manager.append_message(user("hi"))
    assert manager.session_file.parent == tmp_path / "flat"
    manager.close()


def test_nothing_is_written_before_the_conversation_starts(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_model_change("p", "m")
    manager.append_thinking_level_change("off")
    manager.append_message({"role": "system", "content": "prompt", "timestamp": 1})
    assert not manager.session_file.exists()
    manager.append_message(user("hi"))
    recorded = lines(manager.session_file)
    assert [r["type"] for r in recorded] == ["session", "model_change", "thinking_level_change",
                                             "message", "message"]
    assert recorded[1]["parentId"] is None and recorded[2]["parentId"] == recorded[1]["id"]
    manager.close()


def test_each_entry_is_one_write_and_the_file_only_grows(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_message(user("hi"))
    before = manager.session_file.read_bytes()
    calls: list[bytes] = []
    real_write = os.write

    def counting_write(fd: int, data: bytes) -> int:
        calls.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counting_write)
    manager.append_message(reply("hello"))
    manager.append_label_change(manager.get_leaf_id(), "greeting")
    monkeypatch.setattr(os, "write", real_write)
    after = manager.session_file.read_bytes()
    assert len(calls) == 2 and all(c.endswith(b"\n") and c.count(b"\n") == 1 for c in calls)
    assert after == before + calls[0] + calls[1]
    manager.close()


def test_bad_input_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path)
    manager.append_message(user("hi"))
    before = manager.session_file.read_bytes()
    leaf = manager.get_leaf_id()
    with pytest.raises(ValueError):
        manager.append_custom_entry("x", {"not json": object()})
    with pytest.raises(ValueError):
        manager.append_message({"role": "user"})  # no content
    with pytest.raises(ValueError):
        manager.append_message({"role": "compactionSummary", "summary": "s"})
    assert manager.session_file.read_bytes() == before and manager.get_leaf_id() == leaf
    manager.append_message(reply("still fine"))
    assert len(lines(manager.session_file)) == 3
    manager.close()


# ---------------------------------------------------------------------------------------------
# damaged files


def test_torn_tail_at_every_byte_offset_keeps_all_complete_entries(tmp_path: Path) -> None:
    original = written_session(tmp_path / "src", turns=2)
    data = original.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    complete = lines(original)
    for cut in range(last_start, len(data) + 1):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_bytes(data[:cut])
        whole = cut >= len(data) - 1  # at most the newline is missing: the last entry is complete
        manager = SessionManager.open(path)
        expected = complete[1:] if whole else complete[1:-1]
        assert manager.raw_entries() == expected, cut
        manager.append_message(user("after the crash"))
        manager.close()
        reread = lines(path)  # every line parses: the fragment is gone, nothing before it changed
        assert reread[:-1] == [complete[0], *expected]
        assert reread[-1]["parentId"] == expected[-1]["id"]
        sidecars = list(tmp_path.glob(f"cut{cut}.jsonl.torn-*"))
        if whole or cut == last_start:
            assert sidecars == []
        else:
            assert len(sidecars) == 1 and sidecars[0].read_bytes() == data[last_start:cut]
            assert any(d.kind == "torn_tail" and d.sidecar == sidecars[0] for d in manager.diagnostics)


def test_torn_tail_read_only_is_ignored_without_touching_the_file(tmp_path: Path) -> None:
    original = written_session(tmp_path)
    data = original.read_bytes()[:-20]
    original.write_bytes(data)
    manager = SessionManager.open(original, read_only=True)
    assert [d.kind for d in manager.diagnostics] == ["torn_tail"]
    assert original.read_bytes() == data
    with pytest.raises(SessionReadOnlyError):
        manager.append_message(user("no"))
    assert original.read_bytes() == data


def test_malformed_lines_in_the_middle_are_skipped_and_kept(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    raw = path.read_text().splitlines(keepends=True)
    raw.insert(3, '{"type":"message","id":"broken","par\n')
    raw.insert(5, "\n")
    raw.insert(6, "[1, 2]\n")
    path.write_text("".join(raw))
    manager = SessionManager.open(path)
    assert [(d.kind, d.line) for d in manager.diagnostics] == [("malformed_line", 4),
                                                               ("malformed_line", 7)]
    assert len(manager.raw_entries()) == 7 and manager.get_raw_entry("broken") is None
    manager.append_message(user("more"))
    manager.close()
    text = path.read_text()
    assert '{"type":"message","id":"broken","par\n' in text and "[1, 2]\n" in text


def test_a_file_that_is_not_a_session_is_refused_untouched(tmp_path: Path) -> None:
    for content in (b"hello world", b'{"type":"message","id":"x"}\n{"a":1}', b"\x00\xff\xfe"):
        path = tmp_path / "not-a-session.jsonl"
        path.write_bytes(content)
        with pytest.raises(InvalidSessionError, match="not a valid pi session"):
            SessionManager.open(path)
        assert path.read_bytes() == content


def test_an_empty_file_becomes_a_new_session_with_its_header(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with SessionManager.open(path) as manager:
        header = lines(path)[0]
        assert header["type"] == "session" and header["id"] == manager.session_id
        manager.append_message(user("hi"))
    assert len(lines(path)) == 2


def test_a_torn_first_write_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "torn-header.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"01a2')
    with SessionManager.open(path) as manager:
        assert manager.raw_entries() == []
        manager.append_message(user("hi"))
    assert [r["type"] for r in lines(path)] == ["session", "message"]
    assert len(list(tmp_path.glob("torn-header.jsonl.torn-*"))) == 1


# ---------------------------------------------------------------------------------------------
# one writer


def test_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    first = SessionManager.open(path)
    with pytest.raises(SessionLockedError) as info:
        SessionManager.open(path)
    assert info.value.holder_pid == os.getpid() and str(path) in str(info.value)
    view = SessionManager.open(path, read_only=True)
    first.append_message(user("from the writer"))
    assert len(view.raw_entries()) == 7  # a view is a snapshot; reopen to see more
    first.close()
    SessionManager.open(path).close()  # released on close


WRITER = textwrap.dedent("""
    import sys, time
    from pi_core import SessionManager, SessionLockedError
    try:
        manager = SessionManager.open(sys.argv[1])
    except SessionLockedError as exc:
        print("LOCKED", exc.holder_pid, flush=True)
        sys.exit(3)
    manager.append_message({"role": "user", "content": "from " + sys.argv[2], "timestamp": 1})
    print("OPEN", flush=True)
    if sys.argv[2] == "holder":
        sys.stdin.readline()  # hold the lock until told
        manager.close()
""")


def run_writer(path: Path, role: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), role], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kw)


def test_two_processes_never_interleave(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    holder = run_writer(path, "holder")
    try:
        assert holder.stdout.readline().strip() == "OPEN"
        second = run_writer(path, "second")
        out, _ = second.communicate(timeout=30)
        assert second.returncode == 3 and out.split() == ["LOCKED", str(holder.pid)]
    finally:
        holder.communicate("\n", timeout=30)
    assert holder.returncode == 0
    again = run_writer(path, "second")  # the lock went with the holder
    out, _ = again.communicate(timeout=30)
    assert out.strip() == "OPEN"
    entries = lines(path)
    assert [e["message"]["content"] for e in entries[-2:]] == ["from holder", "from second"]
    assert entries[-1]["parentId"] == entries[-2]["id"]


def test_a_dead_writer_leaves_no_lock(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    code = ("import os, sys; from pi_core import SessionManager; "
            "m = SessionManager.open(sys.argv[1]); print('OPEN', flush=True); os._exit(9)")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=30)
    assert proc.stdout.strip() == "OPEN" and proc.returncode == 9
    with SessionManager.open(path) as manager:  # the OS dropped the dead process's lock
        manager.append_message(user("alive"))


def _line_of(path: Path, entry_id: str) -> dict:
    return next(r for r in map(json.loads, path.read_text().splitlines()) if r.get("id") == entry_id)


def test_a_foreign_append_is_merged_and_nothing_is_lost(tmp_path: Path) -> None:
    # Replaces the old SessionConflictError behaviour (issue #16: the run died and lost its answer).
    path = written_session(tmp_path)
    manager = SessionManager.open(path)
    leaf = manager.get_leaf_id()
    with open(path, "a") as other:  # a program that ignores the lock (for example pi itself)
        other.write('{"type":"custom","customType":"x","data":1,"id":"zz000001","parentId":"%s",'
                    '"timestamp":"2026-01-01T00:00:00.000Z"}\n' % leaf)
        other.write('{"type":"session_info","id":"zz000002","parentId":"zz000001",'
                    '"timestamp":"2026-01-01T00:00:00.000Z","name":"named elsewhere"}\n')
    mine = manager.append_message(user("mine"))
    # Their entries only continued our branch without touching the context: ours follows them.
    assert _line_of(path, mine)["parentId"] == "zz000002"
    assert manager.get_session_name() == "named elsewhere"
    with open(path, "a") as other:  # now a message on our branch: ours stays on what our model saw
        other.write(json.dumps({"type": "message", "id": "zz000003", "parentId": mine,
                                "timestamp": "2026-01-01T00:00:00.000Z",
                                "message": {"role": "user", "content": "theirs", "timestamp": 1}}) + "\n")
    second = manager.append_message(user("mine again"))
    assert _line_of(path, second)["parentId"] == mine
    manager.close()
    reopened = SessionManager.open(path, read_only=True)
    ids = [e["id"] for e in reopened.raw_entries()]
    assert {"zz000001", "zz000002", "zz000003", mine, second} <= set(ids)
    assert reopened.get_leaf_id() == second
    assert [m["content"][0]["text"] for m in reopened.build_session_context().raw_messages
            if m["role"] == "user"][-2:] == ["mine", "mine again"]


def test_a_truncated_file_is_not_written_to(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    manager = SessionManager.open(path)
    path.write_text(path.read_text()[:200])  # truncated by somebody: continuing would be wrong
    manager.append_message(user("mine"))  # kept in memory, not written after what we never saw
    assert isinstance(manager.write_error, SessionConflictError) and "truncated" in str(manager.write_error)
    assert path.stat().st_size == 200 and not Path(f"{path}.lock").exists()
    assert manager.get_raw_entry(manager.get_leaf_id())["message"]["content"][0]["text"] == "mine"
    manager.append_message(user("still in memory"))
    manager.close()
    assert path.stat().st_size == 200


def test_a_file_replaced_by_a_copy_is_followed(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    manager = SessionManager.open(path)
    copy = tmp_path / "copy.tmp"
    copy.write_bytes(path.read_bytes())
    copy.replace(path)  # what editors and sync tools do: a new file with the same bytes
    manager.append_message(user("mine"))
    assert manager.write_error is None
    manager.close()
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.get_raw_entry(reopened.get_leaf_id())["message"]["content"][0]["text"] == "mine"
    other = tmp_path / "other.tmp"  # replaced by something else: not followed
    other.write_bytes(path.read_bytes().replace(b'"mine"', b'"MINE"'))
    with SessionManager.open(path) as manager:
        other.replace(path)
        manager.append_message(user("lost?"))
        assert manager.write_error is not None and "replaced" in str(manager.write_error)
    assert b"lost?" not in path.read_bytes()


def test_closed_manager_refuses_appends(tmp_path: Path) -> None:
    path = written_session(tmp_path)
    manager = SessionManager.open(path)
    manager.close()
    with pytest.raises(Exception, match="closed"):
        manager.append_message(user("late"))
    assert len(manager.raw_entries()) == 7


def test_in_memory_sessions_write_nothing(tmp_path: Path, isolated_home: Path) -> None:
    manager = SessionManager.in_memory(tmp_path)
    manager.append_message(user("hi"))
    manager.append_message(reply("hello"))
    assert manager.session_file is None and not manager.is_persisted
    assert not (agent_dir() / "sessions").exists()
    assert list(tmp_path.iterdir()) == []
    assert len(manager.build_session_context().messages) == 2


def test_fsync_option_still_appends(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, tmp_path, fsync=True)
    manager.append_message(user("durable"))
    manager.append_message(reply("ok"))
    assert len(lines(manager.session_file)) == 3
    manager.close()
