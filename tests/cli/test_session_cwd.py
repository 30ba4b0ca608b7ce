"""A session opened from another directory runs in the directory it was made in (its stored cwd), as pi
runs it: the bash tool's working directory and the system prompt's cwd are the session's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
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


def _terminal(cwd: Path, agent: Path, *args: str) -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
    from ptyterm import PtyApp

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1", "PI_CODING_AGENT_DIR": str(agent)})
    return PtyApp([sys.executable, "-m", "pi_core", "--provider", "faux", "--model", "echo", *args], env=env,
                  cwd=cwd, columns=200)


@pytest.mark.timeout(180)
def test_in_the_terminal_a_gone_folder_is_asked_about_cancel_continue_or_fork(tmp_path: Path) -> None:
    gone, here, agent = tmp_path / "gone", tmp_path / "here", tmp_path / "agent"
    gone.mkdir()
    here.mkdir()
    assert pi(gone, agent, "--provider", "faux", "--model", "echo", "-p", "made there").returncode == 0
    (file,) = sessions(agent)
    gone.rmdir()
    question = f"Session cwd does not exist: {gone}"
    for choice, expected_files in (("Cancel", 1), ("Continue", 1), ("Fork", 2)):
        app = _terminal(here, agent, "--session", str(file))
        try:
            app.wait_for(question, 90)
            app.send(choice)
            app.wait_for(lambda: sum(row.lstrip("› ").startswith(("Continue in", "Fork into", "Cancel"))
                                     for row in app.display()) == 1)
            app.send("\r")
            if choice != "Cancel":
                app.wait_for(lambda: str(here) in "\n".join(app.display()[-3:]), 60)  # the footer's folder
                app.wait_for("made there")  # the conversation is shown
                app.send("\x04")
            assert app.wait_exit(30) == 0
        finally:
            app.close()
        assert len(sessions(agent)) == expected_files, choice
    fork = next(p for p in sessions(agent) if p != file)
    assert json.loads(fork.read_text().splitlines()[0])["cwd"] == str(here)
    assert json.loads(file.read_text().splitlines()[0])["cwd"] == str(gone)  # the original keeps its folder
