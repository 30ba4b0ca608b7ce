"""The requests of pi 1.6's recorded RPC session (conformance scenario ``c_rpc``), replayed against our
``pi --mode rpc``: every response must have pi's shape (command, success, id echoed, data keys), in pi's
order relative to the events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rpc_client import FIXTURES, Record, RpcProcess, transcript_exchanges

C_RPC = FIXTURES / "c_rpc"
BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


def replay(pi: RpcProcess, line: bytes) -> tuple[Record, list[Record]]:
    """Send one recorded line the way the recording client did; returns (response, records seen)."""
    try:
        request = json.loads(line)
    except ValueError:
        pi.send_raw(line + b"\n")
        return pi.wait_for(lambda r: r.get("type") == "response" and r.get("command") == "parse")
    if request.get("message") == "Write a long answer":  # the slow stream the client aborts
        pi.send(request)
        response, seen = pi.response(request["id"])
        _delta, more = pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        return response, seen + more
    response, seen = pi.call(request)
    if request["type"] == "abort" or (request["type"] == "prompt" and response["success"]):
        seen = pi.settle(seen)
    return response, seen


def data_keys(response: Record) -> Any:
    data = response.get("data")
    return sorted(data) if isinstance(data, dict) else data


def test_c_rpc_requests_get_responses_of_pis_shape(tmp_path: Path) -> None:
    lines = (C_RPC / "rpc1.stdin").read_bytes().splitlines()
    recorded = transcript_exchanges(C_RPC / "rpc_transcript.jsonl")
    assert len(lines) == len(recorded) == 14
    ours: list[tuple[Record, list[Record]]] = []
    with RpcProcess(tmp_path, script=C_RPC / "script.json") as pi:
        for line in lines:
            ours.append(replay(pi, line))
        pi.close_stdin()
        assert pi.wait() == 0
    for (request, theirs), (mine, _seen) in zip(recorded, ours):
        label = request.get("type", "<malformed>")
        assert (mine.get("command"), mine["success"]) == (theirs.get("command"), theirs["success"]), label
        assert ("id" in mine) == ("id" in theirs) and mine.get("id") == theirs.get("id"), label
        assert list(mine)[:4] == list(theirs)[:4], label  # key order: id, type, command, success
        assert data_keys(mine) == data_keys(theirs), label
    by_id = {r.get("id"): r for r, _ in ours}
    assert by_id["req-6"]["error"] == BUSY
    assert by_id["req-13"]["error"] == "Unknown command: no_such_command"
    assert by_id[None]["error"].startswith("Failed to parse command: ")
    assert by_id["req-12"]["data"] == {"text": "After the abort I am answering normally again."}


def test_c_rpc_state_model_and_stats_carry_pis_fields(tmp_path: Path) -> None:
    recorded = {r.get("id"): resp for r, resp in transcript_exchanges(C_RPC / "rpc_transcript.jsonl")}
    with RpcProcess(tmp_path, script=C_RPC / "script.json") as pi:
        pi.prompt("Hello")
        state, _ = pi.call({"type": "get_state"})
        messages, _ = pi.call({"type": "get_messages"})
        stats, _ = pi.call({"type": "get_session_stats"})
    assert list(state["data"]) == list(recorded["req-2"]["data"])  # same fields in the same order
    assert set(state["data"]["model"]) == set(recorded["req-2"]["data"]["model"])
    assert state["data"]["messageCount"] == 3 and state["data"]["isStreaming"] is False
    assert [m["role"] for m in messages["data"]["messages"]] == ["system", "user", "assistant"]
    assert list(stats["data"]) == list(recorded["req-10"]["data"])
    assert set(stats["data"]["contextUsage"]) == {"tokens", "contextWindow", "percent"}
    assert stats["data"]["userMessages"] == 1 and stats["data"]["assistantMessages"] == 1


def test_prompt_response_precedes_the_run_and_abort_response_follows_settled(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, script=C_RPC / "script.json") as pi:
        started = pi.prompt("Hello")
        assert started[0]["type"] == "response" and started[1]["type"] == "agent_start"
        assert [r["type"] for r in started[-2:]] == ["agent_end", "agent_settled"]
        pi.prompt("Run echo rpc-ok")
        pi.send({"type": "prompt", "message": "Write a long answer", "id": "slow"})
        pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        _response, seen = pi.call({"type": "abort", "id": "stop"})
    kinds = [r["type"] for r in seen]
    assert kinds[-1] == "response" and "agent_settled" in kinds
    ends = [r for r in seen if r["type"] == "message_end"]
    assert ends[-1]["message"]["stopReason"] == "aborted"
    assert kinds.index("agent_end") < kinds.index("agent_settled") < len(kinds) - 1
    assert next(r for r in seen if r["type"] == "agent_settled")["aborted"] is True
