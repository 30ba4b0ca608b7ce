"""The first conversion of a long conversation hands its later turns to a forked helper (pi_core/ai/turn_helper.py).

Whatever the helper does — converts its share, declines some turns, fails, hangs, is left behind when the
parent fails — the request must be byte for byte what converting in one process gives, and no helper
process may outlive the conversion.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pi_core import SessionManager
from pi_core.ai import Context, Model, TurnCache, turn_helper, wire
from pi_core.ai.types import (AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
                              UserMessage)
from pi_core.session.messages import convert_to_llm
from plugins.providers import anthropic, google, openai_completions, openai_completions_raw
from plugins.providers.openai_completions import encoded_messages, get_compat

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="the helper needs os.memfd_create (Linux)")

MODEL = Model(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9/v1",
              context_window=10_000_000, max_tokens=1000, input=["text", "image"])
TURNS = 150


def conversation(folder: Path) -> Path:
    """A session of ``TURNS`` tool turns (thinking, text, a call, its result), an image in every tenth
    result (which the raw converters leave to the usual one) and a user message every 25 turns."""
    s = SessionManager.create(folder, folder)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(TURNS):
        call = ToolCall(id=f"call_{n}", name="read", arguments={"path": f"f{n}.py", "n": n})
        s.append_message(AssistantMessage(content=[ThinkingContent(thinking=f"think {n}"), TextContent(text=f"step {n}"),
                                                   call], provider="p", api="openai-completions", model="m",
                                          stop_reason="toolUse"))
        content: list[Any] = [TextContent(text=f"{n} é\n" + "y" * (n % 7) * 40)]
        if n % 10 == 3:
            content.append(ImageContent(data="aGVsbG8=", mime_type="image/png"))
        s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read", content=content))
        if n % 25 == 24:
            s.append_message(UserMessage(content=f"and now part {n // 25 + 2}"))
    path = s.session_file
    assert path is not None
    s.close()
    return path


def context_of(path: Path) -> Context:
    session = SessionManager.open(path, read_only=True)
    context = Context(system_prompt="sys")
    context.messages = convert_to_llm(session.build_session_context().message_list())  # as the agent does
    return context


def body(path: Path, helper: bool, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The messages of the first request of a process on the session (no stored turns)."""
    with monkeypatch.context() as m:
        m.setattr(openai_completions, "_TURNS", TurnCache(store=None))
        m.setattr(turn_helper, "MIN_MESSAGES", 100 if helper else 10**9)
        messages = encoded_messages(MODEL, context_of(path), get_compat(MODEL))
        assert messages.tail, "the last turn is left open for the provider (a cache marker), never encoded"
        return b"".join(messages.chunks())


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "_WINDOW", 32)  # several windows, so that the helper has some of them


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The helpers started (each: its pid and where its share begins)."""
    started: list[Any] = []
    real = turn_helper.Helper.start.__func__  # type: ignore[attr-defined]

    def spy(cls: Any, *args: Any) -> Any:
        helper = real(cls, *args)
        if helper is not None:
            started.append(helper)
        return helper

    monkeypatch.setattr(turn_helper.Helper, "start", classmethod(spy))
    return started


@pytest.fixture
def parent_turns(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where the turns the raw converter converted in this process start (the helper's are not seen)."""
    seen: list[int] = []
    real = openai_completions_raw.raw_converter
    parent = os.getpid()

    def spy(*args: Any) -> Any:
        convert = real(*args)

        def counted(turn: list[Any], offset: int) -> Any:
            if os.getpid() == parent:
                seen.append(id(turn[0]))
            return convert(turn, offset)
        return counted

    monkeypatch.setattr(openai_completions_raw, "raw_converter", spy)
    return seen


def gone(pid: int) -> bool:
    """Whether the process has ended and been reaped (a helper that has done its work exits on its own,
    and is reaped when it has: give it a few seconds)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.usefixtures("small_windows")
def test_the_helper_converts_the_later_turns_and_the_request_is_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: list[Any], parent_turns: list[int]) -> None:
    path = conversation(tmp_path)
    alone = body(path, False, monkeypatch)
    converted_alone = len(parent_turns)
    parent_turns.clear()
    assert helpers == []
    assert body(path, True, monkeypatch) == alone
    [helper] = helpers
    assert 0 < helper.begin < TURNS * 2
    assert converted_alone > len(parent_turns) > 0  # the helper converted its share
    assert gone(helper.pid)
    items = json.loads(alone)
    assert sum(1 for item in items if item["role"] == "tool") == TURNS
    assert sum(1 for item in items if item["role"] == "user" and isinstance(item["content"], list)
               and any(p.get("type") == "image_url" for p in item["content"])) == TURNS // 10


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("module", [anthropic, google])
def test_the_other_independent_providers_send_the_same_with_a_helper(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: list[Any], module: Any) -> None:
    path = conversation(tmp_path)
    api = "anthropic-messages" if module is anthropic else "google-generative-ai"
    model = Model(id="m2", api=api, provider="p2", base_url="http://127.0.0.1:9", context_window=10_000_000,
                  max_tokens=1000, input=["text", "image"])
    from pi_core.ai.options import StreamOptions
    from pi_core.ai.wire import body_bytes

    bodies = []
    for minimum in (10**9, 100):
        with monkeypatch.context() as m:
            m.setattr(module, "_TURNS", TurnCache(store=None))
            m.setattr(turn_helper, "MIN_MESSAGES", minimum)
            built = module.build_payload(model, context_of(path), StreamOptions(api_key="k"))
            bodies.append(body_bytes(built[0] if isinstance(built, tuple) else built))
    assert bodies[0] == bodies[1]
    assert len(helpers) == 1


def failing(*args: Any) -> None:  # called in the helper only
    raise RuntimeError("the helper fails")


def hanging(*args: Any) -> None:  # called in the helper only
    time.sleep(60)


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("helper_work", [failing, hanging])
def test_a_helper_that_fails_or_hangs_costs_only_its_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          helpers: list[Any], parent_turns: list[int],
                                                          helper_work: Any) -> None:
    path = conversation(tmp_path)
    alone = body(path, False, monkeypatch)
    converted_alone = len(parent_turns)
    parent_turns.clear()
    monkeypatch.setattr(turn_helper, "_convert_into", helper_work)
    started = time.monotonic()
    assert body(path, True, monkeypatch) == alone
    assert time.monotonic() - started < 30  # a hanging helper is stopped after about a second, not waited for
    assert len(parent_turns) == converted_alone  # the parent converted the helper's share too
    assert gone(helpers[0].pid)


@pytest.mark.usefixtures("small_windows")
def test_a_parent_that_fails_stops_its_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              helpers: list[Any]) -> None:
    path = conversation(tmp_path)
    parent = os.getpid()
    real = openai_completions._convert_turn  # noqa: SLF001 - the usual converter: images, in this process

    def failing(*args: Any) -> Any:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(openai_completions, "_convert_turn", failing)
    with pytest.raises(KeyboardInterrupt):
        body(path, True, monkeypatch)
    [helper] = helpers
    assert gone(helper.pid)


def test_a_short_conversation_has_no_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            helpers: list[Any]) -> None:
    path = conversation(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(openai_completions, "_TURNS", TurnCache(store=None))
        b"".join(encoded_messages(MODEL, context_of(path), get_compat(MODEL)).chunks())
    assert helpers == []  # 300 messages are below MIN_MESSAGES


@pytest.mark.usefixtures("small_windows")
def test_a_later_request_converts_what_is_new_without_a_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               helpers: list[Any]) -> None:
    path = conversation(tmp_path)
    monkeypatch.setattr(openai_completions, "_TURNS", TurnCache(store=None))
    monkeypatch.setattr(turn_helper, "MIN_MESSAGES", 100)
    context = context_of(path)
    first = json.loads(b"".join(encoded_messages(MODEL, context, get_compat(MODEL)).chunks()))
    context.messages.append(UserMessage(content="one more"))
    second = json.loads(b"".join(encoded_messages(MODEL, context, get_compat(MODEL)).chunks()))
    assert len(helpers) == 1  # the first request only
    assert second[:-1] == first and second[-1] == {"role": "user", "content": "one more"}


@pytest.mark.usefixtures("small_windows")
def test_no_process_to_be_had_means_no_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               helpers: list[Any]) -> None:
    path = conversation(tmp_path)
    alone = body(path, False, monkeypatch)

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(turn_helper, "_fork", refused)
    assert body(path, True, monkeypatch) == alone
    assert helpers == []


def test_pi_print_with_a_helper_sends_what_one_process_converts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real CLI (its event loop, threads, signal handlers) on a session long enough for a helper: the
    request is what converting in one process gives (the answer pi stored aside)."""
    from pi_core.testing import FakeProviderServer
    from test_turn_store import pi_print

    work = tmp_path / "work"
    work.mkdir()
    s = SessionManager.create(work, work)
    s.append_message(UserMessage(content=[TextContent(text="start")]))
    for n in range(turn_helper.MIN_MESSAGES // 2 + 50):
        call = ToolCall(id=f"call_{n}", name="read", arguments={"n": n})
        s.append_message(AssistantMessage(content=[TextContent(text=f"step {n}"), call], provider="fake",
                                          api="openai-completions", model="fake-model", stop_reason="toolUse"))
        s.append_message(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                           content=[TextContent(text=f"out {n} é\n")]))
    path = s.session_file
    assert path is not None
    s.close()
    with FakeProviderServer([{"text": "done"}]) as server:
        done = pi_print(server, tmp_path / "agent", path, "go on")
    assert "done" in done.stdout
    sent = server.requests[0]["body"]["messages"]
    model = MODEL.model_copy(update={"provider": "fake", "id": "fake-model"})
    with monkeypatch.context() as m:
        m.setattr(openai_completions, "_TURNS", TurnCache(store=None))
        m.setattr(turn_helper, "MIN_MESSAGES", 10**9)
        expected = json.loads(b"".join(encoded_messages(model, context_of(path), get_compat(model)).chunks()))
    conversation = [item for item in sent if item["role"] not in ("system", "developer")]
    expected = [item for item in expected if item["role"] not in ("system", "developer")]
    assert expected[-1] == {"role": "assistant", "content": "done"}  # the session holds the answer now
    assert len(conversation) > turn_helper.MIN_MESSAGES
    assert conversation == expected[:-1]
    assert conversation[-1] == {"role": "user", "content": [{"type": "text", "text": "go on"}]}


@pytest.mark.usefixtures("small_windows")
def test_a_helper_reaped_by_someone_else_still_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      helpers: list[Any], parent_turns: list[int]) -> None:
    """A helper says it has written its turns before it exits: whoever collects its exit (a child
    watcher that waits for any child) takes nothing from the request."""
    path = conversation(tmp_path)
    alone = body(path, False, monkeypatch)
    converted_alone = len(parent_turns)
    parent_turns.clear()
    real = os.waitpid

    def another_watcher(pid: int, options: int) -> Any:  # as a child watcher waiting for any child would
        real(pid, 0)
        raise ChildProcessError(10, "No child processes")

    monkeypatch.setattr(turn_helper.os, "waitpid", another_watcher)
    assert body(path, True, monkeypatch) == alone
    assert converted_alone > len(parent_turns) > 0  # the helper's turns were taken
    monkeypatch.undo()
    assert gone(helpers[0].pid)


@pytest.mark.parametrize("module", [openai_completions, anthropic, google])
def test_a_request_without_messages_has_no_helper_and_no_error(module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_core.ai.options import StreamOptions
    from pi_core.ai.wire import body_bytes

    api = {openai_completions: "openai-completions", anthropic: "anthropic-messages",
           google: "google-generative-ai"}[module]
    model = MODEL.model_copy(update={"api": api})
    monkeypatch.setattr(module, "_TURNS", TurnCache(store=None))
    built = module.build_payload(model, Context(system_prompt="sys"), StreamOptions(api_key="k"))
    payload = built[0] if isinstance(built, tuple) else built
    sent = json.loads(body_bytes(payload))
    if module is google:
        assert sent["contents"] == []
    elif module is anthropic:
        assert sent["messages"] == []
    else:  # the system prompt is the only message
        assert [m["role"] for m in sent["messages"]] == ["system"]
