"""Bad session files, stale locks and other writers (issue #16, the session-file part).

* hypothesis corrupts real pi 1.6.0 session files at random: opening and reading them never raises
  anything but a ``SessionError`` with a message, and never changes the file (a writer may only
  repair a torn tail or migrate, keeping a backup);
* the kinds of damage users and other tools cause, each through ``pi --session FILE -p``: no
  traceback, the answer or a one-line error naming the file, the original bytes kept;
* a lock whose owner died is taken over at once; a live one is a one-line message with the way out;
* old or odd headers: ``"version": "3"`` is left alone, a header that lost its version keeps its ids,
  a migration writes a backup first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_core import SessionError, SessionLockedError, SessionManager
from pi_core.ai.types import TextContent, UserMessage

REPO = Path(__file__).resolve().parents[2]
RECORDED = sorted((REPO / "tests" / "fixtures" / "ai" / "pi-1.6.0").glob("*/session.jsonl"))
sys.path.insert(0, str(REPO / "tests" / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402


def read_everything(path: Path, *, read_only: bool = True) -> SessionManager | None:
    """Everything a caller may do with an opened session; None if it is refused (with a message)."""
    try:
        manager = SessionManager.open(path, read_only=read_only)
    except SessionError as exc:
        assert str(path) in str(exc)
        return None
    context = manager.build_session_context()
    list(context.messages)
    context.to_llm()
    manager.get_tree()
    manager.get_entries()
    for entry in manager.raw_entries():
        manager.get_label(entry.get("id"))
    return manager


DAMAGE = st.sampled_from(["flip", "cut_line", "drop_line", "duplicate_line", "garbage_line", "nest",
                          "truncate", "swap_lines", "bom", "retype"])


def damage(data: bytes, how: str, draw: st.DataObject) -> bytes:
    lines = data.split(b"\n")
    n = draw.draw(st.integers(0, max(0, len(lines) - 2)))
    if how == "flip":
        if not data:
            return data
        at = draw.draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw.draw(st.integers(1, 255))]) + data[at + 1:]
    if how == "cut_line":
        lines[n] = lines[n][:draw.draw(st.integers(0, len(lines[n])))]
    elif how == "drop_line":
        del lines[n]
    elif how == "duplicate_line":
        lines.insert(n, lines[n])
    elif how == "garbage_line":
        lines.insert(n, draw.draw(st.binary(max_size=40)).replace(b"\n", b""))
    elif how == "nest":
        depth = draw.draw(st.sampled_from([50, 2_000, 100_000]))
        lines.insert(n, b'{"type":"message","id":"deep0001","parentId":null,"message":' + b"[" * depth
                     + b"]" * depth + b"}")
    elif how == "truncate":
        return data[:draw.draw(st.integers(0, len(data)))]
    elif how == "swap_lines":
        m = draw.draw(st.integers(0, max(0, len(lines) - 2)))
        lines[n], lines[m] = lines[m], lines[n]
    elif how == "bom":
        return b"\xef\xbb\xbf" + data
    elif how == "retype":  # a field of the wrong type, as hand edits and other tools leave
        try:
            record = json.loads(lines[n])
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            return b"\n".join(lines)
        key = draw.draw(st.sampled_from(["id", "parentId", "type", "message", "timestamp", "version"]))
        record[key] = draw.draw(st.one_of(st.integers(), st.none(), st.lists(st.integers(), max_size=2),
                                          st.just({"role": "assistant", "content": 5, "stopReason": "??"})))
        lines[n] = json.dumps(record).encode()
    return b"\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(RECORDED), hows=st.lists(DAMAGE, min_size=1, max_size=3), draw=st.data())
def test_random_damage_never_crashes_and_never_changes_the_file(tmp_path: Path, source: Path,
                                                                hows: list[str], draw: st.DataObject) -> None:
    data = source.read_bytes()
    for how in hows:
        data = damage(data, how, draw)
    path = tmp_path / f"fuzz-{time.monotonic_ns()}.jsonl"
    path.write_bytes(data)
    read_everything(path)
    assert path.read_bytes() == data  # a read-only view never writes
    manager = read_everything(path, read_only=False)
    after = path.read_bytes()
    backups = list(tmp_path.glob(f"{path.name}.bak-*"))
    if backups:  # migrated: the original is in the backup, byte for byte
        assert backups[0].read_bytes() == data
    elif after != data:  # only a torn or unterminated last line may have been repaired
        assert after.startswith(data[:data.rstrip(b"\n").rfind(b"\n") + 1])
    if manager is not None:
        manager.append_message(UserMessage(content=[TextContent(text="still works")]))
        manager.close()
        reopened = SessionManager.open(path, read_only=True)
        assert reopened.get_raw_entry(reopened.get_leaf_id())["message"]["content"][0]["text"] == "still works"


# ---------------------------------------------------------------------------------------------
# through the CLI


BASE = (REPO / "tests" / "fixtures" / "ai" / "pi-1.6.0" / "b_json_tools" / "session.jsonl").read_bytes()


def _edit(line: int, change: dict) -> bytes:
    lines = BASE.split(b"\n")
    record = json.loads(lines[line])
    for key, value in change.items():
        target = record
        *path, last = key.split(".")
        for part in path:
            target = target[part]
        target[last] = value
    lines[line] = json.dumps(record, separators=(",", ":")).encode()
    return b"\n".join(lines)


def _line_index(predicate: str) -> int:
    return next(n for n, line in enumerate(BASE.split(b"\n")) if predicate.encode() in line)


KINDS = {
    "wrong field type": _edit(_line_index('"role":"user"'), {"message.content": 42}),
    "bad stopReason": _edit(_line_index('"role":"assistant"'), {"message.stopReason": "exploded"}),
    "tokensBefore not a number": BASE + b'{"type":"compaction","id":"c0000001","parentId":null,'
                                        b'"timestamp":"2026-12-02T14:30:00.000Z","summary":"s",'
                                        b'"firstKeptEntryId":"441d2235","tokensBefore":"many"}\n',
    "BOM": b"\xef\xbb\xbf" + BASE,
    "deeply nested line": BASE.replace(b"\n", b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n", 2),
    "invalid JSON line": BASE.replace(b"\n", b'\n{"type":"message","id":\n', 3),
    "header without version": BASE.replace(b'"version":3,', b"", 1),
    "version as a string": BASE.replace(b'"version":3,', b'"version":"3",', 1),
    "message not an object": _edit(_line_index('"role":"toolResult"'), {"message": "oops"}),
    "header id not a string": BASE.replace(b'"id":"01a23728-fc8e-7005-81f4-7b268afc840e"', b'"id":7', 1),
    "not a session": b'{"hello":"world"}\n',
}


@pytest.fixture(scope="module")
def server() -> FakeOpenAI:
    with FakeOpenAI([{"text": "the answer"}] * 40) as fake:
        yield fake


@pytest.mark.parametrize("kind", list(KINDS))
def test_damaged_files_through_the_cli(tmp_path: Path, kind: str, server: FakeOpenAI) -> None:
    agent = tmp_path / "agent"
    write_agent_dir(agent, server.base_url)
    # the recorded session's cwd is pi's machine's; pi (and we) refuse to resume a session whose cwd is gone
    data = KINDS[kind].replace(b'"cwd":"/home/user/project"', b'"cwd":' + json.dumps(str(tmp_path)).encode(), 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                           "--session", str(path), "-p", "go on"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert "Traceback" not in done.stderr
    if kind in ("not a session", "header id not a string"):
        assert done.returncode == 1
        assert str(path) in done.stderr and "session check" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert path.read_bytes() == data
        return
    assert done.returncode == 0, done.stderr
    assert "the answer" in done.stdout
    backups = list(tmp_path.glob("s.jsonl.bak-*"))
    if kind == "header without version":
        assert backups and backups[0].read_bytes() == data
        ids = [r.get("id") for r in map(json.loads, path.read_text().splitlines()[1:])]
        original = [r.get("id") for r in map(json.loads, data.decode().splitlines()[1:])]
        assert ids[:len(original)] == original  # ids kept: the tree is not flattened
    else:
        assert not backups
        assert path.read_bytes().startswith(data)  # appended to, nothing before changed


# ---------------------------------------------------------------------------------------------
# locks


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    return path


def test_a_live_owner_gets_one_line_with_the_way_out(tmp_path: Path) -> None:
    path = _session(tmp_path)
    holder = SessionManager.open(path)
    with pytest.raises(SessionLockedError) as caught:
        SessionManager.open(path)
    message = str(caught.value)
    assert "\n" not in message and f"--fork {path}" in message and str(os.getpid()) in message
    holder.close()


def test_a_lock_held_after_its_owner_died_is_taken_over(tmp_path: Path) -> None:
    path = _session(tmp_path)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(gone.stdout)
    # A process the dead owner started still holds the lock descriptor, with the owner's pid in it.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path) + '.lock'!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        f"os.write(fd, b'{dead_pid}\\n')\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with SessionManager.open(path) as manager:
            manager.append_message(UserMessage(content=[TextContent(text="mine now")]))
        assert time.monotonic() - started < 60  # not the holder's 600 s
    finally:
        holder.kill()
        holder.wait()


def test_kill_9_then_reopen_at_once(tmp_path: Path) -> None:
    path = _session(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", (
        f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
        "from pi_core import SessionManager\n"
        f"m = SessionManager.open({str(path)!r})\n"
        "print('open', flush=True)\n"
        "import time; time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "open"
    proc.kill()
    proc.wait()
    assert (tmp_path / "s.jsonl.lock").exists()  # left behind by the kill
    with SessionManager.open(path) as manager:  # no delay, no error
        manager.append_message(UserMessage(content=[TextContent(text="after the kill")]))


# ---------------------------------------------------------------------------------------------
# headers


def test_version_as_a_string_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = KINDS["version as a string"]
    path.write_bytes(data)
    with SessionManager.open(path) as manager:
        assert [e["id"] for e in manager.raw_entries()] == \
            [json.loads(line)["id"] for line in data.decode().splitlines()[1:]]
    assert path.read_bytes() == data and not list(tmp_path.glob("*.bak-*"))


def test_a_real_version_1_file_is_migrated_with_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    data = (b'{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
            b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n')
    path.write_bytes(data)
    with SessionManager.open(path) as manager:
        assert any(d.kind == "migrated" for d in manager.diagnostics)
        assert manager.get_header().version == 3
    (backup,) = tmp_path.glob("old.jsonl.bak-*")
    assert backup.read_bytes() == data
    assert [i.path for i in SessionManager.list_all(tmp_path)] == [path]  # the backup is no session


# ---------------------------------------------------------------------------------------------
# a second writer while pi runs


APPEND_LIKE_PI = """
import json, sys, time
path = sys.argv[1]
last = json.loads(open(path, "rb").read().splitlines()[-1])
entry = {"type": "message", "id": "ffff0001", "parentId": last["id"], "timestamp": "2026-12-02T15:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "from the other pi"}], "timestamp": 1}}
with open(path, "a") as out:  # what the TypeScript pi does: no lock, one append per entry
    out.write(json.dumps(entry, separators=(",", ":")) + "\\n")
print("appended")
"""


def test_a_second_writer_appending_mid_run_loses_nothing(tmp_path: Path) -> None:
    script = tmp_path / "append.py"
    script.write_text(APPEND_LIKE_PI)
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE.replace(b'"cwd":"/home/user/project"', b'"cwd":' + json.dumps(str(tmp_path)).encode(), 1))
    before = path.read_bytes()
    agent = tmp_path / "agent"
    command = f"{sys.executable} {script} {path}"
    turns = [{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": command}}]},
             {"text": "all done"}]
    with FakeOpenAI(turns) as fake:
        write_agent_dir(agent, fake.base_url)
        done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                               "--session", str(path), "-p", "run the script"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert done.returncode == 0, done.stderr
    assert "all done" in done.stdout and "Traceback" not in done.stderr
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert path.read_bytes().startswith(before)
    by_id = {r["id"]: r for r in records[1:]}
    assert all(r["parentId"] is None or r["parentId"] in by_id for r in records[1:])
    theirs = by_id["ffff0001"]
    results = [r for r in records if (r.get("message") or {}).get("role") == "toolResult"
               and r["message"]["toolCallId"] == "call_1"]
    assert len(results) == 1 and "appended" in json.dumps(results[0])
    call = by_id[results[0]["parentId"]]
    assert call["message"]["role"] == "assistant"  # our result follows our call, not their message
    assert theirs["parentId"] == call["id"]  # theirs is a branch of its own beside it
    answer = records[-1]
    assert answer["message"]["content"][0]["text"] == "all done" and answer["parentId"] == results[0]["id"]
