"""A conversation continued on another model: what that model is sent of the first one's answers, as pi 1.6
sends it (a real `pi` subprocess against the local OpenAI-compatible fake server)."""

from __future__ import annotations

import json
from pathlib import Path

from fake_openai import FakeOpenAI
from test_cli_run import pi
from test_model_choice import configure


def test_thinking_of_another_model_is_not_replayed_to_the_next_one(tmp_path: Path) -> None:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    turns = [{"thinking": "SECRET PLAN of m1", "text": "visible answer"}, {"text": "m2 here"},
             {"text": "m1 again"}]
    with FakeOpenAI(turns) as server:
        configure(agent, server.base_url)
        for args in (("--model", "m1", "-p", "first"), ("-c", "--model", "m2", "-p", "second")):
            result = pi(ws, agent, *args)
            assert result.returncode == 0, result.stderr
    to_m2 = server.requests[1]["body"]
    assert to_m2["model"] == "m2"
    [answer] = [m for m in to_m2["messages"] if m["role"] == "assistant"]
    assert "visible answer" in json.dumps(answer)
    assert "SECRET PLAN" not in json.dumps(to_m2)  # dropped, as pi does: not turned into visible text
