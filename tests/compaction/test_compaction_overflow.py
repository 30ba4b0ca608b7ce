"""Overflow recovery: the provider refuses a request as too long → hide the failed answer, compact, retry once.

Every overflow body of the shared error corpus (tests/fixtures/ai/overflow_corpus.json) is served by a local
HTTP server through the built-in API implementation its provider speaks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compaction_helpers import entries, new_session, run, settings

from pi_core import Model
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_error, faux_text
from pi_core.runtime.compaction import RECOVERY_FAILED
from pi_core.testing import FakeProviderServer, Reply, json_reply

AI_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ai"
CORPUS = json.loads((AI_FIXTURES / "overflow_corpus.json").read_text())["cases"]
APIS = {  # style -> (api, base-url suffix, a successful streamed answer in that API's format)
    "anthropic": ("anthropic-messages", "", "anthropic/text.sse"),
    "openai": ("openai-completions", "/v1", "openai_completions/text.sse"),
    "google": ("google-generative-ai", "/v1beta", "google/text.sse"),
}
RESPONSES = ("openai-responses", "/v1", "openai_responses/text.sse")
CASES = [(c, APIS[c["style"]]) for c in CORPUS if c["kind"] == "overflow"] + \
    [(c, RESPONSES) for c in CORPUS if c["kind"] == "overflow" and c["provider"] == "openai"]
TOO_LONG = '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}'


@pytest.mark.parametrize(("case", "api"), CASES, ids=[f"{c['provider']}-{c['status']}-{a[0]}" for c, a in CASES])
def test_overflow_from_a_providers_real_error_body_compacts_and_retries_once(
        tmp_path: Path, case: dict[str, Any], api: tuple[str, str, str]) -> None:
    settings(tmp_path / "agent", keepRecentTokens=1)
    name, suffix, answer = api
    ok = Reply(chunks=[(AI_FIXTURES / answer).read_bytes()])
    replies = [ok, ok, json_reply(case["status"], case["body"]), ok, ok]

    async def scenario() -> Any:
        async with FakeProviderServer(replies) as server:
            model = Model(id="test-model", api=name, provider=case["provider"], base_url=server.url + suffix,
                          context_window=200_000, max_tokens=4096)
            session = await new_session(tmp_path, model, api_key="test-key")
            await session.prompt("first")
            await session.prompt("second")
            events: list[Any] = []
            session.subscribe(events.append)
            await session.prompt("third, too long")
            return session, events, server

    session, events, server = run(scenario())
    assert len(server.requests) == 5  # failed turn, summary, one retry — no more
    assert session.messages[-1].role == "assistant" and session.messages[-1].stop_reason == "stop"
    records = entries(session)
    edits = [e for e in records if e["type"] == "context_edit"]
    assert len(edits) == 1 and edits[0]["replacement"] is None
    failed = next(e for e in records if e["id"] == edits[0]["targetId"])
    assert failed["message"]["stopReason"] == "error"
    kinds = [e["type"] for e in records]
    assert kinds.index("context_edit") < kinds.index("compaction")
    start = next(e for e in events if e.type == "compaction_start")
    end = next(e for e in events if e.type == "compaction_end")
    assert start.reason == "overflow" and end.will_retry is True and end.result is not None
    assert "third, too long" in json.dumps(server.requests[3].body)  # the oversized request was summarised
    retried = json.dumps(server.requests[4].body)
    assert "<summary>" in retried and (not case["body"] or case["body"][:40] not in retried)
    assert [e.will_retry for e in events if e.type == "agent_end"] == [True, False]


def test_a_second_overflow_in_the_same_prompt_is_not_retried_again(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=1)
    faux = FauxProvider("anthropic", "claude-test", seed=1)
    faux.enqueue("one", faux_error(TOO_LONG, status=400), "summary", faux_error(TOO_LONG, status=400))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("second")
        return session, events

    session, events = run(scenario())
    assert len(faux.requests) == 4
    assert session.messages[-1].stop_reason == "error"
    ends = [e for e in events if e.type == "compaction_end"]
    assert [e.will_retry for e in ends] == [True, False] and ends[-1].error_message == RECOVERY_FAILED
    assert len([e for e in entries(session) if e["type"] == "compaction"]) == 1


def test_an_answer_cut_short_for_lack_of_room_is_recovered(tmp_path: Path) -> None:
    """pi#7020: a ``length`` stop below the model's output limit means the context was full; compact and
    retry instead of returning a truncated answer."""
    settings(tmp_path / "agent", keepRecentTokens=1)
    faux = FauxProvider(seed=1, max_tokens=4096)
    faux.enqueue("one", FauxTurn([faux_text("The answer is")], stop_reason="length", usage={"input": 10, "output": 3}),
                 "summary", "The answer is 42.")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        return session

    session = run(scenario())
    assert len(faux.requests) == 4 and session.messages[-1].content[0].text == "The answer is 42."
    records = entries(session)
    [edit] = [e for e in records if e["type"] == "context_edit"]
    assert next(e for e in records if e["id"] == edit["targetId"])["message"]["stopReason"] == "length"


def test_a_successful_answer_over_the_window_compacts_without_retrying(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3, reserveTokens=1000)
    faux = FauxProvider(seed=1, context_window=5000)
    faux.enqueue("one", FauxTurn([faux_text("fine")], usage={"input": 6000, "output": 2}), "summary")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("second")
        return session, events

    session, events = run(scenario())
    assert len(faux.requests) == 3
    end = next(e for e in events if e.type == "compaction_end")
    assert end.reason == "overflow" and end.will_retry is False and end.result is not None
    assert not [e for e in entries(session) if e["type"] == "context_edit"]  # the good answer stays


def test_an_overflow_is_left_alone_when_auto_compaction_is_off(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=1, enabled=False)
    faux = FauxProvider("anthropic", "claude-test", seed=1)
    faux.enqueue("one", faux_error(TOO_LONG, status=400))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        return session

    session = run(scenario())
    assert len(faux.requests) == 2 and session.messages[-1].stop_reason == "error"
    assert not [e for e in entries(session) if e["type"] in ("compaction", "context_edit")]
