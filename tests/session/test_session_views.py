"""Request building straight from the stored lines must send exactly what typing every message sends.

A resumed session hands the agent a ``MessageList`` whose stored messages are read, for a request,
as views decoded from their lines (never typed). The reference is the old way: every message typed
by pydantic, converted by ``convert_to_llm`` and by the provider, encoded. Sessions hold every message
shape (images, thinking with and without signatures, redacted thinking, tool calls of another model,
failed answers, system messages with sections and tools, bash executions, custom messages, summaries,
compactions, context edits) and lines that do not fit the message format (skipped either way).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pi_core import SessionManager
from pi_core.agent.loop import LoopConfig, build_context
from pi_core.ai import Context, Model, MessageList
from pi_core.ai.abort import AbortController
from pi_core.ai.http import encode_json
from pi_core.ai.options import StreamOptions
from pi_core.ai.wire import body_bytes
from pi_core.session import convert_to_llm
from plugins.providers import openai_completions
from plugins.providers.openai_completions import build_payload

IMAGE = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}


def model(**changes: Any) -> Model:
    base = dict(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9/v1",
                context_window=100_000, max_tokens=1000, input=["text", "image"], reasoning=True)
    return Model(**{**base, **changes})


def assistant(n: int, *, provider: str = "p", stop: str = "toolUse", call: bool = True,
              thinking: dict[str, Any] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append(thinking)
    content.append({"type": "text", "text": f"answer {n} é \u2028"})
    if call:
        content.append({"type": "toolCall", "id": f"call_{n}|fc_{n}", "name": "read",
                        "arguments": {"path": f"f{n}.py", "n": n, "deep": {"x": [1, 2.5, None]}}})
    return {"role": "assistant", "content": content, "api": "openai-completions", "provider": provider,
            "model": "m", "usage": {"input": 10 + n, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                                    "totalTokens": 12 + n, "cost": {"input": 0.1, "output": 0, "cacheRead": 0,
                                                                    "cacheWrite": 0, "total": 0.1}},
            "stopReason": stop if call else "stop", "timestamp": 1000 + n}


def result(n: int, *, image: bool = False, error: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "x" * (n * 13) + "\n\tq\"uote"}]
    if image:
        content.append(IMAGE)
    return {"role": "toolResult", "toolCallId": f"call_{n}|fc_{n}", "toolName": "read", "content": content,
            "details": {"diff": [n], "any": "thing"}, "isError": error, "timestamp": 2000 + n}


def build(directory: Path) -> Path:
    s = SessionManager.create(directory, directory)
    s.append_message({"role": "system", "content": "", "sections": {"preamble": "be good", "tools": None},
                      "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}], "timestamp": 1})
    s.append_model_change("p", "m")
    first = s.append_message({"role": "user", "content": [{"type": "text", "text": "hello"}, IMAGE],
                              "timestamp": 5})
    for n in range(40):
        thinking = None
        if n % 3 == 0:
            thinking = {"type": "thinking", "thinking": f"hmm {n}", "thinkingSignature": f"sig{n}"}
        elif n % 3 == 1:
            thinking = {"type": "thinking", "thinking": "", "redacted": True, "thinkingSignature": "opaque"}
        s.append_message(assistant(n, provider="q" if n % 7 == 2 else "p", thinking=thinking))
        if n % 11 != 4:  # some calls are never answered
            s.append_message(result(n, image=n % 5 == 0, error=n % 6 == 0))
        if n % 8 == 3:
            s.append_message({"role": "user", "content": f"steer {n}", "timestamp": 3000 + n})
        if n == 6:
            s.append_message({"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 1,
                              "cancelled": False, "truncated": False, "timestamp": 7})
            s.append_custom_message_entry("note", "remember this", display=True, details={"k": 1})
            s.append_message({"role": "system", "content": "later system prompt", "timestamp": 8})
        if n == 9:
            failed = s.append_message({**assistant(n, call=False), "stopReason": "error", "errorMessage": "boom"})
            s.append_message({**assistant(n + 100, call=False), "stopReason": "aborted"})
            s.append_context_edit(failed, None)
        if n == 12:
            leaf = s.get_leaf_id()
            s.branch(first)
            s.append_message(assistant(99, call=False))
            s.branch_with_summary(leaf, "tried another way")
        if n == 20:
            kept = s.get_raw_branch()[-6]["id"]
            s.append_compaction("summary of the start", kept, 1234, {"readFiles": ["a"]})
        if n == 25:
            target = s.get_raw_branch()[-2]["id"]
            s.append_context_edit(target, {"content": "shorter"})
    s.append_message({"role": "user", "content": "last question", "timestamp": 9})
    path = Path(s.session_file)
    leaf = s.get_leaf_id()
    s.close()
    # Messages written by another program, some of which do not fit the format (skipped either way).
    odd = [
        {"role": "user", "content": [{"type": "text", "text": 5}], "timestamp": 1},  # bad text
        {"role": "toolResult", "tool_call_id": "call_39|fc_39", "tool_name": "read",  # snake case
         "content": [{"type": "text", "text": "snake"}], "timestamp": 2},
        {"role": "user", "content": "float time", "timestamp": 12.0},
        {"role": "assistant", "content": [{"type": "text", "text": "no usage"}], "stopReason": "stop",
         "provider": "p", "model": "m", "api": "openai-completions", "extra": {"kept": True},
         "timestamp": 3},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "x",
                                           "arguments": "not an object"}], "stopReason": "toolUse", "timestamp": 4},
        {"role": "user", "content": None, "timestamp": 6},
        {"role": "toolResult", "toolCallId": "c", "toolName": "x", "content": [], "isError": "yes",
         "timestamp": 5},
        {"role": "user", "content": "last question", "timestamp": 9},
    ]
    with path.open("a", encoding="utf-8") as out:
        for n, message in enumerate(odd):
            entry = {"type": "message", "id": f"odd{n:04d}", "parentId": leaf,
                     "timestamp": "2026-01-01T00:00:00.000Z", "message": message}
            out.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
            leaf = entry["id"]
    return path


def typed_request(path: Path, m: Model) -> bytes:
    """The reference: every message typed, converted and encoded from scratch."""
    s = SessionManager.open(path, read_only=True)
    try:
        messages = [msg for msg in s.build_session_context().messages if msg.role != "system"]
        context = Context(system_prompt="sys", messages=convert_to_llm(messages))
        openai_completions._TURNS.clear()  # noqa: SLF001 - no reuse in the reference
        payload = build_payload(m, context, StreamOptions())
        payload["messages"] = list(payload["messages"])  # as plain dicts
        return encode_json(payload)
    finally:
        s.close()


def lazy_context(s: SessionManager) -> Context:
    """The context a resumed session's agent builds: a MessageList through the loop's own code."""
    messages = s.build_session_context().message_list()
    config = LoopConfig(model=model(), stream=None, system_prompt="sys", tools=[], convert_to_llm=convert_to_llm)  # type: ignore[arg-type]
    return asyncio.run(build_context(messages, config, AbortController().signal))


def test_requests_from_views_are_byte_for_byte_the_typed_ones(tmp_path: Path) -> None:
    path = build(tmp_path)
    for m in (model(), model(provider="q"), model(input=["text"]), model(reasoning=False)):
        expected = typed_request(path, m)
        s = SessionManager.open(path, read_only=True)
        try:
            context = lazy_context(s)
            assert isinstance(context.messages, MessageList)
            openai_completions._TURNS.clear()  # noqa: SLF001
            assert body_bytes(build_payload(m, context, StreamOptions())) == expected
            again = lazy_context(s)  # a second request on the same session: turns reused
            assert body_bytes(build_payload(m, again, StreamOptions())) == expected
        finally:
            s.close()


def _payload(module: Any, m: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    built = module.build_payload(m, context, options)
    return built[0] if isinstance(built, tuple) else built


@pytest.mark.parametrize(("name", "api", "field"), [("anthropic", "anthropic-messages", "messages"),
                                                   ("openai_responses", "openai-responses", "input"),
                                                   ("google", "google-generative-ai", "contents"),
                                                   ("mistral", "mistral-conversations", "messages"),
                                                   ("amazon_bedrock", "bedrock-converse-stream", "messages")])
def test_other_providers_requests_from_views_are_byte_for_byte_the_typed_ones(tmp_path: Path, name: str, api: str,
                                                                               field: str) -> None:
    import importlib

    module = importlib.import_module(f"plugins.providers.{name}")
    path = build(tmp_path)
    for m in (model(api=api), model(api=api, provider="q"), model(api=api, input=["text"]), model(api=api, id="other"),
              model(api=api, id="gemini-3-pro"),  # Gemini 3 sends the tool call ids
              model(api=api, id="anthropic.claude-sonnet-4-5")):  # Bedrock: thinking signed, a cache point
        for options in (StreamOptions(), StreamOptions(api_key="sk-ant-oat01-x")):
            s = SessionManager.open(path, read_only=True)
            try:
                messages = [msg for msg in s.build_session_context().messages if msg.role != "system"]
                module._TURNS.clear()  # noqa: SLF001 - the reference: every message typed, nothing reused
                typed = _payload(module, m, Context(system_prompt="sys", messages=convert_to_llm(messages)), options)
                expected = encode_json({**typed, field: list(typed[field])})
                module._TURNS.clear()  # noqa: SLF001
                for _ in range(2):  # the second request on the session reuses the turns
                    assert body_bytes(_payload(module, m, lazy_context(s), options)) == expected
            finally:
                s.close()


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses",
                                 "google-generative-ai", "mistral-conversations", "bedrock-converse-stream"])
def test_nothing_is_typed_for_a_request(tmp_path: Path, api: str) -> None:
    from plugins.providers import anthropic

    path = build(tmp_path)
    s = SessionManager.open(path, read_only=True)
    try:
        messages = s.build_session_context().message_list()
        context = lazy_context(s)
        openai_completions._TURNS.clear()  # noqa: SLF001
        anthropic._TURNS.clear()  # noqa: SLF001
        if api == "openai-completions":
            body_bytes(build_payload(model(), context, StreamOptions()))
        elif api == "anthropic-messages":
            body_bytes(anthropic.build_payload(model(api=api), context, StreamOptions())[0])
        else:
            import importlib

            module = importlib.import_module("plugins.providers." + {"openai-responses": "openai_responses",
                                                                     "google-generative-ai": "google",
                                                                     "mistral-conversations": "mistral",
                                                                     "bedrock-converse-stream": "amazon_bedrock"}[api])
            module._TURNS.clear()  # noqa: SLF001
            body_bytes(module.build_payload(model(api=api), context, StreamOptions()))
        stored = [item for item in messages.items() if type(item).__name__ == "StoredMessage"]
        assert len(stored) > 40
        # The bad lines are typed (to be sure they are left out); none of the good ones is.
        assert "typed" not in repr(stored[0])
        typed = [item for item in context.messages.items() if "typed" in repr(item)]
        assert len(typed) <= 8
    finally:
        s.close()


def test_plugins_still_get_typed_messages(tmp_path: Path) -> None:
    path = build(tmp_path)
    s = SessionManager.open(path, read_only=True)
    try:
        lazy = s.build_session_context().message_list()
        reference = list(s.build_session_context().messages)
        assert list(lazy) == reference  # reading types them, the same models as before
        assert lazy[3] is lazy[3]
        assert [type(m).__name__ for m in lazy] == [type(m).__name__ for m in reference]
    finally:
        s.close()


def test_a_line_replaced_on_disk_is_not_sent_as_something_else(tmp_path: Path) -> None:
    path = build(tmp_path)
    s = SessionManager.open(path, read_only=True)
    try:
        messages = s.build_session_context().message_list()
        lines = path.read_bytes().splitlines(keepends=True)
        # Same length, other entry id: what the store meant to read is no longer there.
        swapped = [line.replace(b'"id":"', b'"id":"Z', 1)[:len(line) - 2] + line[-2:]
                   if json.loads(line).get("type") == "message" else line for line in lines]
        path.write_bytes(b"".join(swapped))
        context = asyncio.run(build_context(messages, LoopConfig(model=model(), stream=None, system_prompt="sys", tools=[],  # type: ignore[arg-type]
                                                                 convert_to_llm=convert_to_llm),
                                            AbortController().signal))
        openai_completions._TURNS.clear()  # noqa: SLF001
        try:
            build_payload(model(), context, StreamOptions())
        except Exception as exc:  # the store's error names the file and what to do
            assert "reopen" in str(exc)
        else:
            raise AssertionError("a changed file was read as if it had not changed")
    finally:
        s.close()


def test_a_copy_for_plugins_is_a_valid_model_input(tmp_path: Path) -> None:
    """``context_with_system`` handlers get a deep copy of the request's messages: typed, and without
    the stored messages that do not validate (as the typed path never held them)."""
    import copy

    path = build(tmp_path)
    s = SessionManager.open(path, read_only=True)
    try:
        copied = copy.deepcopy(lazy_context(s).messages)
        reference = convert_to_llm([m for m in s.build_session_context().messages if m.role != "system"])
        assert copied == reference
        assert Context(messages=copied).messages == reference  # validates: no invalid:... roles
        assert list(lazy_context(s).messages) == reference
    finally:
        s.close()


def test_a_request_handler_that_reads_no_messages_types_none(tmp_path: Path) -> None:
    """A ``context_with_system`` handler that only looks at tools (codemode's, always registered)
    must not make the request type, copy or revalidate the resumed conversation: the provider gets
    the session's own MessageList, its stored messages still unread."""
    from pi_core import ContextWithSystemEvent, create_agent_session, hookimpl
    from pi_core.ai.faux import FauxProvider, FauxTurn, faux_text

    class ToolsOnly:
        __name__ = "tools_only"

        @hookimpl
        def context_with_system(self, event: ContextWithSystemEvent) -> None:
            event.tools = list(event.tools)

    path = build(tmp_path)
    faux = FauxProvider(seed=1)
    faux.enqueue(FauxTurn([faux_text("an answer")], usage={"input": 100, "output": 2}))  # no estimate: it reads all

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, ToolsOnly()],
                                             session=SessionManager.open(path))
        await session.prompt("one more")
        return session

    session = asyncio.run(scenario())
    sent = faux.requests[0].context.messages
    assert isinstance(sent, MessageList)
    stored = [item for item in sent.items() if type(item).__name__ == "StoredMessage"]
    assert len(stored) > 40
    assert len([item for item in stored if "typed" in repr(item)]) <= 8  # the lines that do not fit
    assert sent[-1].content[0].text == "one more"
    session.session.close()


def test_where_messages_are_stored_is_told_alike_with_this_runs_messages_after_them(tmp_path: Path) -> None:
    """``span_columns`` takes a quick way when only this run's messages follow the stored ones."""
    from pi_core.ai.types import TextContent, UserMessage
    from pi_core.ai.message_list import _columns

    w = SessionManager.create(tmp_path, tmp_path)
    for n in range(10):
        w.append_message(assistant(n) if n % 2 else {"role": "user", "content": f"q {n}", "timestamp": n})
    path = w.session_file
    w.close()
    s = SessionManager.open(path, read_only=True)
    try:
        messages = s.build_session_context().message_list()
        stored = len(messages)
        for n in range(3):
            messages.append(UserMessage(content=[TextContent(text=f"new {n}")]))
        source, offsets, lengths = messages.span_columns()
        assert (source, offsets, lengths) == _columns(messages.spans())
        assert list(lengths[stored:]) == [0, 0, 0] and all(lengths[:stored])
        assert len(offsets) == len(lengths) == stored + 3
        messages.insert(1, UserMessage(content="in the middle"))  # not at the end: the general way
        assert messages.span_columns() == _columns(messages.spans())
    finally:
        s.close()


def test_a_prompt_on_a_resumed_session_without_a_system_message_types_none_of_it(tmp_path: Path) -> None:
    """Looking for the system message (which such a session lacks) or for summaries must not type the messages."""
    from pi_core import create_agent_session
    from pi_core.testing import FakeProviderServer

    work = tmp_path / "work"
    work.mkdir()
    w = SessionManager.create(work, work)
    for n in range(40):
        w.append_message(assistant(n, call=False) if n % 2 else {"role": "user", "content": f"q {n}", "timestamp": n})
    path = w.session_file
    w.close()
    agent = tmp_path / "agent"

    async def scenario() -> Any:
        session = await create_agent_session(work, model="fake/fake-model", agent_dir=agent,
                                             session=SessionManager.open(path))
        await session.prompt("one more")
        usage = session.get_context_usage()
        return session.agent.messages.items(), usage

    with FakeProviderServer([{"text": "answered"}]) as server:
        server.write_models_json(agent)
        items, usage = asyncio.run(scenario())
    stored = [item for item in items if type(item).__name__ == "StoredMessage"]
    assert len(stored) == 40
    typed = [item for item in stored if "typed" in repr(item)]
    assert len(typed) <= 1, typed  # at most the last answer, read for its usage
    assert usage.tokens is not None and usage.tokens > 0
