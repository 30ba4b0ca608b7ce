"""`--session <id>` and `--fork <id>` of a session made in another project, as pi 1.6 handles them outside the
terminal: a real `pi` subprocess against the local fake server, two project directories, one agent dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, write_agent_dir
from test_cli_run import pi

QUESTION = "Fork this session into current directory? [y/N]"


def _setup(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, Path, Path, str]:
    """Project A with one session (answered "a0"); an empty project B."""
    agent, a, b = tmp_path / "agent", tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    write_agent_dir(agent, server.base_url)
    made = pi(a, agent, "--provider", "fake", "--model", "fake-model", "-p", "first in A")
    assert made.returncode == 0, made.stderr
    [source] = _sessions(agent)
    return agent, a, b, json.loads(source.read_text().splitlines()[0])["id"]


def _sessions(agent: Path, project: Path | None = None) -> list[Path]:
    files = sorted((agent / "sessions").rglob("*.jsonl"))
    return [f for f in files if project is None or json.loads(f.read_text().splitlines()[0])["cwd"] == str(project)]


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [json.dumps(m["content"]) for m in request["body"]["messages"] if m["role"] == "user"]


def test_without_a_yes_nothing_is_opened(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a0"}]) as server:
        agent, a, b, sid = _setup(tmp_path, server)
        printed = pi(b, agent, "--provider", "fake", "--model", "fake-model", "--session", sid, "-p", "hi")
        streamed = pi(b, agent, "--provider", "fake", "--model", "fake-model", "--session", sid[:13],
                      "--mode", "json", "-p", "hi", stdin="n\n")
    for result in (printed, streamed):
        assert result.returncode == 0 and result.stdout == ""
        assert f"Session found in different project: {a}\n{QUESTION} Aborted." in result.stderr
    assert len(server.requests) == 1 and _sessions(agent, b) == []


def test_yes_forks_the_session_into_this_directory_and_goes_on(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a0"}, {"text": "b1"}]) as server:
        agent, a, b, sid = _setup(tmp_path, server)
        result = pi(b, agent, "--provider", "fake", "--model", "fake-model", "--session", sid, "-p", "now in B",
                    stdin="y\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "b1\n"
    [fork] = _sessions(agent, b)
    header = json.loads(fork.read_text().splitlines()[0])
    assert header["id"] != sid and header["parentSession"] == str(_sessions(agent, a)[0])
    texts = _user_texts(server.requests[1])
    assert "first in A" in texts[0] and "now in B" in texts[-1]  # the answer line is not part of the prompt


def test_rpc_reads_the_answer_from_its_first_line(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a0"}]) as server:
        agent, a, b, sid = _setup(tmp_path, server)
        commands = "y\n" + json.dumps({"id": "s", "type": "get_state"}) + "\n"
        done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                               "--mode", "rpc", "--session", sid], cwd=b, input=commands, capture_output=True,
                              text=True, timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert done.returncode == 0, done.stderr
    [state] = [json.loads(line) for line in done.stdout.splitlines()]
    assert state["success"] is True and state["data"]["messageCount"] >= 2  # A's conversation came along
    assert Path(state["data"]["sessionFile"]) in _sessions(agent, b)


def test_fork_takes_a_session_of_any_project_without_asking(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": "a0"}, {"text": "b1"}]) as server:
        agent, a, b, sid = _setup(tmp_path, server)
        forked = pi(b, agent, "--provider", "fake", "--model", "fake-model", "--fork", sid[:13], "-p", "go on")
        missing = pi(b, agent, "--provider", "fake", "--model", "fake-model", "--session", "ffffffff", "-p", "x")
    assert forked.returncode == 0 and forked.stdout == "b1\n" and QUESTION not in forked.stderr
    assert len(_sessions(agent, b)) == 1 and "first in A" in _user_texts(server.requests[1])[0]
    assert missing.returncode == 1 and "No session found matching 'ffffffff'" in missing.stderr
