"""openai-completions against pi 1.6.0's recordings: the request bodies pi sent, and — fed the same
bytes pi was fed — the same events and the same final messages pi produced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pi_core.testing import FakeProviderServer, Reply
from ai_helpers import consume, run
from pi_core.testing import openai_chunks
from pydantic import TypeAdapter

from pi_core.ai import AssistantMessage, Context, Message, ModelRegistry, SystemMessage, stream

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "pi-1.6.0"
SCENARIOS = ["a_print", "b_json_tools", "b2_all_tools", "c_rpc", "f_tool_errors", "e_compaction"]
MESSAGES = TypeAdapter(Message)


def load(scenario: str) -> dict[str, Any]:
    folder = FIXTURES / scenario
    lines = [json.loads(line) for line in (folder / "session.jsonl").read_text().splitlines()]
    parsed = [MESSAGES.validate_python(e["message"]) for e in lines if e["type"] == "message"]
    system = next(m for m in parsed if isinstance(m, SystemMessage))
    conversation = [m for m in parsed if not isinstance(m, SystemMessage)]
    requests = [json.loads(line) for line in (folder / "requests.jsonl").read_text().splitlines()]
    script = json.loads((folder / "script.json").read_text()) if (folder / "script.json").exists() else []
    return {"system": system, "conversation": conversation, "requests": requests, "script": script,
            "folder": folder}


def request_cases() -> list[tuple[str, int]]:
    cases = []
    for scenario in SCENARIOS:
        data = load(scenario)
        turns = sum(isinstance(m, AssistantMessage) for m in data["conversation"])
        # e_compaction's 5th request is the summarization call: not a turn of the conversation
        cases += [(scenario, k) for k in range(min(turns, len(data["requests"]))) if not (
            scenario == "e_compaction" and k >= 4)]
    return cases


def context_before_turn(data: dict[str, Any], k: int) -> Context:
    conversation = data["conversation"]
    turns = [i for i, m in enumerate(conversation) if isinstance(m, AssistantMessage)]
    return Context(system_prompt="<system prompt>", messages=conversation[:turns[k]],
                   tools=data["system"].tools_added)


def registry_for(data: dict[str, Any], url: str, agent_dir: Path) -> ModelRegistry:
    """The recording's own models.json, pointed at our fake server."""
    models = json.loads((data["folder"] / "agent_models.json").read_text())
    for provider in models["providers"].values():
        provider["baseUrl"] = url + ("/v1" if provider["api"] == "openai-completions" else "")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(models))
    from plugins.providers import openai_completions

    items: list[Any] = []
    openai_completions.register_providers(lambda item, replaces=None: items.append(item))
    return ModelRegistry([i for i in items if hasattr(i, "stream")], agent_dir=agent_dir)


@pytest.mark.parametrize(("scenario", "k"), request_cases())
def test_request_body_and_headers_equal_what_pi_sent(scenario: str, k: int, agent_dir: Path) -> None:
    data = load(scenario)
    recorded = data["requests"][k]

    async def scenario_run() -> Any:
        reply = Reply(chunks=[b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'])
        async with FakeProviderServer([reply]) as server:
            registry = registry_for(data, server.url, agent_dir)
            model = registry.get_model("fake", "fake-model")
            await consume(stream(model, context_before_turn(data, k), registry=registry))
            return server.requests[0]

    got = run(scenario_run())
    want = recorded["body"]
    assert got.path == recorded["path"] == "/v1/chat/completions"
    assert list(got.body) == list(want), "top-level keys (and their order) differ"
    for key in want:
        if key == "messages":
            assert len(got.body[key]) == len(want[key])
            for ours, theirs in zip(got.body[key], want[key]):
                assert ours == theirs
                assert list(ours) == list(theirs)
        else:
            assert got.body[key] == want[key], key
    for header in ("authorization", "content-type", "accept"):
        assert got.headers[header] == recorded["headers"][header]
    assert got.headers["user-agent"].startswith("pi/")


def recorded_turns(events_file: Path) -> list[dict[str, Any]]:
    """Per assistant message of a JSON-mode run: its assistantMessageEvents and its final message."""
    turns: list[dict[str, Any]] = []
    current: list[dict[str, Any]] | None = None
    for line in events_file.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") == "message_start" and event["message"].get("role") == "assistant":
            current = []
        elif event.get("type") == "message_update" and current is not None:
            current.append(event["assistantMessageEvent"])
        elif event.get("type") == "message_end" and event["message"].get("role") == "assistant":
            turns.append({"events": current, "message": event["message"]})
            current = None
    return turns


@pytest.mark.parametrize("scenario", ["b_json_tools", "b2_all_tools", "f_tool_errors"])
def test_same_bytes_give_the_events_and_messages_pi_produced(scenario: str, agent_dir: Path) -> None:
    data = load(scenario)
    expected = recorded_turns(data["folder"] / "events.jsonl")

    async def scenario_run() -> list[tuple[AssistantMessage, list[Any]]]:
        # The recorded prompt sizes came from pi's real prompt (the fixtures hold placeholders): report them.
        turns = [{**data["script"][k], "usage": {"prompt_tokens": want["message"]["usage"]["input"],
                                                 "completion_tokens": want["message"]["usage"]["output"]}}
                 for k, want in enumerate(expected)]
        replies = [lambda req, k=k: Reply(chunks=openai_chunks(turns[k], req.body, k + 1)) for k in range(len(turns))]
        results = []
        async with FakeProviderServer(replies) as server:
            registry = registry_for(data, server.url, agent_dir)
            model = registry.get_model("fake", "fake-model")
            for k in range(len(expected)):
                results.append(await consume(stream(model, context_before_turn(data, k), registry=registry), model))
        return results

    for (message, events), want in zip(run(scenario_run()), expected):
        updates = [e.to_json() for e in events if e.type not in ("start", "done", "error")]
        assert updates == want["events"]
        ours = message.to_json()
        for key in ("content", "api", "provider", "model", "usage", "stopReason", "responseId", "rawStopReason"):
            assert ours[key] == want["message"][key], key
