"""A session opened from another directory runs in the directory it was made in (its stored cwd), as pi
runs it: the bash tool's working directory and the system prompt's cwd are the session's."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_run import pi, sessions


def test_a_session_opened_elsewhere_runs_in_its_own_directory(tmp_path: Path) -> None:
    ws, other, agent = tmp_path / "ws", tmp_path / "other", tmp_path / "agent"
    ws.mkdir()
    other.mkdir()
    faux = ("--provider", "faux", "--model", "echo")
    assert pi(ws, agent, *faux, "-p", "start here").returncode == 0
    (file,) = sessions(agent)
    call = json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]})
    resumed = pi(other, agent, *faux, "--session", str(file), "--mode", "json", "-p", call)
    assert resumed.returncode == 0, resumed.stderr
    ends = [json.loads(line) for line in resumed.stdout.splitlines() if '"tool_execution_end"' in line]
    assert [e["result"]["content"][0]["text"].strip() for e in ends] == [str(ws.resolve())]
    assert len(sessions(agent)) == 1  # the same file went on, none was made for the other directory
