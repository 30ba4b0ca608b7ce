"""Turns converted straight from their lines (raw views) must send exactly what the usual way sends.

The Chat Completions, Anthropic Messages, OpenAI Responses and Gemini providers convert most turns of a
resumed session from raw views (:mod:`pi_core.ai.raw_views`) in one pass of their own, and leave the rest
to the usual way (views, handoff rules, converter). Random sessions of every message shape — other models' thinking and
tool ids, failed answers, unanswered calls, blank and white-space texts, images, escaped surrogates,
floats in arguments, fields of the wrong type — must give the same request body, byte for byte, as
the usual way (which test_session_views.py holds to typing every message), for every dialect the raw
converters take or decline; plain sessions are also compared with the typed reference directly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from pi_core import SessionManager
from pi_core.ai import Model
from pi_core.ai.options import StreamOptions
from pi_core.ai.wire import body_bytes
from plugins.providers import (anthropic, anthropic_raw, google, google_raw, openai_completions, openai_completions_raw,
                               openai_responses, openai_responses_raw)
from plugins.providers.openai_completions import build_payload

from test_session_views import lazy_context, typed_request

IMAGE = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
# PAIR, LONE and ESCAPED stand for escapes written into the file as they are (see ``write_session``).
def rarely(usual: Any, odd: Any) -> Any:
    """``usual``, and one time in twenty ``odd``."""
    return st.integers(0, 19).flatmap(lambda k: odd if k == 0 else usual)


# A session line that does not decode at C speed (a lone surrogate) makes the scan hold its whole block
# as dicts, which no raw view is read from: such lines are rare here, so most turns take the raw way.
TEXTS = rarely(st.sampled_from(["", " ", "\n\t", "\u00a0", "\u3000x", "plain", "é and \u2028", " padded ",
                                "quote \" and \\ backslash", "emoji 😀", "x" * 300, "ESCAPED é",
                                "\\u00e9 literally"]),
               st.sampled_from(["PAIR pair", "lone LONE half"]))
ESCAPES = {"PAIR": "\\ud83d\\ude00", "LONE": "\\ud800", "ESCAPED": "\\u00e9"}
IDS = st.sampled_from(["call_1", "call_2", "call_3", "call|item", "c" * 50, "call 4"])
ARGUMENTS = rarely(
    st.dictionaries(st.sampled_from(["path", "n", "deep", "e"]),
                    st.one_of(TEXTS, st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                              st.lists(st.integers(0, 9), max_size=3), st.none(), st.booleans()), max_size=4),
    st.sampled_from(["not an object", [1, 2]]))


def block(kind: str, draw: Any) -> dict[str, Any]:
    if kind == "text":
        out = {"type": "text", "text": draw(rarely(TEXTS, st.sampled_from([5, None])))}
        signature = draw(st.sampled_from([None, None, "msg_plain", '{"v":1,"id":"msg_9","phase":"final_answer"}',
                                          "c2lnbmVk"]))
        if signature:
            out["textSignature"] = signature
        return out
    if kind == "thinking":
        out = {"type": "thinking", "thinking": draw(rarely(TEXTS, st.just(7)))}
        signature = draw(st.sampled_from([None, "reasoning_content", "reasoning", "sig",
                                          '{"type":"reasoning","id":"rs_1","summary":[]}', "c2lnbmVk"]))
        if signature:
            out["thinkingSignature"] = signature
        if draw(st.booleans()):
            out["redacted"] = draw(st.booleans())
        return out
    if kind == "image":
        return dict(IMAGE)
    out = {"type": "toolCall", "id": draw(IDS), "name": draw(st.sampled_from(["read", "bash"])),
           "arguments": draw(ARGUMENTS)}
    signature = draw(st.sampled_from([None, None, "c2lnbmVk", "not base64"]))  # Gemini's thought signatures
    if signature:
        out["thoughtSignature"] = signature
    return out


@st.composite
def messages(draw: Any) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "assistant", "toolResult", "toolResult"]))
    if role == "user":
        content: Any = draw(st.one_of(TEXTS, st.lists(st.sampled_from(["text", "text", "image"]), max_size=3)))
        if isinstance(content, list):
            content = [block(kind, draw) for kind in content]
        return {"role": "user", "content": content, "timestamp": 1}
    if role == "toolResult":
        kinds = draw(st.lists(st.sampled_from(["text", "text", "text", "image"]), max_size=3))
        out = {"role": "toolResult", "toolCallId": draw(IDS), "toolName": "read",
               "content": [block(kind, draw) for kind in kinds], "isError": draw(st.booleans()), "timestamp": 2}
        if draw(st.integers(0, 9)) == 0:
            out["isError"] = "yes"  # not a bool: the message is left out
        return out
    kinds = draw(st.lists(st.sampled_from(["text", "thinking", "toolCall", "toolCall"]), max_size=4))
    out = {"role": "assistant", "content": [block(kind, draw) for kind in kinds],
           "api": draw(st.sampled_from(["openai-completions", "anthropic-messages", "openai-responses",
                                        "google-generative-ai"])),
           "provider": draw(st.sampled_from(["p", "p", "q"])), "model": draw(st.sampled_from(["m", "m", "gemini-3-pro"])),
           "stopReason": draw(st.sampled_from(["stop", "toolUse", "toolUse", "error", "aborted"])), "timestamp": 3}
    if draw(st.integers(0, 9)) == 0:
        out["usage"] = "none"  # of the wrong type: the message is left out
    return out


def write_session(folder: Path, conversation: list[dict[str, Any]]) -> Path:
    s = SessionManager.create(folder, folder)
    s.append_message({"role": "user", "content": "start", "timestamp": 0})
    leaf = s.get_leaf_id()
    path = Path(s.session_file)
    s.close()
    with path.open("a", encoding="utf-8") as out:
        for n, message in enumerate(conversation + [{"role": "user", "content": "last", "timestamp": 9}]):
            entry = {"type": "message", "id": f"m{n:05d}", "parentId": leaf,
                     "timestamp": "2026-01-01T00:00:00.000Z", "message": message}
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
            for marker, escape in ESCAPES.items():
                line = line.replace(marker, escape)
            out.write(line + "\n")
            leaf = entry["id"]
    return path


def model(**changes: Any) -> Model:
    base = dict(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9/v1",
                context_window=100_000, max_tokens=1000, input=["text", "image"], reasoning=True)
    return Model(**{**base, **changes})


MODELS = [model(), model(provider="q"), model(provider="openai", input=["text"]), model(reasoning=False),
          model(compat={"requiresNonNullAssistantContent": True, "requiresToolResultName": True}),
          model(compat={"requiresReasoningContentOnAssistantMessages": True}),
          model(compat={"requiresThinkingAsText": True}), model(provider="q", compat={"toolCallIdFormat": "mistral"}),
          model(compat={"requiresAssistantAfterToolResult": True})]
# Anthropic Messages: the same model, another one, unsigned thinking sent as thinking; and a Claude Code
# sign-in (tool names as Claude Code spells them).
ANTHROPIC = [(model(api="anthropic-messages"), StreamOptions()),
             (model(api="anthropic-messages", provider="q"), StreamOptions()),
             (model(api="anthropic-messages", compat={"allowEmptySignature": True}), StreamOptions()),
             (model(api="anthropic-messages"), StreamOptions(api_key="sk-ant-oat01-x"))]
# OpenAI Responses: the same model; OpenAI itself (which keeps "call|item" ids); another provider.
RESPONSES = [(model(api="openai-responses"), None), (model(api="openai-responses", provider="openai"), None),
             (model(api="openai-responses", provider="q", input=["text"]), None)]
# Gemini: ids not sent; ids sent (Gemini 3: another model's are renamed), for another provider and for
# the provider of most messages (whose "gemini-3-pro" answers through other APIs are the same provider
# and model, but not the same API), with and without images.
GOOGLE = [(model(api="google-generative-ai"), None),
          (model(api="google-generative-ai", id="gemini-3-pro", provider="q"), None),
          (model(api="google-generative-ai", id="gemini-3-pro", input=["text"]), None)]


def lazy_request(path: Path, m: Model, options: StreamOptions | None = None) -> bytes:
    s = SessionManager.open(path, read_only=True)
    try:
        openai_completions._TURNS.clear()  # noqa: SLF001 - no reuse: every turn converted
        anthropic._TURNS.clear()  # noqa: SLF001
        openai_responses._TURNS.clear()  # noqa: SLF001
        google._TURNS.clear()  # noqa: SLF001
        if m.api == "google-generative-ai":
            return body_bytes(google.build_payload(m, lazy_context(s), options or StreamOptions()))
        if m.api == "openai-responses":
            return body_bytes(openai_responses.build_payload(m, lazy_context(s), options or StreamOptions()))
        if m.api == "anthropic-messages":
            return body_bytes(anthropic.build_payload(m, lazy_context(s), options or StreamOptions())[0])
        return body_bytes(build_payload(m, lazy_context(s), options or StreamOptions()))
    finally:
        s.close()


def usual_request(path: Path, m: Model, monkeypatch: Any, options: StreamOptions | None = None) -> bytes:
    """The reference: the same request with every turn converted the usual way (from views)."""
    with monkeypatch.context() as patch:
        patch.setattr(openai_completions_raw, "raw_converter", lambda *args: None)
        patch.setattr(anthropic_raw, "raw_converter", lambda *args: None)
        patch.setattr(openai_responses_raw, "raw_converter", lambda *args: None)
        patch.setattr(google_raw, "raw_converter", lambda *args: None)
        return lazy_request(path, m, options)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conversation=st.lists(messages(), min_size=1, max_size=24))
def test_raw_turns_send_what_the_usual_way_sends(tmp_path_factory: Any, monkeypatch: Any,
                                                 conversation: list[dict[str, Any]]) -> None:
    path = write_session(tmp_path_factory.mktemp("raw"), conversation)
    for m, options in [(m, None) for m in MODELS] + ANTHROPIC + RESPONSES + GOOGLE:
        assert lazy_request(path, m, options) == usual_request(path, m, monkeypatch, options), m.api + str(m.compat)


def raw_calls(monkeypatch: Any, module: Any) -> list[bool]:
    """Whether each turn handed to ``module``'s raw converter was taken (``False``: declined)."""
    taken: list[bool] = []
    real = module.raw_converter

    def spy(*args: Any) -> Any:
        convert = real(*args)
        if convert is None:
            return None

        def counted(turn: list[Any], offset: int) -> Any:
            done = convert(turn, offset)
            taken.append(done is not None)
            return done
        return counted

    monkeypatch.setattr(module, "raw_converter", spy)
    return taken


def test_plain_turns_take_the_raw_way(tmp_path: Path, monkeypatch: Any) -> None:
    """Every turn but the last of a plain conversation is converted from raw views (and sends the same)."""
    taken = raw_calls(monkeypatch, openai_completions_raw)
    conversation: list[dict[str, Any]] = []
    for n in range(30):
        conversation.append({"role": "assistant", "api": "openai-completions", "provider": "p" if n % 2 else "q",
                             "model": "m", "stopReason": "toolUse", "timestamp": 3, "content": [
                                 {"type": "thinking", "thinking": f"think {n}", "thinkingSignature": "reasoning_content"},
                                 {"type": "text", "text": f"answer {n} é"},
                                 {"type": "toolCall", "id": f"call_{n}", "name": "read", "arguments": {"n": n}}]})
        conversation.append({"role": "toolResult", "toolCallId": f"call_{n}", "toolName": "read",
                             "content": [{"type": "text", "text": f"out {n}"}], "isError": False, "timestamp": 4})
        if n % 5 == 0:
            conversation.append({"role": "user", "content": f"more {n}", "timestamp": 5})
        if n % 5 == 1:  # an empty text block is left out
            conversation.append({"role": "user", "timestamp": 5, "content": [{"type": "text", "text": ""},
                                                                            {"type": "text", "text": f"and {n}"}]})
    path = write_session(tmp_path, conversation)
    for m in (model(), model(provider="q")):
        taken.clear()
        assert lazy_request(path, m) == typed_request(path, m)
        assert len(taken) == 30 and all(taken)
    responses = raw_calls(monkeypatch, openai_responses_raw)
    for m, _ in RESPONSES:
        responses.clear()
        assert lazy_request(path, m) == usual_request(path, m, monkeypatch)
        assert len(responses) == 30 and all(responses)
    gemini = raw_calls(monkeypatch, google_raw)
    for m, _ in GOOGLE:
        gemini.clear()
        assert lazy_request(path, m) == usual_request(path, m, monkeypatch)
        assert len(gemini) == 30 and all(gemini)
    taken.clear()
    assert lazy_request(path, model(compat={"requiresThinkingAsText": True})) == \
        typed_request(path, model(compat={"requiresThinkingAsText": True}))
    assert taken == []  # a dialect it leaves to the usual way


def test_an_image_or_a_renamed_id_goes_the_usual_way(tmp_path: Path, monkeypatch: Any) -> None:
    taken = raw_calls(monkeypatch, openai_completions_raw)
    call = {"role": "assistant", "api": "openai-completions", "provider": "q", "model": "m", "stopReason": "toolUse",
            "timestamp": 3, "content": [{"type": "toolCall", "id": "call|item", "name": "read", "arguments": {}}]}
    result = {"role": "toolResult", "toolCallId": "call|item", "toolName": "read", "isError": False, "timestamp": 4,
              "content": [{"type": "text", "text": "see"}, IMAGE]}
    path = write_session(tmp_path, [call, {**result, "content": result["content"][:1]}, dict(call, provider="p"), result,
                                    {"role": "assistant", "api": "openai-completions", "provider": "p", "model": "m",
                                     "stopReason": "stop", "timestamp": 5, "content": [{"type": "text", "text": "ok"}]}])
    assert lazy_request(path, model()) == typed_request(path, model())
    assert taken == [True, False, False]  # the first turn; the renamed id (another model's); the image


def test_a_message_its_view_would_refuse_goes_the_usual_way(tmp_path: Path) -> None:
    """Arguments that are no object, thinking that is no string: the usual way leaves the message out,
    and so must a raw turn (it is declined, and the usual way decides)."""
    def answer(n: int, **block: Any) -> dict[str, Any]:
        return {"role": "assistant", "api": "openai-completions", "provider": "q", "model": "m", "stopReason": "stop",
                "timestamp": 3, "content": [{"type": "text", "text": f"answer {n}"}, block]}

    path = write_session(tmp_path, [answer(1, type="toolCall", id="c1", name="read", arguments="not an object"),
                                    {"role": "user", "content": "go on", "timestamp": 4},
                                    answer(2, type="thinking", thinking=7),
                                    {"role": "user", "content": "go on", "timestamp": 4},
                                    answer(3, type="toolCall", id="c3", name="read", arguments=[1]),
                                    {"role": "user", "content": "go on", "timestamp": 4},
                                    answer(4, type="text", text="fine"),
                                    {"role": "user", "content": "go on", "timestamp": 4}])
    sent = lazy_request(path, model())
    assert sent == typed_request(path, model())
    assert b"answer 4" in sent and b"answer 1" not in sent and b"answer 2" not in sent and b"answer 3" not in sent
    m, options = ANTHROPIC[1]
    sent = lazy_request(path, m, options)
    assert sent == typed_request_anthropic(path, m, options)
    assert b"answer 4" in sent and b"answer 1" not in sent and b"answer 2" not in sent and b"answer 3" not in sent


def test_a_line_that_is_not_the_entry_it_should_be_has_no_raw_view() -> None:
    from pi_core.ai.raw_views import decode_lines

    def line(entry_id: str, message: dict[str, Any]) -> bytes:
        return json.dumps({"type": "message", "id": entry_id, "message": message}).encode()

    user = {"role": "user", "content": "hi", "timestamp": 1}
    good = ("a", line("a", user))
    assert [type(v).__name__ for v in decode_lines([good, good])] == ["RawUser", "RawUser"]
    assert decode_lines([good, ("b", line("a", user))]) == [decode_lines([good])[0], None]  # another entry's line
    assert decode_lines([good, None])[1] is None
    assert decode_lines([("c", line("c", {"role": "bashExecution", "command": "ls"}))]) == [None]
    assert decode_lines([("d", line("d", user).replace(b'"hi"', b'"\\ud800"'))]) == [None]  # a lone surrogate


def shaped_session(folder: Path, shape: list[str]) -> Path:
    s = SessionManager.create(folder, folder)
    s.append_message({"role": "user", "content": "start", "timestamp": 0})
    for n, kind in enumerate(shape):
        if kind == "user":
            s.append_message({"role": "user", "content": f"question {n}", "timestamp": n})
        elif kind == "answer":
            s.append_message({"role": "assistant", "api": "openai-completions", "provider": "p", "model": "m",
                              "stopReason": "stop", "timestamp": n, "content": [{"type": "text", "text": f"a{n}"}]})
        elif kind == "odd":  # a message its view refuses: the block is read line by line
            s.append_message({"role": "user", "content": "\ud800", "timestamp": n})
        elif kind == "model":
            s.append_model_change("p", f"m{n}")
        elif kind == "custom":
            s.append_custom_entry("note", {"n": n})
        elif kind == "label":
            s.append_label_change(s.get_leaf_id(), f"label {n}")
        elif len(s.get_raw_branch()) > 2:
            s.branch(s.get_raw_branch()[-3]["id"])
    path = Path(s.session_file)
    s.close()
    return path


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.sampled_from(["user", "answer", "model", "custom", "branch", "label"]), min_size=2,
                      max_size=40), windows=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=6))
def test_lines_read_in_one_go_are_the_lines_read_one_by_one(tmp_path_factory: Any, monkeypatch: Any,
                                                            shape: list[str], windows: list[tuple[int, int]]) -> None:
    """A window of a conversation whose lines follow one another in the file is read and split in one
    go; with other entries between them, branches, and messages appended since the file was read, it
    must give the lines (and the ``None`` for those held in memory) that reading them one by one gives."""
    from pi_core.ai import message_lines
    from pi_core.session.scan import RecordStore

    s = SessionManager.open(shaped_session(tmp_path_factory.mktemp("lines"), shape))
    try:
        s.append_message({"role": "user", "content": "held in memory", "timestamp": 99})
        messages = s.build_session_context().message_list()
        count = len(messages)
        for lo, hi in [(0, count), (0, count - 1), *((min(a, b) % count, max(a, b) % count) for a, b in windows)]:
            fast = message_lines(messages, lo, hi)
            with monkeypatch.context() as patch:
                patch.setattr(RecordStore, "_raw_lines", lambda self, records: None)
                assert message_lines(messages, lo, hi) == fast
    finally:
        s.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.sampled_from(["user", "answer", "answer", "odd", "model", "custom", "branch", "label"]),
                      min_size=2, max_size=40),
       windows=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=6),
       read=st.lists(st.integers(0, 60), max_size=3), typed=st.lists(st.integers(0, 60), max_size=2))
def test_views_read_as_one_block_are_the_views_read_line_by_line(tmp_path_factory: Any, shape: list[str],
                                                                 windows: list[tuple[int, int]], read: list[int],
                                                                 typed: list[int]) -> None:
    """A window of a conversation read as one block of the file and decoded in one go gives the raw views
    that its lines read and decoded one by one give — or declines: with other entries between the
    messages, branches, entries held in memory since they were read, messages typed since (no longer
    what their lines say), appended ones, and a message whose view refuses it."""
    from pi_core.ai import message_line_block, message_lines
    from pi_core.ai.raw_views import decode_block, decode_lines

    path = shaped_session(tmp_path_factory.mktemp("block"), shape)
    s = SessionManager.open(path)
    try:
        s.append_message({"role": "user", "content": "held in memory", "timestamp": 99})
        ids = [entry.id for entry in s.get_entries()]
        for k in read:  # read as an entry: held as a dict from now on, still its line
            s.get_entry(ids[k % len(ids)])
        messages = s.build_session_context().message_list()
        count = len(messages)
        for k in typed:
            messages[k % count]
        typed_now = {k % count for k in typed}
        for lo, hi in [(0, count), (0, count - 1), (1, count - 1),
                       *((min(a, b) % count, max(a, b) % count) for a, b in windows)]:
            block = message_line_block(messages, lo, hi)
            views = None if block is None else decode_block(block)
            if views is not None:
                assert views == decode_lines(lines_one_by_one(messages, lo, hi, typed_now))
    finally:
        s.close()


def lines_one_by_one(messages: Any, lo: int, hi: int, typed: set[int] = frozenset()) -> list[Any]:
    """:func:`message_lines`, with the lines of entries held as dicts read from the file too (not those of
    the messages ``typed``: what they are now is not their lines)."""
    from pi_core.ai import message_lines

    out = message_lines(messages, lo, hi)
    for n, span in enumerate(messages.spans()[lo:hi]):
        if out[n] is None and span is not None and lo + n not in typed:
            line = span[0].read(span[1], span[2])
            out[n] = (json.loads(line)["id"], line)
    return out


def test_a_window_of_message_lines_is_read_as_one_block(tmp_path: Path) -> None:
    """The usual shape, a long conversation with a few other entries and entries read as dicts among its
    messages, is read in one go."""
    from pi_core.ai import message_line_block, message_lines
    from pi_core.ai.raw_views import decode_block, decode_lines

    path = shaped_session(tmp_path, ["user", "answer", "answer", "label", "answer", "model", "answer"] * 10)
    s = SessionManager.open(path)
    try:
        s.get_entry(s.get_entries()[-1].id)
        messages = s.build_session_context().message_list()
        count = len(messages)
        for lo, hi in [(0, count), (3, count), (0, 10)]:
            block = message_line_block(messages, lo, hi)
            assert block is not None
            views = decode_block(block)
            assert views is not None and len(views) == hi - lo
            assert views == decode_lines(lines_one_by_one(messages, lo, hi))
        messages[4]  # typed: its line no longer speaks for it
        assert message_line_block(messages, 0, 10) is None and message_line_block(messages, 5, 10) is not None
    finally:
        s.close()


def test_a_block_with_lines_that_are_no_entries_or_not_the_expected_ones_is_not_taken(tmp_path: Path) -> None:
    from pi_core.ai import LineBlock, message_line_block
    from pi_core.ai.raw_views import decode_block, decode_lines

    path = shaped_session(tmp_path, ["user", "answer"] * 10)
    lines = path.read_bytes().split(b"\n")
    lines.insert(8, b"this line is no entry")  # skipped when the session is read: lines and records part
    path.write_bytes(b"\n".join(lines))
    s = SessionManager.open(path, read_only=True)
    try:
        messages = s.build_session_context().message_list()
        assert len(messages) == 21
        assert message_line_block(messages, 0, 12) is None
        block = message_line_block(messages, 8, 12)
        assert block is not None and decode_block(block) == decode_lines(lines_one_by_one(messages, 8, 12))
        assert decode_block(LineBlock(block.data, block.lines, block.at, [*block.ids[:-1], "another"])) is None
        assert decode_block(LineBlock(block.data, block.lines + 1, range(block.lines + 1), [*block.ids, "x"])) is None
    finally:
        s.close()


def test_anthropic_turns_take_the_raw_way(tmp_path: Path, monkeypatch: Any) -> None:
    """Thinking signed, unsigned, blank and redacted; tool results parted by a user message and joined
    across a failed answer; a blank user message; Claude Code tool names: sent as the usual way sends them."""
    taken = raw_calls(monkeypatch, anthropic_raw)

    def answer(n: int, *blocks: dict[str, Any], stop: str = "toolUse") -> dict[str, Any]:
        return {"role": "assistant", "api": "anthropic-messages", "provider": "p", "model": "m", "stopReason": stop,
                "timestamp": 3, "content": [*blocks, {"type": "text", "text": f"answer {n}"},
                                            {"type": "toolCall", "id": f"toolu_{n}", "name": "read", "arguments": {"n": n}}]}

    def result(n: int, error: bool = False) -> dict[str, Any]:
        return {"role": "toolResult", "toolCallId": f"toolu_{n}", "toolName": "read", "isError": error, "timestamp": 4,
                "content": [{"type": "text", "text": f"out {n}"}, {"type": "text", "text": "more"}]}

    conversation = [
        answer(1, {"type": "thinking", "thinking": "signed", "thinkingSignature": "sig"}), result(1),
        {"role": "user", "content": "steer", "timestamp": 5}, result(9, error=True),
        answer(2, {"type": "thinking", "thinking": "unsigned"}), result(2),
        answer(3, {"type": "thinking", "thinking": " ", "thinkingSignature": ""},
               {"type": "thinking", "thinking": "", "redacted": True, "thinkingSignature": "opaque"}),
        answer(4, stop="error"), result(3), result(4),
        {"role": "user", "content": "  ", "timestamp": 6},
        answer(5), {"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "hi"}],
                    "timestamp": 7}]
    path = write_session(tmp_path, conversation)
    for m, options in ANTHROPIC:
        taken.clear()
        assert lazy_request(path, m, options) == usual_request(path, m, monkeypatch, options)
        assert len(taken) == 5 and all(taken)
    m, options = ANTHROPIC[0]
    assert lazy_request(path, m, options) == typed_request_anthropic(path, m, options)


def typed_request_anthropic(path: Path, m: Model, options: StreamOptions) -> bytes:
    from pi_core.ai import Context
    from pi_core.ai.http import encode_json
    from pi_core.session import convert_to_llm

    s = SessionManager.open(path, read_only=True)
    try:
        messages = [msg for msg in s.build_session_context().messages if msg.role != "system"]
        anthropic._TURNS.clear()  # noqa: SLF001
        payload = anthropic.build_payload(m, Context(system_prompt="sys", messages=convert_to_llm(messages)), options)[0]
        return encode_json({**payload, "messages": list(payload["messages"])})
    finally:
        s.close()


def test_a_text_that_is_not_utf8_is_not_sent_as_it_is(tmp_path: Path, monkeypatch: Any) -> None:
    """A line holding bytes that are not UTF-8 has no raw view; the request is the one typing makes."""
    taken = raw_calls(monkeypatch, openai_completions_raw)
    conversation: list[dict[str, Any]] = []
    for n in range(3):
        conversation.append({"role": "assistant", "api": "openai-completions", "provider": "p", "model": "m",
                             "stopReason": "toolUse", "timestamp": 3, "content": [
                                 {"type": "text", "text": f"answer {n}"},
                                 {"type": "toolCall", "id": f"call_{n}", "name": "read", "arguments": {"n": n}}]})
        conversation.append({"role": "toolResult", "toolCallId": f"call_{n}", "toolName": "read",
                             "content": [{"type": "text", "text": f"BROKEN out {n}"}], "isError": False,
                             "timestamp": 4})
    path = write_session(tmp_path, conversation)
    path.write_bytes(path.read_bytes().replace(b"BROKEN out 1", b"\xff\xfe out 1"))
    lazy = lazy_request(path, model())
    assert lazy == typed_request(path, model())
    assert b"\xff" not in lazy
    assert taken.count(False) <= 1  # the turn with the broken text, at most
