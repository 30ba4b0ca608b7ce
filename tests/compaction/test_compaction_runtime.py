"""Compaction and tree navigation through a real session: triggers, hooks, overflow recovery, reopening."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ai"))
from ai_fake_server import FakeServer, Reply, json_reply  # noqa: E402

from pi_core import Cancel, CompactionOverride, Model, TreeOverride, create_agent_session, hookimpl  # noqa: E402
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_error, faux_text, faux_tool_call  # noqa: E402
from pi_core.runtime.compaction import CompactionError  # noqa: E402

AI_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ai"
CORPUS = json.loads((AI_FIXTURES / "overflow_corpus.json").read_text())["cases"]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def settings(agent: Path, **compaction: Any) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"compaction": compaction, "retry": {"enabled": False}}))


def entries(session: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.session.session_file.read_text().splitlines()][1:]


async def new_session(tmp_path: Path, model: Any, *plugins: Any, **kwargs: Any) -> Any:
    return await create_agent_session(tmp_path, model=model, plugins=list(plugins), agent_dir=tmp_path / "agent",
                                      tools=kwargs.pop("tools", []), **kwargs)


def user_texts(context: Any) -> list[str]:
    out = []
    for m in context.messages:
        if m.role == "user":
            out.append(m.content if isinstance(m.content, str) else "".join(b.text for b in m.content))
    return out


# -- manual compaction ---------------------------------------------------------------------------


def test_manual_compaction_keeps_the_recent_turn_and_summarises_the_rest(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=10)
    faux = FauxProvider(seed=1)
    faux.enqueue("Noted: Zephyr.", [faux_tool_call("read", {"path": "data.txt"})], "It has three words.",
                 "Understood, Friday.", "SUMMARY ONE", "Zephyr, Friday.")
    (tmp_path / "data.txt").write_text("alpha beta gamma\n")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, tools=["read"])
        for prompt in ("The project is Zephyr.", "Read data.txt", "The deadline is Friday."):
            await session.prompt(prompt)
        events: list[Any] = []
        session.subscribe(events.append)
        result = await session.compact("Focus on project facts")
        await session.prompt("What is the project and the deadline?")
        return session, result, events

    session, result, events = run(scenario())
    summary_request = faux.requests[4].context
    text = summary_request.messages[0].content[0].text
    assert text.startswith("<conversation>\n[User]: The project is Zephyr.") and "[Assistant tool calls]: read(path=\"data.txt\")" in text
    assert "The deadline is Friday." not in text  # kept, not summarised
    assert text.endswith("Additional focus: Focus on project facts") and not summary_request.tools
    assert result.summary == "SUMMARY ONE\n\n<read-files>\ndata.txt\n</read-files>"
    assert result.details == {"readFiles": ["data.txt"], "modifiedFiles": []}
    assert [e.type for e in events[:2]] == ["compaction_start", "compaction_end"] and events[1].reason == "manual"
    after = faux.requests[5].context
    texts = user_texts(after)
    assert texts[0].count("<summary>\nSUMMARY ONE") == 1 and texts[1:] == ["The deadline is Friday.",
                                                                          "What is the project and the deadline?"]
    [compaction] = [e for e in entries(session) if e["type"] == "compaction"]
    assert compaction["firstKeptEntryId"] == result.first_kept_entry_id and compaction["fromHook"] is False


def test_compaction_reopened_in_a_new_process_gives_the_same_context(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=5)
    faux = FauxProvider(seed=2)
    faux.enqueue("a1", "a2", "a3", "the summary")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        for prompt in ("first question", "second question", "third question"):
            await session.prompt(prompt)
        await session.compact()
        await session.close()
        return session

    session = run(scenario())
    ours = [m.to_json() if hasattr(m, "to_json") else m for m in session.messages]
    code = ("import json,sys; from pi_core import SessionManager; from pi_core.session import convert_to_llm;"
            "m=SessionManager.open(sys.argv[1], read_only=True);"
            "print(json.dumps([x.to_json() for x in m.build_session_context().messages]))")
    other = subprocess.run([sys.executable, "-c", code, str(session.session.session_file)], capture_output=True,
                           text=True, check=True)
    assert json.loads(other.stdout) == ours
    assert any(m.get("role") == "compactionSummary" for m in ours)


def test_nothing_to_compact_and_already_compacted(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=100000)
    faux = FauxProvider(seed=1)
    faux.enqueue("short")

    async def scenario() -> None:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("hi")
        with pytest.raises(CompactionError, match="Nothing to compact"):
            await session.compact()
        before = session.session.session_file.read_text()
        assert session.session.session_file.read_text() == before

    run(scenario())


def test_a_failed_summary_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two", faux_error("500: summarizer down", status=500))

    async def scenario() -> tuple[str, str, list[Any]]:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        before = session.session.session_file.read_text()
        events: list[Any] = []
        session.subscribe(events.append)
        with pytest.raises(CompactionError, match="summarizer down"):
            await session.compact()
        return before, session.session.session_file.read_text(), events

    before, after, events = run(scenario())
    assert before == after
    assert events[-1].type == "compaction_end" and "summarizer down" in events[-1].error_message


# -- plugins ---------------------------------------------------------------------------------------


class OwnSummary:
    __name__ = "own-summary"

    def __init__(self, decision: Any) -> None:
        self.decision, self.seen = decision, []

    @hookimpl
    def session_before_compact(self, event: Any) -> Any:
        self.seen.append((event.reason, event.preparation.first_kept_entry_id))
        return self.decision

    @hookimpl
    def session_compact(self, event: Any) -> None:
        self.seen.append(("compacted", event.from_plugin))


def test_a_plugin_supplies_the_summary(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two")
    plugin = OwnSummary(CompactionOverride("written by a plugin", details={"mine": True}))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("first")
        await session.prompt("second")
        return session, await session.compact()

    session, result = run(scenario())
    assert result.summary == "written by a plugin" and result.from_plugin
    assert len(faux.requests) == 2  # the model was not asked
    [entry] = [e for e in entries(session) if e["type"] == "compaction"]
    assert entry["fromHook"] is True and entry["details"] == {"mine": True}
    assert plugin.seen[-1] == ("compacted", True)


def test_a_plugin_cancels(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, OwnSummary(Cancel("not now")))
        await session.prompt("first")
        await session.prompt("second")
        return session, await session.compact()

    session, result = run(scenario())
    assert result is None and not [e for e in entries(session) if e["type"] == "compaction"]


# -- automatic triggers --------------------------------------------------------------------------


def test_threshold_compaction_after_a_turn(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=5, reserveTokens=1000)
    faux = FauxProvider(seed=1, context_window=3000)
    faux.enqueue(FauxTurn([faux_text("small")], usage={"input": 100, "output": 5}),
                 FauxTurn([faux_text("big")], usage={"input": 2500, "output": 5}), "threshold summary")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("the first question, long enough to count for a few tokens")
        assert not any(e.type == "compaction_start" for e in events)
        await session.prompt("the second question, also long enough to count for tokens")
        return session, events

    session, events = run(scenario())
    start = next(e for e in events if e.type == "compaction_start")
    assert start.reason == "threshold"
    assert [e.type for e in events[-3:]] == ["compaction_start", "compaction_end", "agent_settled"]
    assert len([e for e in entries(session) if e["type"] == "compaction"]) == 1


OVERFLOW_CASES = [
    ("anthropic-messages", "anthropic", "", "anthropic", "anthropic/text.sse"),
    ("openai-completions", "openai", "/v1", "openai", "openai_completions/text.sse"),
    ("openai-responses", "openai", "/v1", "openai", "openai_responses/text.sse"),
    ("google-generative-ai", "google", "/v1beta", "google", "google/text.sse"),
]


@pytest.mark.parametrize(("api", "provider", "suffix", "corpus_provider", "answer"), OVERFLOW_CASES)
def test_overflow_from_a_providers_real_error_body_compacts_and_retries_once(
        tmp_path: Path, api: str, provider: str, suffix: str, corpus_provider: str, answer: str) -> None:
    settings(tmp_path / "agent", keepRecentTokens=1)
    case = next(c for c in CORPUS if c["provider"] == corpus_provider and c["kind"] == "overflow")
    ok = Reply(chunks=[(AI_FIXTURES / answer).read_bytes()])
    replies = [ok, ok, json_reply(case["status"], case["body"]), ok, ok]

    async def scenario() -> Any:
        async with FakeServer(replies) as server:
            model = Model(id="test-model", api=api, provider=provider, base_url=server.url + suffix,
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
    assert [e["type"] for e in records].index("context_edit") < [e["type"] for e in records].index("compaction")
    start = next(e for e in events if e.type == "compaction_start")
    end = next(e for e in events if e.type == "compaction_end")
    assert start.reason == "overflow" and end.will_retry is True
    retried = json.dumps(server.requests[4].body)
    assert "<summary>" in retried and case["body"][:30] not in retried
    assert next(e for e in events if e.type == "agent_end").will_retry is True


def test_a_second_overflow_in_the_same_prompt_is_not_retried_again(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=1)
    faux = FauxProvider("anthropic", "claude-test", seed=1)
    too_long = '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}'
    faux.enqueue("one", faux_error(too_long, status=400), "summary", faux_error(too_long, status=400))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        return session

    session = run(scenario())
    assert len(faux.requests) == 4
    assert session.messages[-1].stop_reason == "error"


# -- tree navigation -----------------------------------------------------------------------------


def test_branch_summary_is_attached_at_the_target_and_the_abandoned_branch_is_gone(tmp_path: Path) -> None:
    faux = FauxProvider(seed=1)
    faux.enqueue("answer A", "tried approach B and it failed", "BRANCH SUMMARY", "continuing from A")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("question A")
        target = session.session.get_leaf_id()
        await session.prompt("try approach B")
        (tmp_path / "on-disk.txt").write_text("kept")
        result = await session.navigate_tree(target, summarize=True, label="back to A")
        await session.prompt("now try C")
        return session, target, result

    session, target, result = run(scenario())
    assert result == {"cancelled": False}
    records = entries(session)
    summary = next(e for e in records if e["type"] == "branch_summary")
    assert summary["parentId"] == target and "BRANCH SUMMARY" in summary["summary"]
    label = next(e for e in records if e["type"] == "label")
    assert label["targetId"] == target and label["label"] == "back to A"
    last_request = faux.requests[-1].context
    texts = user_texts(last_request)
    assert texts[0] == "question A" and "BRANCH SUMMARY" in texts[1] and texts[-1] == "now try C"
    assert "try approach B" not in json.dumps([t for t in texts if "<summary>" not in t])
    assert (tmp_path / "on-disk.txt").read_text() == "kept"  # navigation never touches files
    summary_request = faux.requests[2].context.messages[0].content[0].text
    assert "[User]: try approach B" in summary_request and "question A" not in summary_request


def test_navigation_without_summary_and_plugin_decisions(tmp_path: Path) -> None:
    class Tree:
        __name__ = "tree"

        def __init__(self) -> None:
            self.decisions = [Cancel("stay"), TreeOverride(summary="plugin summary"), None]
            self.moves: list[Any] = []

        @hookimpl
        def session_before_tree(self, event: Any) -> Any:
            return self.decisions.pop(0)

        @hookimpl
        def session_tree(self, event: Any) -> None:
            self.moves.append((event.new_leaf_id, event.from_plugin))

    plugin = Tree()
    faux = FauxProvider(seed=1)
    faux.enqueue("a", "b", "c")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("one")
        target = session.session.get_leaf_id()
        await session.prompt("two")
        leaf = session.session.get_leaf_id()
        assert await session.navigate_tree(target, summarize=True) == {"cancelled": True}
        assert session.session.get_leaf_id() == leaf
        await session.navigate_tree(target, summarize=True)
        await session.navigate_tree(target)
        await session.prompt("three")
        return session, target

    session, target = run(scenario())
    assert len(faux.requests) == 3  # no summary request: the plugin wrote one, then none was asked for
    assert plugin.moves[0][1] is True and plugin.moves[1] == (target, False)
    assert user_texts(faux.requests[-1].context) == ["one", "three"]
