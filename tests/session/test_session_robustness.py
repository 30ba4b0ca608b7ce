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

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_core import SessionError, SessionLockedError, SessionManager
from pi_core.ai.faux import FauxProvider
from pi_core.ai.types import TextContent, UserMessage
from pi_core.export_html import export_manager_html, render_session_html
from pi_core.modes.rpc.stats import session_stats
from pi_core.sdk import SetupError, create_agent_session
from pi_core.session.check import check_session_file
from pi_core.session.compaction import estimate_context_tokens, estimate_projected_tokens
from pi_core.session.listing import session_info

REPO = Path(__file__).resolve().parents[2]
RECORDED = sorted((REPO / "tests" / "fixtures" / "ai" / "pi-1.6.0").glob("*/session.jsonl"))
sys.path.insert(0, str(REPO / "tests" / "cli"))
sys.path.insert(0, str(REPO / "tests" / "rpc"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402


def read_everything(path: Path, *, read_only: bool = True) -> SessionManager | None:
    """Everything a caller may do with an opened session, and what pi reads of it besides (estimates,
    the HTML export, listings, ``pi session check``); None if it is refused (with a message)."""
    try:
        manager = SessionManager.open(path, read_only=read_only)
    except SessionError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return None
    context = manager.build_session_context()
    list(context.messages)
    context.to_llm()
    context.message_list()
    manager.get_header()
    manager.get_tree()
    manager.get_entries()
    manager.get_branch()
    for entry in manager.raw_entries():
        manager.get_label(entry.get("id"))
    estimate_context_tokens(context.raw_messages)
    estimate_projected_tokens(context.raw_messages, context.source_ids, manager.get_raw_branch())
    render_session_html(manager.get_header().to_json(), manager.raw_entries(), manager.get_raw_branch())
    session_info(path)
    check_session_file(path)
    return manager


DAMAGE = st.sampled_from(["flip", "cut_line", "drop_line", "duplicate_line", "garbage_line", "nest",
                          "truncate", "swap_lines", "bom", "retype", "retype_nested", "retype_field", "huge_int"])
# Fields the readers of raw entries look into (estimates, exports, listings, fork lists, file tracking).
FIELDS = [("message", "usage"), ("message", "usage", "totalTokens"), ("message", "usage", "cost"),
          ("message", "content"), ("message", "content", 0), ("message", "content", 0, "text"),
          ("message", "content", 0, "arguments"), ("message", "role"), ("message", "stopReason"),
          ("message", "sections"), ("details",), ("details", "readFiles"), ("targetId",), ("cwd",),
          ("summary",), ("firstKeptEntryId",), ("tokensBefore",), ("label",), ("name",)]
HUGE_INT = "9" * 5000  # past Python's 4300-digit limit for int()
# What a field may hold instead of what belongs there ("@HUGE@" becomes a 5000-digit integer).
ODD_VALUES = st.one_of(st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                       st.text(max_size=5), st.lists(st.integers(), max_size=2), st.just({}), st.just("@HUGE@"),
                       st.just([{"type": "text", "text": 5}]), st.just([{"type": "toolCall"}]),
                       st.just({"role": "assistant", "content": 5, "stopReason": "??"}))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a record (for ``retype_nested``)."""
    out = [prefix] if prefix else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.extend(_paths(child, (*prefix, key)))
    return out


def _has(record: Any, path: tuple[Any, ...], last: Any) -> bool:
    """Whether ``record`` reaches along ``path`` a container that ``last`` can index (a dict for a name, a
    list for a number: an earlier damage may have turned a message into a list)."""
    for key in path:
        if isinstance(record, dict) and key in record or isinstance(record, list) and \
                isinstance(key, int) and key < len(record):
            record = record[key]
        else:
            return False
    return isinstance(record, list) and last < len(record) if isinstance(last, int) else isinstance(record, dict)


def _dump(record: Any) -> bytes:
    return json.dumps(record, separators=(",", ":")).replace('"@HUGE@"', HUGE_INT).encode()


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
        key = draw.draw(st.sampled_from(["id", "parentId", "type", "message", "timestamp", "version", "cwd"]))
        record[key] = draw.draw(ODD_VALUES)
        lines[n] = _dump(record)
    elif how == "retype_nested":  # message.usage, message.content[0].text, details.readFiles, ...
        try:
            record = json.loads(lines[n])
        except (ValueError, RecursionError):
            record = None
        paths = _paths(record) if isinstance(record, dict) else []
        if not paths:
            return b"\n".join(lines)
        *parents, last = draw.draw(st.sampled_from(paths))
        target = record
        for key in parents:
            target = target[key]
        target[last] = draw.draw(ODD_VALUES)
        lines[n] = _dump(record)
    elif how == "retype_field":  # one of FIELDS, on a line that has it (the last one, more often than not)
        records = []
        for at, line in enumerate(lines):
            try:
                records.append((at, json.loads(line)))
            except (ValueError, RecursionError):
                continue
        field = draw.draw(st.sampled_from(FIELDS))
        having = [(at, r) for at, r in records if _has(r, field[:-1], field[-1])]
        if not having:
            return b"\n".join(lines)
        at, record = having[-1] if draw.draw(st.booleans()) else draw.draw(st.sampled_from(having))
        target = record
        for key in field[:-1]:
            target = target[key]
        target[field[-1]] = draw.draw(ODD_VALUES)
        lines[at] = _dump(record)
    elif how == "huge_int":  # a number JSON.parse reads as Infinity and Python's int() refuses
        at = lines[n].find(b'":', draw.draw(st.integers(0, max(0, len(lines[n]) - 1))))
        if at < 0:
            return b"\n".join(lines)
        lines[n] = lines[n][:at + 2] + HUGE_INT.encode() + b',"was":' + lines[n][at + 2:]
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


def _file_kept(path: Path, data: bytes, tmp_path: Path) -> None:
    """The bytes read are still there: unchanged and appended to, or migrated with a backup of them, or
    with only a torn or unterminated last line repaired."""
    after = path.read_bytes()
    backups = list(tmp_path.glob(f"{path.name}.bak-*"))
    if backups:
        assert backups[0].read_bytes() == data
    elif not after.startswith(data):
        assert after.startswith(data[:data.rstrip(b"\n").rfind(b"\n") + 1])


def _damaged_copy(tmp_path: Path, draw: st.DataObject, n: int) -> tuple[Path, bytes]:
    source = draw.draw(st.sampled_from(RECORDED))
    data = source.read_bytes().replace(b'"cwd":"/home/user/project"', b'"cwd":' + json.dumps(str(tmp_path)).encode(), 1)
    for how in draw.draw(st.lists(DAMAGE, min_size=1, max_size=3)):
        data = damage(data, how, draw)
    path = tmp_path / f"fuzz-{time.monotonic_ns()}-{n}.jsonl"
    path.write_bytes(data)
    return path, data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(draw=st.data())
def test_random_damage_through_the_runtime(tmp_path: Path, draw: st.DataObject) -> None:
    """What a run does with a damaged file: resume it, answer (compacting first: the window is small, so
    the size estimates read every stored usage), list the fork points, count the statistics, export it,
    fork it. Nothing raises but a clean refusal at the start, and the bytes read stay."""
    path, data = _damaged_copy(tmp_path, draw, 0)
    faux = FauxProvider(context_window=3000, max_tokens=500, responder=lambda *a: "an answer " * 30)

    async def run() -> None:
        try:
            session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], session=str(path),
                                                 agent_dir=tmp_path / "agent", discover_extensions=False)
        except SetupError as exc:
            assert "\n" not in str(exc)
            return
        try:
            await session.prompt("go on")
            points = session.get_fork_messages()
            json.dumps(session_stats(session))
            export_manager_html(session.session, tmp_path / "out.html")
            if points:
                await session.fork(points[0].entry_id)
        finally:
            await session.close()

    asyncio.run(run())
    _file_kept(path, data, tmp_path)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(draw=st.data())
def test_random_damage_through_pi_rpc(tmp_path: Path, draw: st.DataObject) -> None:
    """``pi --mode rpc`` switched to damaged files one after the other: each is refused in one line (and
    the session stays where it was) or read, answered in, forked from and exported; no traceback."""
    from rpc_client import RpcProcess

    files = [_damaged_copy(tmp_path, draw, n) for n in range(8)]
    with RpcProcess(tmp_path, model=("faux", "echo"), scripted=False,
                    env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}) as pi:
        for path, data in files:
            before = pi.call({"type": "get_state"})[0]["data"].get("sessionFile")
            switched, _ = pi.call({"type": "switch_session", "sessionPath": str(path)})
            now = pi.call({"type": "get_state"})[0]["data"].get("sessionFile")
            if not switched["success"]:  # one line naming the file (pi's missing-cwd message has three)
                assert str(path) in switched["error"] and "Traceback" not in switched["error"], switched
                assert now == before
                continue
            assert now == str(path)
            pi.prompt("go on")
            for command in ({"type": "get_fork_messages"}, {"type": "get_session_stats"}, {"type": "get_tree"},
                            {"type": "export_html", "outputPath": str(tmp_path / "out.html")}):
                assert pi.call(command)[0]["success"], command
            _file_kept(path, data, tmp_path)
        pi.close_stdin()
        assert pi.wait(60) == 0
    assert b"Traceback" not in pi.stderr, pi.stderr.decode()[-3000:]


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


_LAST_ANSWER = len(BASE.split(b"\n")) - 2  # the last line: the final answer, whose usage the next run reads
_HUGE = b"9" * 5000  # past Python's 4300-digit limit for int(); JSON.parse makes Infinity of it

# Damage the display and runtime paths read (estimates, exports, fork lists), each through every mode.
READER_KINDS = {
    "usage not an object": _edit(_LAST_ANSWER, {"message.usage": "x"}),
    "answer content a number": _edit(_LAST_ANSWER, {"message.content": 7}),
    "user content a number": _edit(_line_index('"role":"user"'), {"message.content": 42}),
    "tool result content a number": _edit(_line_index('"role":"toolResult"'), {"message.content": 5}),
    "huge integer": BASE.replace(b'"input":1645,', b'"input":' + _HUGE + b",", 1),
    "header cwd a number": BASE.replace(b'"cwd":"/home/user/project"', b'"cwd":7', 1),
    "text block holding an object": _edit(_line_index('"role":"user"'), {"message.content": [{"type": "text",
                                                                                             "text": {"a": 1}}]}),
}
KINDS.update({f"{kind} (-p)": data for kind, data in READER_KINDS.items()})


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


def _pi(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", "--provider", "faux", "--model", "echo", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, input=stdin,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})


def _placed(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data.replace(b'"cwd":"/home/user/project"', b'"cwd":' + json.dumps(str(tmp_path)).encode(), 1))
    return path


@pytest.mark.parametrize("mode", ["json", "rpc"])
@pytest.mark.parametrize("kind", list(READER_KINDS))
def test_damage_the_readers_meet_in_json_and_rpc_mode(tmp_path: Path, kind: str, mode: str) -> None:
    """The answer, the fork list, the statistics, the export and the tree of a damaged file, with no
    traceback and the file's bytes kept (-p: ``test_damaged_files_through_the_cli``)."""
    path = _placed(tmp_path, READER_KINDS[kind])
    data = path.read_bytes()
    if mode == "json":
        done = _pi(tmp_path, "--session", str(path), "--mode", "json", "-p", "go on")
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        assert any(e["type"] == "agent_end" for e in events) and "go on" in done.stdout
    else:
        commands = [{"type": "prompt", "id": "p", "message": "go on"}, {"type": "get_fork_messages", "id": "f"},
                    {"type": "get_session_stats", "id": "s"}, {"type": "get_tree", "id": "t"},
                    {"type": "get_messages", "id": "m"},
                    {"type": "export_html", "id": "x", "outputPath": str(tmp_path / "out.html")}]
        done = _pi(tmp_path, "--session", str(path), "--mode", "rpc",
                   stdin="".join(json.dumps(c) + "\n" for c in commands))
        responses = {r["id"]: r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") == "response"}
        assert all(responses[c["id"]]["success"] for c in commands), responses
        assert any(p["text"] == "go on" for p in responses["f"]["data"]["messages"])
        assert (tmp_path / "out.html").exists()
    assert "Traceback" not in done.stderr
    assert path.read_bytes().startswith(data)  # appended to, nothing before changed


@pytest.mark.parametrize("kind", ["usage not an object", "answer content a number", "tool result content a number",
                                  "huge integer", "text block holding an object"])
def test_export_of_a_damaged_file(tmp_path: Path, kind: str) -> None:
    path = _placed(tmp_path, READER_KINDS[kind])
    data = path.read_bytes()
    done = _pi(tmp_path, "--export", str(path), str(tmp_path / "out.html"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "Let me read the file first" in (tmp_path / "out.html").read_text()
    assert path.read_bytes() == data


def test_session_check_names_what_reading_works_around(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = READER_KINDS["header cwd a number"].split(b"\n")
    lines[4] = lines[4].replace(b'"parentId":"3c5dc1f1"', b'"parentId":"707c710e"')  # a loop of parents
    lines[_LAST_ANSWER] = lines[_LAST_ANSWER].replace(b'"input":1645,', b'"input":' + _HUGE + b",")
    path.write_bytes(b"\n".join(lines))
    done = subprocess.run([sys.executable, "-m", "pi_core", "session", "check", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "line 1: the header's cwd is a number, not a string" in done.stdout
    assert "line 5: entry 3a6ac81e is its own ancestor" in done.stdout
    assert f"line {_LAST_ANSWER + 1}: entry 707c710e (message)" in done.stdout  # Infinity is no token count


def test_a_damaged_usage_in_the_terminal(tmp_path: Path) -> None:
    """The terminal interface (the real pi in a pty) on a file whose last answer has ``usage: "x"``: every
    prompt used to end in "Error: AttributeError"; now it is answered."""
    sys.path.insert(0, str(REPO / "tests" / "interactive"))
    from ptyterm import PtyApp

    path = _placed(tmp_path, READER_KINDS["usage not an object"])
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm",
           "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_NO_OSC52": "1"}
    app = PtyApp([sys.executable, "-m", "pi_core", "--provider", "faux", "--model", "echo", "--session", str(path)],
                 env=env, cwd=tmp_path, stderr=tmp_path / "stderr.txt", columns=160, lines=40)
    try:
        app.wait_for("/help for commands", 60)
        app.settle(0.5)  # the editor is up
        app.type("please echo this line")
        app.wait_for(lambda: app.text().count("please echo this line") >= 2, 60)  # the prompt and its answer
        app.settle(0.5)
        assert "AttributeError" not in app.text() and "Error:" not in app.text()
    finally:
        app.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


# ---------------------------------------------------------------------------------------------
# another program truncates or replaces the file while pi writes it


@pytest.mark.parametrize("mode", ["-p", "json"])
@pytest.mark.parametrize("how", ["replaced by a copy", "truncated"])
def test_a_file_replaced_or_truncated_mid_run(tmp_path: Path, how: str, mode: str) -> None:
    path = _placed(tmp_path, BASE)
    change = f"cp {path} {path}.tmp && mv {path}.tmp {path}" if how == "replaced by a copy" \
        else f"truncate -s 300 {path}"
    prompt = json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": change + " && echo done-it"}}]})
    done = _pi(tmp_path, "--session", str(path), *(["--mode", "json"] if mode == "json" else []), "-p", prompt)
    assert "Traceback" not in done.stderr
    assert "done-it" in done.stdout  # the run went on to its answer
    if how == "replaced by a copy":  # an editor or a sync tool saved it: pi follows the new file
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert path.read_bytes().startswith(BASE[:100]) or records[0]["type"] == "session"
        assert "done-it" in json.dumps(records[-2:])  # the tool result and the answer are in it
    else:  # appending would write after something pi never saw: it stops writing, says so once
        assert done.returncode == 1
        said = [line for line in done.stderr.splitlines() if str(path) in line]
        assert len(said) == 1 and "truncated" in said[0] and f"pi --fork {path}" in said[0]
        assert path.stat().st_size == 300  # what the other program left


# ---------------------------------------------------------------------------------------------
# a session path that is no regular file


@pytest.mark.parametrize("what", ["fifo", "/dev/zero", "directory", "lock is a directory"])
def test_a_session_path_that_is_no_file_is_refused_in_one_line(tmp_path: Path, what: str) -> None:
    """A pipe used to hang pi for ever, /dev/zero to grow it to gigabytes, a directory to give a traceback."""
    path = tmp_path / "s.jsonl"
    if what == "fifo":
        os.mkfifo(path)
    elif what == "directory":
        path.mkdir()
    elif what == "lock is a directory":
        path.write_bytes(_placed(tmp_path, BASE).read_bytes())
        (tmp_path / "s.jsonl.lock").mkdir()
    else:
        path = Path(what)
    done = _pi(tmp_path, "--session", str(path), "-p", "hi")  # a hang fails the test: timeout=120
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert str(path) in line and ("not a session file" in line or "cannot be opened" in line and "--fork" in line)


def test_special_files_elsewhere_are_refused_or_passed_over(tmp_path: Path) -> None:
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    exported = _pi(tmp_path, "--export", str(fifo), str(tmp_path / "out.html"))
    assert exported.returncode == 1 and "named pipe" in exported.stderr and "Traceback" not in exported.stderr
    checked = subprocess.run([sys.executable, "-m", "pi_core", "session", "check", str(fifo)], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and "it is a named pipe (FIFO), not a session file" in checked.stdout
    first = _pi(tmp_path, "-p", "first")  # pi -c passes over a pipe named like a session in the folder
    assert first.returncode == 0, first.stderr
    (folder,) = (tmp_path / "agent" / "sessions").iterdir()
    os.mkfifo(folder / "9999-12-31T00-00-00-000Z_zzzz.jsonl")
    again = _pi(tmp_path, "-c", "-p", "second")
    assert again.returncode == 0 and "second" in again.stdout, again.stderr


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


def test_kill_9_of_pi_during_a_tool_call_then_pi_again_at_once(tmp_path: Path) -> None:
    """The real pi, killed with SIGKILL while its bash tool runs `sleep` (which survives it, holding the
    lock file's descriptor): the next pi on that session starts at once, takes the lock over, answers."""
    import signal

    path = _placed(tmp_path, BASE)
    pids = tmp_path / "pids"
    prompt = json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": f"echo $$ > {pids}; sleep 60"}}]})
    proc = subprocess.Popen([sys.executable, "-m", "pi_core", "--provider", "faux", "--model", "echo",
                             "--session", str(path), "--mode", "rpc"], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    sleeper = None
    try:
        proc.stdin.write((json.dumps({"type": "prompt", "id": "p", "message": prompt}) + "\n").encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().strip()):
            assert time.monotonic() < deadline, "the tool call never started"
            time.sleep(0.05)
        sleeper = int(pids.read_text())
        proc.kill()
        proc.wait(10)
        assert (tmp_path / "s.jsonl.lock").exists()  # left behind
        started = time.monotonic()
        done = _pi(tmp_path, "--session", str(path), "-p", "after the kill")
        assert time.monotonic() - started < 60  # at once, not after the sleep or a lock timeout
        assert done.returncode == 0 and "after the kill" in done.stdout, done.stderr
        assert path.read_bytes().startswith(BASE.replace(b'"cwd":"/home/user/project"',
                                                         b'"cwd":' + json.dumps(str(tmp_path)).encode(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
        if sleeper is not None:
            try:
                os.kill(sleeper, signal.SIGKILL)
            except ProcessLookupError:
                pass


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
