"""A helper forked at start-up decodes a long session's lines before the first request asks for them
(pi_core/ai/turn_helper.py, ``read_ahead``).

Whatever it has decoded by then, whatever the file holds besides the conversation, whichever provider
converts: the request must be byte for byte what converting in one process gives, and the helper never
outlives the conversion, nor a process that never asks it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pi_core import SessionManager
from pi_core.ai import Context, Model, TurnCache, turn_helper
from pi_core.ai.options import StreamOptions
from pi_core.ai.raw_views import LineViews
from pi_core.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_core.ai.wire import body_bytes
from pi_core.session.messages import BashExecutionMessage, convert_to_llm
from plugins.providers import anthropic, google, openai_completions, openai_completions_raw
from test_turn_helper import MODEL, context_of, conversation, gone

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="the helper needs os.memfd_create (Linux)")

READ_AHEAD_MIN = turn_helper.READ_AHEAD_MIN  # what the CLI goes by (the tests here lower it)
APIS = {openai_completions: "openai-completions", anthropic: "anthropic-messages", google: "google-generative-ai"}


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Small sessions are worth reading ahead here, and several windows make a share for the helper."""
    from pi_core.ai import wire

    monkeypatch.setattr(turn_helper, "READ_AHEAD_MIN", 0)
    monkeypatch.setattr(turn_helper, "_CHUNK", 4096)  # several blocks even in a small file
    monkeypatch.setattr(turn_helper, "MIN_MESSAGES", 100)
    monkeypatch.setattr(wire, "_WINDOW", 32)
    yield
    turn_helper.let_go()  # whatever a failing test left behind


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """``(pid, turns it gave)`` of each helper whose turns were asked for."""
    seen: list[tuple[int, int]] = []
    real = turn_helper.Helper.results

    def spy(self: Any) -> Any:
        out = real(self)
        seen.append((self.pid, len(out)))
        return out

    monkeypatch.setattr(turn_helper.Helper, "results", spy)
    return seen


def payload(module: Any, path: Path, context: Context | None = None) -> bytes:
    """The body of the first request of a process on the session, as ``module`` builds it."""
    model = MODEL.model_copy(update={"api": APIS[module]})
    with pytest.MonkeyPatch.context() as m:
        m.setattr(module, "_TURNS", TurnCache(store=None))  # a fresh process's cache, no stored turns
        built = module.build_payload(model, context or context_of(path), StreamOptions(api_key="k"))
    return body_bytes(built[0] if isinstance(built, tuple) else built)


def alone(module: Any, path: Path, monkeypatch: pytest.MonkeyPatch, context: Context | None = None) -> bytes:
    """The same, converted in this process only."""
    with monkeypatch.context() as m:
        m.setattr(turn_helper, "MIN_MESSAGES", 10**9)
        return payload(module, path, context)


def read_ahead(path: Path) -> int:
    turn_helper.read_ahead(path)
    handle = turn_helper._early[0]  # noqa: SLF001
    assert handle is not None
    return handle.pid


@pytest.mark.parametrize("module", [openai_completions, anthropic, google])
def test_the_helper_reading_ahead_converts_the_later_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           helpers: list[tuple[int, int]], module: Any) -> None:
    path = conversation(tmp_path)
    expected = alone(module, path, monkeypatch)
    pid = read_ahead(path)
    time.sleep(0.3)  # let it decode some of the file first
    assert payload(module, path) == expected
    [(used, turns)] = helpers
    assert used == pid and turns > 10
    assert turn_helper._early[0] is None and gone(pid)  # noqa: SLF001


def test_lines_it_has_not_decoded_yet_are_read_when_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               helpers: list[tuple[int, int]]) -> None:
    path = conversation(tmp_path)
    expected = alone(openai_completions, path, monkeypatch)
    monkeypatch.setattr(LineViews, "decode_before", lambda self, end, size: 0)  # in the fork too: decodes nothing
    pid = read_ahead(path)
    assert payload(openai_completions, path) == expected
    assert helpers[0][0] == pid and helpers[0][1] > 10


def mixed_session(folder: Path) -> tuple[Path, int]:
    """Tool turns with what is not a plain message line among them: shell runs, custom entries and
    messages, a model change, an abandoned branch, a line whose message has a role no view has; and the
    index of a message the test changes in memory."""
    s = SessionManager.create(folder, folder)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(120):
        call = ToolCall(id=f"call_{n}", name="read", arguments={"n": n})
        last = s.append_message(AssistantMessage(content=[TextContent(text=f"step {n}"), call], provider="p",
                                                 api="openai-completions", model="m", stop_reason="toolUse"))
        s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                           content=[TextContent(text=f"out {n} " + "é" * (n % 5))]))
        if n % 9 == 4:
            s.append_message(BashExecutionMessage(command=f"ls {n}", output="a b", exit_code=0))
        if n % 13 == 6:
            s.append_custom_entry("note", {"n": n})
            s.append_custom_message_entry("hint", f"hint {n}")
        if n == 50:
            s.append_model_change("p", "m")
        if n == 70:  # a branch left behind: its lines stay in the file, between the kept ones
            s.append_message(UserMessage(content="abandoned"))
            s.append_message(AssistantMessage(content=[TextContent(text="gone")], provider="p",
                                              api="openai-completions", model="m", stop_reason="stop"))
            s.branch(last)
            s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                               content=[TextContent(text="again")]))
    path = s.session_file
    assert path is not None
    s.close()
    context = context_of(path)
    changed = next(n for n in range(len(context.messages) - 40, 0, -1)
                   if getattr(context.messages[n], "role", None) == "toolResult")
    return path, changed


def test_a_session_with_other_entries_and_a_changed_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            helpers: list[tuple[int, int]]) -> None:
    """Entries that are not plain message lines are decoded as nothing; a message typed (and changed) in
    memory is sent as it is now, not as its line says."""
    path, changed = mixed_session(tmp_path)

    def changed_context() -> Context:
        context = context_of(path)
        context.messages[changed].content[0].text = "changed in memory"
        return context

    expected = alone(openai_completions, path, monkeypatch, changed_context())
    assert b"changed in memory" in expected and b"abandoned" not in expected
    pid = read_ahead(path)
    time.sleep(0.2)
    assert payload(openai_completions, path, changed_context()) == expected
    assert helpers[0][0] == pid and helpers[0][1] > 10


def failing(*args: Any) -> None:  # called in the helper only
    raise RuntimeError("the helper fails")


def hanging(*args: Any) -> None:  # called in the helper only
    time.sleep(60)


@pytest.mark.parametrize("helper_work", [failing, hanging])
def test_a_helper_reading_ahead_that_fails_or_hangs_costs_only_its_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: list[tuple[int, int]], helper_work: Any) -> None:
    path = conversation(tmp_path)
    expected = alone(openai_completions, path, monkeypatch)
    monkeypatch.setattr(turn_helper, "_convert_into", helper_work)  # before the fork: the helper's own
    pid = read_ahead(path)
    started = time.monotonic()
    assert payload(openai_completions, path) == expected
    assert time.monotonic() - started < 30  # a hanging helper is stopped after about a second
    assert helpers == [(pid, 0)]  # nothing taken from it: this process converted its share
    assert gone(pid)


def test_another_file_read_ahead_is_let_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           helpers: list[tuple[int, int]]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path, other = conversation(tmp_path / "a"), conversation(tmp_path / "b")
    expected = alone(openai_completions, path, monkeypatch)
    pid = read_ahead(other)
    assert payload(openai_completions, path) == expected
    [(used, turns)] = helpers
    assert used != pid and turns > 10  # a helper forked for the request did the work
    assert gone(pid)


def test_a_converter_that_does_not_pickle_goes_to_a_forked_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   helpers: list[tuple[int, int]]) -> None:
    path = conversation(tmp_path)
    expected = alone(openai_completions, path, monkeypatch)
    real = openai_completions_raw.raw_converter

    def local(*args: Any) -> Any:  # a closure made by a function pickle cannot name
        convert = real(*args)
        return lambda turn, offset: convert(turn, offset)

    monkeypatch.setattr(openai_completions_raw, "raw_converter", local)
    pid = read_ahead(path)
    assert payload(openai_completions, path) == expected
    [(used, turns)] = helpers
    assert used != pid and turns > 10
    assert gone(pid)


def test_a_conversion_without_a_helper_lets_it_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  helpers: list[tuple[int, int]]) -> None:
    path = conversation(tmp_path)
    expected = alone(openai_completions, path, monkeypatch)
    pid = read_ahead(path)
    monkeypatch.setattr(turn_helper, "MIN_MESSAGES", 10**9)  # too short for a helper
    assert payload(openai_completions, path) == expected
    assert helpers == [] and gone(pid)


def test_no_helper_reads_ahead_a_session_whose_turns_are_stored(tmp_path: Path) -> None:
    """The first request of a new process takes stored turns (tests/ai/test_turn_store.py): nothing to do."""
    from pi_core.ai import turn_store
    from test_turn_store import big_session, request

    path = big_session(tmp_path)
    request(path)  # converts everything and stores it
    turn_store.flush()
    turn_helper.read_ahead(path)
    assert turn_helper._early[0] is None  # noqa: SLF001
    assert turn_store.TurnStore(tmp_path / "elsewhere").has_turns_for(path) is False


def test_a_compaction_near_the_end_ends_the_helper_and_a_forked_one_converts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: list[tuple[int, int]]) -> None:
    """A compaction in the last ``READ_AHEAD_MIN`` bytes usually leaves a short context: the helper ends at
    once; when the context is long all the same, a helper forked at the request takes the later turns."""
    path = conversation(tmp_path)
    s = SessionManager.open(path)
    first_kept = s.build_session_context().source_ids[1]  # keeps nearly everything
    s.append_compaction("summary", first_kept, 1000)
    s.append_message(UserMessage(content="after the compaction"))
    s.close()
    monkeypatch.setattr(turn_helper, "READ_AHEAD_MIN", path.stat().st_size)  # the whole file is "the end"
    expected = alone(openai_completions, path, monkeypatch)
    assert b"after the compaction" in expected and b"summary" in expected
    pid = read_ahead(path)
    assert ended(pid)  # by itself, before it is asked (reaped when the request finds it ended)
    assert payload(openai_completions, path) == expected
    [(used, turns)] = helpers
    assert used != pid and turns > 10
    assert gone(pid)


def ended(pid: int) -> bool:
    """Gone, or a zombie nobody reaps (a parent that has exited leaves it to init, which may not)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


def test_a_process_that_never_asks_leaves_no_helper_behind(tmp_path: Path) -> None:
    path = conversation(tmp_path)
    script = textwrap.dedent(f"""
        from pi_core.ai import turn_helper
        turn_helper.READ_AHEAD_MIN = 0
        turn_helper.read_ahead({str(path)!r})
        print(turn_helper._early[0].pid)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert ended(int(done.stdout))


def test_a_helper_does_not_hold_pis_output_open(tmp_path: Path) -> None:
    """Whoever reads pi's output through a pipe sees its end when pi ends, even while a helper lives on."""
    import signal

    path = conversation(tmp_path)
    script = textwrap.dedent(f"""
        import time
        from pi_core.ai import turn_helper
        turn_helper.READ_AHEAD_MIN = 0
        turn_helper._serve = lambda *args: time.sleep(30)  # a helper at work long after pi ends
        turn_helper.read_ahead({str(path)!r})
        print(turn_helper._early[0].pid, flush=True)
    """)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=25)
    pid = int(done.stdout)
    try:
        assert time.monotonic() - started < 20  # the pipe ended with pi, not with the helper
        os.kill(pid, 0)  # which still runs
    finally:
        os.kill(pid, signal.SIGKILL)


SPY = """
import os
from pi_core.ai import turn_helper

_ask = turn_helper._ReadAhead.ask


def ask(self, *args):
    helper = _ask(self, *args)
    with open(os.environ["READ_AHEAD_LOG"], "a") as log:
        log.write(f"{self.pid} {helper is not None and helper.pid == self.pid}\\n")
    return helper


turn_helper._ReadAhead.ask = ask
"""


def test_pi_print_reads_a_long_session_ahead(tmp_path: Path) -> None:
    """The real CLI on a session file above ``READ_AHEAD_MIN``: the helper forked at start-up converts its
    share and the request is what converting in one process gives."""
    from pi_core.testing import FakeProviderServer

    work = tmp_path / "work"
    work.mkdir()
    s = SessionManager.create(work, work)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(8000):
        call = ToolCall(id=f"call_{n}", name="read", arguments={"n": n})
        s.append_message(AssistantMessage(content=[TextContent(text=f"step {n}"), call], provider="fake",
                                          api="openai-completions", model="fake-model", stop_reason="toolUse"))
        s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                           content=[TextContent(text=f"out {n} é\n" + "z" * 4000)]))
    path = s.session_file
    s.close()
    assert path is not None and path.stat().st_size > READ_AHEAD_MIN
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SPY)
    log = tmp_path / "asked.log"
    agent = tmp_path / "agent"
    with FakeProviderServer([{"text": "done"}]) as server:
        server.write_models_json(agent, settings={"compaction": {"enabled": False}})
        models = json.loads((agent / "models.json").read_text())
        models["providers"]["fake"]["models"][0]["contextWindow"] = 100_000_000
        (agent / "models.json").write_text(json.dumps(models))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "READ_AHEAD_LOG": str(log),
               "PYTHONPATH": os.pathsep.join([str(spy), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                               "--session", str(path), "-p", "go on"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [line] = log.read_text().splitlines()
    pid, used = line.split()
    assert used == "True"  # the helper started at start-up took its share
    assert ended(int(pid))
    sent = server.requests[0]["body"]["messages"]
    model = MODEL.model_copy(update={"provider": "fake", "id": "fake-model"})
    context = context_of(path)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(openai_completions, "_TURNS", TurnCache(store=None))
        m.setattr(turn_helper, "MIN_MESSAGES", 10**9)
        expected = json.loads(b"".join(openai_completions.encoded_messages(
            model, context, openai_completions.get_compat(model)).chunks()))
    conversation_sent = [item for item in sent if item["role"] not in ("system", "developer")]
    assert conversation_sent == [item for item in expected if item["role"] not in ("system", "developer")][:-1]
    assert conversation_sent[-1] == {"role": "user", "content": [{"type": "text", "text": "go on"}]}
