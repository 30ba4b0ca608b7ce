"""Against pi 1.6.0's own compaction (recording e_compaction): what is cut, summarised, stored and sent after.

Fixtures in tests/fixtures/compaction/e_compaction: pi's session file, the summarization request and the
first request after compaction (requests.json), the RPC compact events (rpc.json) and the fake model's script.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from pi_core import SessionManager, create_agent_session
from pi_core.ai.faux import FauxProvider, faux_tool_call
from pi_core.modes.event_json import event_to_json
from pi_core.session import convert_to_llm
from pi_core.session.compaction import (
    CompactionSettings,
    estimate_tokens,
    prepare_compaction,
    serialize_conversation,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compaction" / "e_compaction"
LINES = (FIXTURES / "session.jsonl").read_text().splitlines()
REQUESTS = json.loads((FIXTURES / "requests.json").read_text())
RPC = json.loads((FIXTURES / "rpc.json").read_text())
PI_COMPACTION = json.loads(LINES[12])
SECTIONS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked",
            "## Key Decisions", "## Next Steps", "## Critical Context"]


def request_text(body: dict[str, Any]) -> str:
    return body["messages"][1]["content"][0]["text"]


def pi_conversation() -> str:
    return request_text(REQUESTS["summary_request"]).split("<conversation>\n", 1)[1].split("\n</conversation>")[0]


def test_preparing_pis_session_cuts_where_pi_cut() -> None:
    path = [json.loads(line) for line in LINES[1:12]]  # up to the answer before pi's compaction
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=10))
    assert prep is not None and not prep.is_split_turn
    assert prep.first_kept_entry_id == PI_COMPACTION["firstKeptEntryId"]
    assert prep.tokens_before == PI_COMPACTION["tokensBefore"]
    assert prep.file_ops.details() == PI_COMPACTION["details"]
    assert serialize_conversation(prep.messages_to_summarize) == pi_conversation()


def test_pis_compacted_file_projects_to_what_pi_sent_next(tmp_path: Path) -> None:
    copy = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "session.jsonl", copy)
    manager = SessionManager.open(copy, read_only=True)
    leaf = LINES[13]  # the user message after the compaction: pi's request 6 ends with it
    context = manager.build_session_context(json.loads(leaf)["id"])
    llm = convert_to_llm(context.messages)
    sent = REQUESTS["after_compaction"]["messages"][1:]  # after the system prompt
    assert [m.role for m in llm] == ["system", *[m["role"] for m in sent]]
    summary_text = llm[1].content[0].text
    pi_text = sent[0]["content"][0]["text"]
    ours_inner = summary_text.split("<summary>\n", 1)[1]
    assert ours_inner == pi_text.split("<summary>\n", 1)[1]  # same summary, same closing tag
    assert summary_text.split("<summary>")[0].endswith(":\n\n") and pi_text.split("<summary>")[0].endswith(":\n\n")
    assert [m.content[0].text if isinstance(m.content, list) else m.content for m in llm[2:]] == \
        [m["content"][0]["text"] if isinstance(m["content"], list) else m["content"] for m in sent[1:]]


def test_replaying_the_scenario_stores_and_reports_what_pi_did(tmp_path: Path) -> None:
    script = json.loads((FIXTURES / "script.json").read_text())
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    (tmp_path / "data.txt").write_text("alpha\nbeta\ngamma\n")
    faux = FauxProvider(seed=3)
    faux.enqueue(script[0]["text"], [faux_tool_call("read", {"path": "data.txt"}, id="call_read_data")],
                 script[2]["text"], script[3]["text"], script[4]["text"], script[5]["text"])
    events: list[Any] = []

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], tools=["read"],
                                             agent_dir=tmp_path / "agent")
        for prompt in ("Remember: the project is called Zephyr.", "Read data.txt", "The deadline is Friday."):
            await session.prompt(prompt)
        session.subscribe(events.append)
        result = await session.compact("Focus on project facts")
        await session.prompt("What is the project and the deadline?")
        await session.close()
        return session, result

    session, result = asyncio.run(asyncio.wait_for(scenario(), 60))
    records = [json.loads(line) for line in session.session.session_file.read_text().splitlines()]
    [ours] = [r for r in records if r["type"] == "compaction"]
    assert list(ours) == list(PI_COMPACTION)  # same keys in the same order
    assert ours["summary"] == PI_COMPACTION["summary"] and ours["details"] == PI_COMPACTION["details"]
    kept = next(r for r in records if r.get("id") == ours["firstKeptEntryId"])
    assert kept["message"]["content"][0]["text"] == "The deadline is Friday."
    assert ours["fromHook"] is False and set(ours["systemMessage"]) >= {"role", "sections", "toolsAdded"}
    # the summarization request: pi's structure, our words
    request = faux.requests[4]
    assert not request.context.tools and request.context.system_prompt
    text = request.context.messages[0].content[0].text
    assert text.startswith(f"<conversation>\n{pi_conversation()}\n</conversation>\n\n")
    assert text.endswith("\n\nAdditional focus: Focus on project facts")
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    # the events, shaped as pi's
    ours_json = [event_to_json(e) for e in events if e.type.startswith("compaction_")]
    theirs = RPC["events"]
    assert [list(e) for e in ours_json] == [list(e) for e in theirs]
    assert list(ours_json[1]["result"]) == list(theirs[1]["result"])
    assert ours_json[1]["result"]["firstKeptEntryId"] == ours["firstKeptEntryId"]
    last_answer = next(r for r in reversed(records[:records.index(ours)]) if r["type"] == "message")
    assert ours["tokensBefore"] == last_answer["message"]["usage"]["totalTokens"] == result.tokens_before
    reopened = SessionManager.open(session.session.session_file, read_only=True)
    projected = reopened.build_session_context(ours["id"]).raw_messages
    assert result.estimated_tokens_after == sum(estimate_tokens(m) for m in projected) > 0
    # what the model saw next: the summary, then the kept turn, then the new question
    after = faux.requests[5].context.messages
    assert [m.role for m in after] == ["user", "user", "assistant", "user"]
    assert after[0].content[0].text.endswith(f"<summary>\n{PI_COMPACTION['summary']}\n</summary>")
    assert after[1].content[0].text == "The deadline is Friday."
