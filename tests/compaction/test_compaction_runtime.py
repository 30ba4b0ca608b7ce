"""Compaction through a real session (faux provider, real files): manual, plugins, failures, threshold triggers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from compaction_helpers import entries, new_session, run, settings, user_texts

from pi_core import Cancel, CompactionOverride, hookimpl
from pi_core.ai.faux import FauxProvider, FauxTurn, faux_error, faux_text, faux_tool_call
from pi_core.runtime.compaction import CompactionError

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
    summary_request = faux.requests[4]
    text = summary_request.context.messages[0].content[0].text
    assert text.startswith("<conversation>\n[User]: The project is Zephyr.")
    assert '[Assistant tool calls]: read(path="data.txt")' in text and "[Tool result]: alpha beta gamma" in text
    assert "The deadline is Friday." not in text  # kept, not summarised
    assert text.endswith("Additional focus: Focus on project facts") and not summary_request.context.tools
    assert summary_request.options.cache_retention == "none"
    assert result.summary == "SUMMARY ONE\n\n<read-files>\ndata.txt\n</read-files>"
    assert result.details == {"readFiles": ["data.txt"], "modifiedFiles": []}
    assert [e.type for e in events[:2]] == ["compaction_start", "compaction_end"] and events[1].reason == "manual"
    assert events[1].result is result and not events[1].aborted and not events[1].will_retry
    texts = user_texts(faux.requests[5].context)
    assert texts[0].count("<summary>\nSUMMARY ONE") == 1
    assert texts[1:] == ["The deadline is Friday.", "What is the project and the deadline?"]
    [compaction] = [e for e in entries(session) if e["type"] == "compaction"]
    assert compaction["firstKeptEntryId"] == result.first_kept_entry_id and compaction["fromHook"] is False
    assert compaction["id"] == result.entry_id and compaction["usage"] == result.usage


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
    code = ("import json,sys; from pi_core import SessionManager;"
            "m=SessionManager.open(sys.argv[1], read_only=True);"
            "print(json.dumps([x.to_json() for x in m.build_session_context().messages]))")
    other = subprocess.run([sys.executable, "-c", code, str(session.session.session_file)], capture_output=True,
                           text=True, check=True, timeout=60)
    assert json.loads(other.stdout) == ours
    assert [m.get("role") for m in ours] == ["system", "compactionSummary", "user", "assistant"]


def test_nothing_to_compact_and_already_compacted(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=5)
    faux = FauxProvider(seed=1)
    faux.enqueue("short", "ok", "S")

    async def scenario() -> None:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("hi")
        before = session.session.session_file.read_text()
        events: list[Any] = []
        session.subscribe(events.append)
        with pytest.raises(CompactionError, match=r"Nothing to compact \(session too small\)"):
            await session.compact()
        assert session.session.session_file.read_text() == before
        assert events[-1].type == "compaction_end" and events[-1].error_message.startswith("Compaction failed: ")
        await session.prompt("a second question to have something to compact")
        await session.compact()
        with pytest.raises(CompactionError, match="Already compacted"):
            await session.compact()

    run(scenario())


def test_a_failed_summary_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two", faux_error("400 invalid request: summarizer refuses", status=400))

    async def scenario() -> tuple[str, str, list[Any], Any]:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        before = session.session.session_file.read_text()
        messages = list(session.messages)
        events: list[Any] = []
        session.subscribe(events.append)
        with pytest.raises(CompactionError, match="summarizer refuses"):
            await session.compact()
        assert list(session.messages) == messages and not session.is_compacting
        return before, session.session.session_file.read_text(), events, session

    before, after, events, _ = run(scenario())
    assert before == after
    assert events[-1].type == "compaction_end" and events[-1].result is None and not events[-1].aborted
    assert events[-1].error_message == "Compaction failed: Summarization failed: 400 invalid request: summarizer refuses"


def test_a_transient_summary_failure_is_retried(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 3},
                                                     "retry": {"enabled": True, "baseDelayMs": 1}}))
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two", faux_error("503 overloaded, try again", status=503), "SUMMARY AFTER RETRY")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        return await session.compact()

    result = run(scenario())
    assert result.summary == "SUMMARY AFTER RETRY" and len(faux.requests) == 4


def test_aborting_a_compaction_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two", FauxTurn([faux_text("a slow summary")], delay=5))

    async def scenario() -> tuple[str, str, list[Any]]:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        await session.prompt("second")
        before = session.session.session_file.read_text()
        events: list[Any] = []
        session.subscribe(events.append)
        task = asyncio.ensure_future(session.compact())
        while not session.is_compacting or len(faux.requests) < 3:
            await asyncio.sleep(0.01)
        await session.abort()
        with pytest.raises(CompactionError) as failure:
            await task
        assert failure.value.aborted and not session.is_compacting
        return before, session.session.session_file.read_text(), events

    before, after, events = run(scenario())
    assert before == after
    assert events[-1].type == "compaction_end" and events[-1].aborted and events[-1].error_message is None


# -- plugins ---------------------------------------------------------------------------------------


class OwnSummary:
    __name__ = "own-summary"

    def __init__(self, decision: Any) -> None:
        self.decision, self.seen = decision, []

    @hookimpl
    def session_before_compact(self, event: Any) -> Any:
        self.seen.append((event.reason, event.preparation.first_kept_entry_id, event.custom_instructions))
        return self.decision

    @hookimpl
    def session_compact(self, event: Any) -> None:
        self.seen.append(("compacted", event.from_plugin, event.compaction_entry["summary"]))


def test_a_plugin_supplies_the_summary(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two")
    plugin = OwnSummary(CompactionOverride("written by a plugin", details={"mine": True}, tokens_before=4242))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("first")
        await session.prompt("second")
        return session, await session.compact("my focus")

    session, result = run(scenario())
    assert result.summary == "written by a plugin" and result.from_plugin and result.tokens_before == 4242
    assert len(faux.requests) == 2  # the model was not asked
    [entry] = [e for e in entries(session) if e["type"] == "compaction"]
    assert entry["fromHook"] is True and entry["details"] == {"mine": True} and entry["tokensBefore"] == 4242
    assert plugin.seen[0][0] == "manual" and plugin.seen[0][2] == "my focus"
    assert plugin.seen[-1] == ("compacted", True, "written by a plugin")
    assert "written by a plugin" in json.dumps([m.to_json() for m in session.messages if hasattr(m, "to_json")])


def test_a_plugin_cancels(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=3)
    faux = FauxProvider(seed=1)
    faux.enqueue("one", "two")
    plugin = OwnSummary(Cancel("not now"))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, plugin)
        await session.prompt("first")
        await session.prompt("second")
        before = session.session.session_file.read_text()
        events: list[Any] = []
        session.subscribe(events.append)
        result = await session.compact()
        assert session.session.session_file.read_text() == before
        return session, result, events

    session, result, events = run(scenario())
    assert result is None and not [e for e in entries(session) if e["type"] == "compaction"]
    assert events[-1].type == "compaction_end" and events[-1].aborted and events[-1].result is None
    assert len(faux.requests) == 2 and not any(s[0] == "compacted" for s in plugin.seen)


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
    assert not events[-2].will_retry
    assert len([e for e in entries(session) if e["type"] == "compaction"]) == 1


def test_threshold_counts_after_a_failed_turn(tmp_path: Path) -> None:
    """pi#1796: a turn that failed (not an overflow) is judged by the last good usage plus estimates."""
    settings(tmp_path / "agent", keepRecentTokens=5, reserveTokens=1000)
    faux = FauxProvider(seed=1, context_window=3000)
    faux.enqueue(FauxTurn([faux_text("answer")], usage={"input": 1900, "output": 5}),
                 faux_error("500 internal server error", status=500, after=["p" * 400]),
                 "summary after the failure", "the failed turn's beginning")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        await session.prompt("first")
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("second")  # 1905 + 2: under 2,000 when sent; the failed partial answer adds 100
        return session, events

    session, events = run(scenario())
    kinds = [e.type for e in events]
    assert kinds.index("agent_end") < kinds.index("compaction_start")  # after the run, not before its request
    assert next(e for e in events if e.type == "compaction_start").reason == "threshold"
    assert len([e for e in entries(session) if e["type"] == "compaction"]) == 1
    assert faux.requests[2].context.messages[0].content[0].text.startswith("<conversation>")


def test_a_long_run_is_compacted_before_the_request_that_would_overflow(tmp_path: Path) -> None:
    """Inside one run (a tool loop) the threshold is checked before each request; the run then goes on."""
    settings(tmp_path / "agent", keepRecentTokens=100, reserveTokens=1000)
    (tmp_path / "big.txt").write_text("z" * 6000)  # ~1,500 tokens per read
    faux = FauxProvider(seed=1, context_window=4000)
    faux.enqueue([faux_tool_call("read", {"path": "big.txt"})], [faux_tool_call("read", {"path": "big.txt"})],
                 "MID-RUN SUMMARY", "done reading")

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux, tools=["read"])
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("read big.txt twice")
        return session, events

    session, events = run(scenario())
    kinds = [e.type for e in events]
    assert kinds.count("compaction_start") == 1 and kinds.count("agent_end") == 1
    assert kinds.index("compaction_end") < kinds.index("agent_end")  # during the run, not after it
    assert next(e for e in events if e.type == "compaction_start").reason == "threshold"
    # the run's own turn is split: its beginning is summarised, its latest call and result are kept
    summary_request = faux.requests[2].context.messages[0].content[0].text
    assert summary_request.startswith("# Conversation\n[User]: read big.txt twice")
    compaction = next(e for e in entries(session) if e["type"] == "compaction")
    assert compaction["summary"] == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n" \
        "MID-RUN SUMMARY\n\n<read-files>\nbig.txt\n</read-files>"
    final_request = faux.requests[3].context
    assert "MID-RUN SUMMARY" in json.dumps(final_request.model_dump(mode="json"))
    assert session.messages[-1].role == "assistant" and session.messages[-1].content[0].text == "done reading"
    assert json.dumps(final_request.model_dump(mode="json")).count("z" * 6000) == 1  # the first read is gone


def test_auto_compaction_can_be_switched_off(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=5, reserveTokens=1000)
    faux = FauxProvider(seed=1, context_window=3000)
    faux.enqueue(FauxTurn([faux_text("big")], usage={"input": 2500, "output": 5}))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        session.set_auto_compaction(False)
        await session.prompt("a question")
        return session

    session = run(scenario())
    assert not [e for e in entries(session) if e["type"] == "compaction"] and len(faux.requests) == 1


def test_a_history_larger_than_the_summarizer_window_is_summarised_in_pieces(tmp_path: Path) -> None:
    settings(tmp_path / "agent", keepRecentTokens=50, reserveTokens=1000)
    faux = FauxProvider(seed=1, context_window=8000)
    faux.enqueue(*[f"ok {n}" for n in range(6)])
    faux.responder = lambda context, options: "PIECE SUMMARY " + str(len(faux.requests))

    async def scenario() -> Any:
        session = await new_session(tmp_path, faux.model, faux)
        session.set_auto_compaction(False)
        for n in range(6):
            await session.prompt(f"question {n} " + "q" * 3000)
        return await session.compact()

    result = run(scenario())
    pieces = [r.context.messages[0].content[0].text for r in faux.requests[6:]]
    assert len(pieces) >= 2
    assert "<previous-summary>" not in pieces[0]
    for n, piece in enumerate(pieces[1:], start=1):
        assert f"<previous-summary>\nPIECE SUMMARY {6 + n}\n</previous-summary>" in piece
    assert all(len(p) < 8000 * 4 for p in pieces)
    assert result.summary == f"PIECE SUMMARY {6 + len(pieces)}"
    # the usage of every piece is added up
    assert result.usage["output"] == sum(-(-len(f"PIECE SUMMARY {7 + n}") // 4) for n in range(len(pieces)))


def test_model_overrides_set_the_threshold_for_their_model_only(tmp_path: Path) -> None:
    """``compaction.modelOverrides["provider/id"]`` replaces reserveTokens for that model alone (pi 1.6)."""

    def compacted(overrides: dict[str, Any]) -> bool:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        settings(folder / "agent", keepRecentTokens=5, reserveTokens=1000, modelOverrides=overrides)
        faux = FauxProvider(seed=1, context_window=3000)
        faux.enqueue(FauxTurn([faux_text("small")], usage={"input": 100, "output": 5}),
                     FauxTurn([faux_text("big")], usage={"input": 2500, "output": 5}), "override summary")

        async def scenario() -> list[Any]:
            session = await new_session(folder, faux.model, faux)
            events: list[Any] = []
            await session.prompt("the first question, long enough to count for a few tokens")
            session.subscribe(events.append)
            await session.prompt("the second question, also long enough to count for tokens")
            return events

        return any(e.type == "compaction_start" for e in run(scenario()))

    faux_key = f"{FauxProvider().model.provider}/{FauxProvider().model.id}"
    assert compacted({})  # 2505 > 3000 - 1000
    assert not compacted({faux_key: {"reserveTokens": 100}})  # 2505 < 3000 - 100
    assert compacted({"other/model": {"reserveTokens": 100}})
    assert compacted({faux_key: {"keepRecentTokens": 5}})  # reserveTokens falls back on its own


def test_model_overrides_merge_per_field_across_the_two_files(tmp_path: Path) -> None:
    from pi_core.runtime.settings import Settings

    agent, project = tmp_path / "agent", tmp_path / "repo"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"modelOverrides": {
        "p/big": {"reserveTokens": 400000}, "p/other": {"keepRecentTokens": 7}}}}))
    (project / ".pi" / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 9000, "modelOverrides": {
        "p/other": {"reserveTokens": 11}, "p/bad": {"reserveTokens": -1}}}}))
    loaded = Settings.load(project, agent, trusted=True)
    assert loaded.compaction.for_model("p", "big") == (400000, 20000)  # global model value beats project fallback
    assert loaded.compaction.for_model("p", "other") == (11, 7)
    assert loaded.compaction.for_model("p", "bad") == (9000, 20000)  # a negative value is reported and ignored
    assert any("modelOverrides.p/bad.reserveTokens" in issue.message for issue in loaded.errors)
