"""Session files written by pi 1.6.0 and 0.73.1 (tests/fixtures/session/conformance, copied from the
recordings): they load, their projection is what pi sent to the model, and writing them gives pi's bytes.

``*.stringified`` next to each session file is that file with every record passed through node's
``JSON.parse``/``JSON.stringify`` — the exact bytes pi's writer produces for those records (the recorded
files themselves went through Python once, which wrote some floats as ``1.8e-05``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_core import SessionManager, convert_to_llm
from pi_core.ai.types import AssistantMessage, SystemMessage, TextContent, ToolCall, ToolResultMessage
from pi_core.session.jsonfmt import dumps

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "session" / "conformance"
SCENARIOS = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())
IDS = [f"{p.parent.name}/{p.name}" for p in SCENARIOS]


def session_file(scenario: Path) -> Path:
    return next((scenario / "sessions").glob("*/*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(params=SCENARIOS, ids=IDS)
def scenario(request: pytest.FixtureRequest) -> Path:
    return request.param


@pytest.fixture
def copy(scenario: Path, tmp_path: Path) -> Path:
    target = tmp_path / "sessions" / session_file(scenario).name
    target.parent.mkdir(parents=True)
    shutil.copyfile(session_file(scenario), target)
    return target


def test_every_scenario_has_a_session_and_requests() -> None:
    assert len(SCENARIOS) == 11
    for scenario in SCENARIOS:
        assert session_file(scenario).exists() and (scenario / "requests.jsonl").exists()


def test_file_name_is_header_timestamp_and_id(scenario: Path) -> None:
    path = session_file(scenario)
    header = records(path)[0]
    expected = header["timestamp"].replace(":", "-").replace(".", "-") + "_" + header["id"] + ".jsonl"
    assert path.name == expected and path.parent.name == "--home-user-project--"


def test_loads_without_diagnostics_and_keeps_every_entry(copy: Path) -> None:
    original = records(copy)
    with SessionManager.open(copy) as manager:
        assert manager.diagnostics == []
        assert manager.session_id == original[0]["id"]
        assert manager.get_header().to_json() == original[0]
        assert manager.raw_entries() == original[1:]
        assert manager.get_leaf_id() == original[-1]["id"]  # leaf = last entry, as pi restores it
        assert [e.to_json() for e in manager.get_entries()] == original[1:]


def test_opening_for_writing_does_not_change_a_v3_file(copy: Path) -> None:
    before = copy.read_bytes()
    with SessionManager.open(copy):
        pass
    assert copy.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# projection == what pi sent


def wire_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """The OpenAI-compatible request messages pi makes of model messages (pi-1.6-observed §3.1),
    after pi's per-request transform drops failed/aborted assistant turns (sessions.md §4.6)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            out.append({"role": "system"})
        elif isinstance(m, AssistantMessage):
            if m.stop_reason in ("error", "aborted"):
                continue
            out.append(wire_assistant(m))
        elif isinstance(m, ToolResultMessage):
            text = "".join(b.text for b in m.content if isinstance(b, TextContent))
            out.append({"role": "tool", "content": text, "tool_call_id": m.tool_call_id})
        else:
            content = m.content
            blocks = [TextContent(text=content)] if isinstance(content, str) else content
            out.append({"role": "user", "content": [b.to_json() for b in blocks]})
    return out


def wire_assistant(m: AssistantMessage) -> dict[str, Any]:
    text = "".join(b.text for b in m.content if isinstance(b, TextContent))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [b for b in m.content if isinstance(b, ToolCall)]
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": dumps(c.arguments)}} for c in calls]
    return message


def comparable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Request messages minus the system prompt (its text is a placeholder in the recordings) and with
    the summary wrapper's sentence cut off (our wording differs; the ``<summary>`` layout must not)."""
    out = []
    for m in messages:
        if m["role"] == "system":
            continue
        m = json.loads(json.dumps(m))
        for block in m.get("content") or []:
            if isinstance(block, dict) and "<summary>" in block.get("text", ""):
                block["text"] = block["text"][block["text"].index("<summary>"):]
        out.append(m)
    return out


def chat_requests(scenario: Path) -> list[list[dict[str, Any]]]:
    """Message lists of the conversation requests (summarization requests carry no tools)."""
    bodies = [json.loads(line)["body"] for line in (scenario / "requests.jsonl").read_text().splitlines()]
    return [b["messages"] for b in bodies if "tools" in b]


def test_projection_matches_every_request_pi_sent(scenario: Path, copy: Path) -> None:
    requests = chat_requests(scenario)
    with SessionManager.open(copy, read_only=True) as manager:
        answers = [e for e in manager.raw_entries()
                   if e["type"] == "message" and e["message"]["role"] == "assistant"]
        assert len(answers) == len(requests)  # every assistant message answered one request
        for answer, sent in zip(answers, requests, strict=True):
            context = manager.build_session_context(leaf_id=answer["parentId"])
            ours = wire_messages(convert_to_llm(context.messages))
            assert comparable(ours) == comparable(sent)
            assert [m["role"] for m in ours[:1]] == (["system"] if "1.6" in str(scenario) else ["user"])


def test_compaction_summary_reaches_the_model_in_pi_layout(tmp_path: Path) -> None:
    scenario = FIXTURES / "pi-1.6.0" / "e_compaction"
    summary = next(e for e in records(session_file(scenario)) if e["type"] == "compaction")["summary"]
    sent = chat_requests(scenario)[-1][1]["content"][0]["text"]
    manager = SessionManager.open(session_file(scenario), read_only=True)
    llm = convert_to_llm(manager.build_session_context().messages)
    ours = llm[1].content[0].text
    assert sent.endswith(f":\n\n<summary>\n{summary}\n</summary>")
    assert ours.endswith(f":\n\n<summary>\n{summary}\n</summary>")
    assert ours.count("\n") == sent.count("\n")


def test_settings_come_from_the_path(copy: Path) -> None:
    with SessionManager.open(copy, read_only=True) as manager:
        context = manager.build_session_context()
        assert context.thinking_level == "off"
        assert context.model is not None and context.model.to_json() == {
            "provider": "fake", "modelId": "fake-model"}


# ---------------------------------------------------------------------------------------------
# writing


def test_written_records_are_the_bytes_pi_writes(scenario: Path, copy: Path, tmp_path: Path) -> None:
    expected = session_file(scenario).with_suffix(".stringified").read_text().splitlines()
    forked = SessionManager.fork_from(copy, "/home/user/project", tmp_path / "out")
    written = forked.session_file.read_text().splitlines()
    forked.close()
    assert written[1:] == expected[1:]  # every entry, byte for byte (the header is new)
    assert [json.loads(x) for x in written[1:]] == records(copy)[1:]  # and it reads back equal
    header = json.loads(written[0])
    assert list(header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert header["parentSession"] == str(copy)


def test_rebuilding_through_the_api_writes_pi_lines(scenario: Path, tmp_path: Path) -> None:
    source = records(session_file(scenario))
    expected = session_file(scenario).with_suffix(".stringified").read_text().splitlines()
    manager = SessionManager.create("/home/user/project", tmp_path)
    ids: dict[str, str] = {}
    for record in source[1:]:
        ids[append_like(manager, record, ids)] = record["id"]
    written = manager.session_file.read_text().splitlines()
    manager.close()
    for ours, theirs, record in zip(written[1:], expected[1:], source[1:], strict=True):
        assert normalise(ours, ids, record) == theirs
    assert len(written) == len(expected)


def append_like(manager: SessionManager, record: dict[str, Any], ids: dict[str, str]) -> str:
    """Append through the public API what ``record`` holds; returns the new entry's id."""
    kind = record["type"]
    if kind == "model_change":
        return manager.append_model_change(record["provider"], record["modelId"])
    if kind == "thinking_level_change":
        return manager.append_thinking_level_change(record["thinkingLevel"])
    if kind == "compaction":
        first = {v: k for k, v in ids.items()}[record["firstKeptEntryId"]]
        return manager.append_compaction(record["summary"], first, record["tokensBefore"],
                                         record.get("details"), record.get("fromHook"),
                                         record.get("usage"))
    assert kind == "message"
    message = record["message"]
    if message["role"] == "assistant":
        return manager.append_message(AssistantMessage.model_validate(message))
    return manager.append_message(message)


def normalise(line: str, ids: dict[str, str], record: dict[str, Any]) -> str:
    """Our line with our ids and times replaced by the recorded ones."""
    ours = json.loads(line)
    for mine, theirs in ids.items():
        line = line.replace(f'"{mine}"', f'"{theirs}"')
    line = line.replace(f'"timestamp":"{ours["timestamp"]}"', f'"timestamp":"{record["timestamp"]}"')
    if "systemMessage" in ours:
        line = line.replace(f'"timestamp":{ours["systemMessage"]["timestamp"]}}}',
                            f'"timestamp":{record["systemMessage"]["timestamp"]}}}')
    return line
