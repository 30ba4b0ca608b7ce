"""Converted turns stored on disk (pi_core/ai/turn_store.py) give exactly what converting afresh gives.

A new process on a big session takes the turns a previous one converted instead of converting every
stored message again. Whatever happened in between — turns appended, a byte of the session changed in
the middle, a branch, the store damaged — the request must be the one a conversion from scratch makes,
and only what can no longer be trusted is converted again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from pi_core import SessionManager
from pi_core.ai import Context, Model
from pi_core.ai import turn_store
from pi_core.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage
from pi_core.ai.wire import TurnCache
from pi_core.session.messages import convert_to_llm
from pi_core.testing import FakeProviderServer
from plugins.providers import openai_completions, openai_completions_raw
from plugins.providers.openai_completions import encoded_messages, get_compat

MODEL = Model(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9/v1",
              context_window=10_000_000, max_tokens=1000)


def _turn(s: SessionManager, n: int, size: int = 30_000) -> None:
    call = ToolCall(id=f"c{n}", name="read", arguments={"path": f"f{n}.py", "n": n})
    s.append_message(AssistantMessage(content=[ThinkingContent(thinking=f"think {n}"), TextContent(text=f"step {n}"),
                                               call], provider="p", api="openai-completions", model="m",
                                      stop_reason="toolUse"))
    s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                       content=[TextContent(text=f"{n} é " + "y" * size)]))


def big_session(folder: Path, turns: int = 160) -> Path:
    s = SessionManager.create(folder, folder)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(turns):
        _turn(s, n)
    path = s.session_file
    assert path is not None
    s.close()
    assert path.stat().st_size > turn_store.MIN_SOURCE
    return path


def add_turns(path: Path, numbers: range, branch_at: int | None = None) -> None:
    """Another run appends small turns ``numbers``, after going back to message ``branch_at``."""
    s = SessionManager.open(path)
    if branch_at is not None:
        s.branch([e for e in s.get_entries() if e.type == "message"][branch_at].id)
    for n in numbers:
        _turn(s, n, size=100)
    s.close()


def request(path: Path, model: Model = MODEL) -> list[Any]:
    """The messages of a request on the session at ``path``, as a new process makes it."""
    openai_completions._TURNS.clear()  # noqa: SLF001 - a new process: nothing converted in memory
    session = SessionManager.open(path)
    context = Context(system_prompt="sys")
    context.messages = convert_to_llm(session.build_session_context().message_list())  # as the agent does
    out = json.loads(b"".join(encoded_messages(model, context, get_compat(model)).chunks()))
    session.close()
    return out


def fresh(path: Path, monkeypatch: pytest.MonkeyPatch, model: Model = MODEL) -> list[Any]:
    """The same request converted from scratch, with no store at all."""
    with monkeypatch.context() as m:
        m.setattr(openai_completions, "_TURNS", TurnCache(store=None))
        return request(path, model)


@pytest.fixture
def converted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many turns each conversion converted (the messages of each turn converted, from views or from
    raw views)."""
    calls: list[int] = []
    real, real_raw = openai_completions._convert_turn, openai_completions_raw.raw_converter

    def spy(turn: list[Any], model: Model, compat: dict[str, Any]) -> list[dict[str, Any]]:
        calls.append(len(turn))
        return real(turn, model, compat)

    def raw_spy(*args: Any) -> Any:
        convert = real_raw(*args)

        def counted(turn: list[Any], offset: int) -> Any:
            done = convert(turn, offset)
            if done is not None:
                calls.append(len(turn))
            return done
        return counted

    monkeypatch.setattr(openai_completions, "_convert_turn", spy)
    monkeypatch.setattr(openai_completions_raw, "raw_converter", raw_spy)
    return calls


def store_files() -> list[Path]:
    turn_store.flush()  # written in the background
    return sorted((Path(os.environ["PI_CODING_AGENT_DIR"]) / "cache" / "wire").glob("*.turns"))


def test_a_new_process_takes_the_stored_turns_and_sends_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                converted: list[int]) -> None:
    path = big_session(tmp_path)
    expected = fresh(path, monkeypatch)
    converted.clear()
    assert request(path) == expected  # converts everything and stores it
    assert len(converted) == 161
    assert len(store_files()) == 1
    converted.clear()
    assert request(path) == expected
    assert converted == [2]  # only the last turn (never stored: a provider may still mark it)


def test_turns_appended_by_another_run_are_converted_and_stored_after_the_kept_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converted: list[int]) -> None:
    path = big_session(tmp_path)
    request(path)
    add_turns(path, range(160, 165))
    expected = fresh(path, monkeypatch)
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 1 + 5  # the old last turn (not stored) and the five new ones
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 1  # those were stored after the 160 kept: only the last is converted


def test_a_byte_changed_in_the_middle_stops_the_reuse_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           converted: list[int]) -> None:
    path = big_session(tmp_path)
    request(path)
    data = path.read_bytes()
    at = data.index("100 é ".encode())  # the result of turn 100: conversation turn 101 of 161
    changed = data[:at] + data[at:].replace(b"yyy", b"zzz", 1)
    assert len(changed) == len(data)
    path.write_bytes(changed)  # same size, same line offsets: only the CRC can tell
    expected = fresh(path, monkeypatch)
    assert "zzz" in json.dumps(expected)
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 60  # conversation turns 101-160; the 101 before it are kept


def test_a_branch_keeps_only_the_common_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              converted: list[int]) -> None:
    path = big_session(tmp_path)
    request(path)
    add_turns(path, range(500, 503), branch_at=2 * 120)  # back to the result of turn 119
    expected = fresh(path, monkeypatch)
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 3  # the three new turns; the 121 before the branch point are kept


def test_turns_around_messages_not_read_from_the_file_are_stored_and_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converted: list[int]) -> None:
    """A compaction's summary opens the conversation and a plugin's message sits in the middle: the
    turns holding them are converted every time, all the others come from the store."""
    s = SessionManager.create(tmp_path, tmp_path)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(20):
        _turn(s, n, size=100)
    kept = s.append_message(UserMessage(content=[TextContent(text="kept from here")]))
    s.append_compaction("what happened before", kept, tokens_before=5000)
    for n in range(20, 100):
        _turn(s, n)
        if n == 60:
            s.append_custom_message_entry("plugin.note", "a note from a plugin")
    for n in range(100, 180):
        _turn(s, n)
    path = s.session_file
    assert path is not None
    s.close()
    expected = fresh(path, monkeypatch)
    assert "what happened before" in json.dumps(expected[:3]) and "a note from a plugin" in json.dumps(expected)
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 161  # the summary's turn, 160 tool turns (the note's among them)
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 3  # the summary's turn, the note's turn, the last turn


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "other format"])
def test_a_damaged_store_is_a_miss_and_is_written_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      converted: list[int], damage: str) -> None:
    path = big_session(tmp_path)
    expected = fresh(path, monkeypatch)
    request(path)
    [file] = store_files()
    data = file.read_bytes()
    file.write_bytes({"truncated": data[:len(data) // 2], "garbage": data[:40] + os.urandom(5000),
                      "empty": b"", "other format": b"PITURNS9" + data[8:]}[damage])
    converted.clear()
    assert request(path) == expected
    assert len(converted) == 161
    converted.clear()
    assert request(path) == expected
    assert converted == [2]  # written anew, and whole


def test_another_model_has_its_own_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converted: list[int]) -> None:
    path = big_session(tmp_path)
    other = MODEL.model_copy(update={"id": "m2", "input": ["text", "image"]})
    request(path)
    expected = fresh(path, monkeypatch, other)
    converted.clear()
    assert request(path, other) == expected
    assert len(converted) == 161
    assert len(store_files()) == 2


def test_a_small_session_is_not_stored(tmp_path: Path) -> None:
    s = SessionManager.create(tmp_path, tmp_path)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(20):
        _turn(s, n, size=100)
    assert s.session_file is not None
    path = s.session_file
    s.close()
    request(path)
    request(path)
    assert store_files() == []


def test_the_code_version_changes_with_the_converter_file(tmp_path: Path) -> None:
    converter = tmp_path / "converter.py"
    converter.write_text("x = 1\n")
    before = turn_store.code_version(str(converter))
    turn_store._CODE.clear()  # noqa: SLF001 - a new process
    converter.write_text("x = 22\n")
    assert turn_store.code_version(str(converter)) != before


def test_the_store_keeps_to_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = big_session(tmp_path / "a"), big_session(tmp_path / "b")
    request(first)
    [old] = store_files()
    monkeypatch.setattr(turn_store, "LIMIT", old.stat().st_size + 1000)
    request(second)
    assert len(store_files()) == 1 and store_files() != [old]  # the least recently used went


def pi_print(server: FakeProviderServer, agent: Path, path: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    """``pi --session PATH -p PROMPT`` in the session's folder, talking to ``server`` (compaction off, a
    window the whole session fits in); it must succeed."""
    if not (agent / "models.json").exists():
        server.write_models_json(agent, settings={"compaction": {"enabled": False}})
        models = json.loads((agent / "models.json").read_text())
        models["providers"]["fake"]["models"][0]["contextWindow"] = 10_000_000
        (agent / "models.json").write_text(json.dumps(models))
    done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                           "--session", str(path), "-p", prompt], cwd=path.parent,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_pi_print_on_a_resumed_big_session_sends_what_it_sent_before(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    work = tmp_path / "work"
    work.mkdir()
    path = big_session(work)
    with FakeProviderServer([{"text": "one"}, {"text": "two"}]) as server:
        for prompt in ("first", "second"):
            pi_print(server, agent, path, prompt)
            if prompt == "first":  # mark one stored turn, to see below that the next run sent it as stored
                [store] = (agent / "cache" / "wire").glob("*.turns")
                data = written(store)
                store.write_bytes(data.replace(b"y" * 50, b"x" * 50, 1))
    first, second = (r["body"]["messages"] for r in server.requests)
    assert "x" * 50 not in json.dumps(first)
    assert json.dumps(second).count("x" * 50) == 1  # taken from the store, not converted again
    assert len(second) == len(first) + 2 and "second" in json.dumps(second[-1])
    assert second[-2] == {"role": "assistant", "content": "one"}


def written(store: Path) -> bytes:
    """The store file's bytes once its writer is done: ``pi -p`` leaves the writing to a detached process
    that holds the file's lock from before pi exits."""
    import fcntl

    with open(store, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits for the writer
        return handle.read()


def test_pi_print_stores_its_turns_after_it_exits_leaving_the_session_free(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    work = tmp_path / "work"
    work.mkdir()
    path = big_session(work)
    with FakeProviderServer([{"text": "one"}]) as server:
        pi_print(server, agent, path, "first")
    SessionManager.open(path).close()  # the writer left behind holds no lock of the session's
    [store] = (agent / "cache" / "wire").glob("*.turns")
    loaded = turn_store.TurnStore(store.parent).load(store)  # waits for the writer, like the next pi
    assert len(loaded) == 160  # every turn but the last (which holds the prompt), written after pi exited


def test_a_reader_waits_for_the_writer_of_a_store_file(tmp_path: Path) -> None:
    import fcntl
    import threading
    import time

    store = tmp_path / "x.turns"
    store.write_bytes(turn_store.MAGIC)
    got: list[int] = []
    with open(store, "r+b") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)
        reader = threading.Thread(target=lambda: got.append(len(turn_store.TurnStore(tmp_path).load(store))))
        reader.start()
        time.sleep(0.3)
        assert reader.is_alive() and got == []  # still waiting
        writer.write(b"not a block")  # what a reader sees only when the writer is done
        writer.flush()
    reader.join(10)
    assert got == [0]


def test_deferred_turns_are_stored_by_a_detached_process_holding_the_store_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What pi's exit does (``_run_deferred`` is its exit handler): here, in this process."""
    import fcntl
    import time

    monkeypatch.setattr(turn_store, "_defer", True)
    monkeypatch.setattr(turn_store, "_deferred", [])
    monkeypatch.setattr("atexit.register", lambda f: None)
    store = tmp_path / "cache" / "s.turns"
    session_lock = tmp_path / "s.jsonl.lock"
    held = os.open(session_lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # like the session's writer lock, still open at exit

    def slow_save() -> None:  # runs in the detached process
        time.sleep(0.5)
        fd = turn_store._held.pop(store)  # noqa: SLF001 - the lock taken before the parent went on
        os.write(fd, turn_store.MAGIC + b"written")
        os.close(fd)

    turn_store.in_background(slow_save, lock=store)
    turn_store._run_deferred()  # noqa: SLF001 - returns at once, the save goes on elsewhere
    os.close(held)
    again = os.open(session_lock, os.O_RDWR)
    try:
        fcntl.flock(again, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the detached process kept no copy of it
    finally:
        os.close(again)
    assert turn_store._read_written(store) == turn_store.MAGIC + b"written"  # noqa: SLF001 - waited for


def test_deferred_turns_are_stored_at_a_flush(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_store, "_defer", True)
    monkeypatch.setattr(turn_store, "_deferred", [])
    import atexit

    registered: list[Any] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    done: list[int] = []
    turn_store.in_background(done.append, 1)
    turn_store.in_background(done.append, 2)
    assert done == [] and len(registered) == 1  # nothing yet: it waits for the exit
    turn_store.flush()
    assert done == [1, 2]


class _Bytes:
    """A source of ``data`` read in small blocks (so ends fall in many of them)."""

    def __init__(self, data: bytes, checkpoints: list[tuple[int, int]]) -> None:
        self.data, self.checkpoints = data, checkpoints

    def read(self, offset: int, length: int) -> bytes:
        return self.data[offset:offset + min(length, 1000)]


@settings(max_examples=60, deadline=None)
@given(data=st.integers(0, 6000).map(lambda n: bytes(i * 7 % 251 for i in range(n))),
       steps=st.lists(st.integers(0, 300), max_size=40), checked=st.integers(0, 6000))
def test_crcs_of_many_ends_are_those_of_one_end_at_a_time(data: bytes, steps: list[int], checked: int) -> None:
    import zlib
    from itertools import accumulate

    ends = list(accumulate(steps))  # some past the end of the data: the CRCs stop there
    checkpoints = [(checked, zlib.crc32(data[:checked]))] if checked <= len(data) else []
    one = turn_store.PrefixCrc(_Bytes(data, checkpoints))
    expected = []
    for end in ends:
        crc = one.advance(end)
        if crc is None:
            break
        expected.append(crc)
    assert turn_store.PrefixCrc(_Bytes(data, checkpoints)).advance_all(ends) == expected
    assert expected == [zlib.crc32(data[:end]) for end in ends[:len(expected)]]
