"""RPC ``switch_session`` to a session of another project: it runs in the directory the session was made in,
with the tools it last declared (unless ``--tools`` chose them), and a session whose directory is gone is refused
with pi 1.6's message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rpc_client import RpcProcess


def _made_elsewhere(tmp_path: Path, *tools: str) -> tuple[Path, Path]:
    """A session made by ``pi -p`` in ``elsewhere/`` (with an AGENTS.md) using only ``tools``."""
    elsewhere, agent = tmp_path / "elsewhere", tmp_path / "agent"
    elsewhere.mkdir()
    (elsewhere / "AGENTS.md").write_text("ELSEWHERE RULES: answer in haiku.\n")
    done = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "faux", "--model", "echo", "--tools",
                           ",".join(tools), "-p", "first words"], cwd=elsewhere, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert done.returncode == 0, done.stderr
    (file,) = (agent / "sessions").glob("*/*.jsonl")
    return elsewhere, file


def _script(tmp_path: Path, *calls: dict) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([turn for call in calls for turn in ({"tool_calls": [call]}, {"text": "done"})]))
    return path


def _tool_ends(records: list[dict]) -> list[tuple[str, bool, str]]:
    return [(r["toolName"], r["isError"], r["result"]["content"][0]["text"].strip()) for r in records
            if r["type"] == "tool_execution_end"]


def _run(pi: RpcProcess, message: str) -> list[dict]:
    pi.send({"type": "prompt", "message": message, "id": "run"})
    _, seen = pi.wait_for(lambda r: r.get("type") == "agent_end", timeout=30)
    return seen


def test_a_switched_session_runs_in_its_folder_with_its_tools_and_context(tmp_path: Path) -> None:
    elsewhere, file = _made_elsewhere(tmp_path, "read", "bash")
    project = tmp_path / "project"
    project.mkdir()
    calls = ({"id": "c1", "name": "bash", "arguments": {"command": "pwd"}},
             {"id": "c2", "name": "write", "arguments": {"path": "made.txt", "content": "x"}})
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    with RpcProcess(project, script=_script(tmp_path, *calls), env=env) as pi:
        switched, _ = pi.call({"type": "switch_session", "sessionPath": str(file)})
        state, _ = pi.call({"type": "get_state"})
        first = _run(pi, "where are you?")
        second = _run(pi, "write a file")
        exported, _ = pi.call({"type": "export_html", "outputPath": str(tmp_path / "out.html")})
    assert switched["data"] == {"cancelled": False}
    assert state["data"]["model"]["id"] == "fake-model"  # --model given: it stays, the session's faux is not restored
    assert _tool_ends(first) == [("bash", False, str(elsewhere.resolve()))]
    (name, failed, text), = _tool_ends(second)  # write is not among the session's tools (read, bash)
    assert name == "write" and failed, text
    assert not (elsewhere / "made.txt").exists() and not (project / "made.txt").exists()
    assert "ELSEWHERE RULES" in Path(exported["data"]["path"]).read_text()  # its AGENTS.md is in the prompt


def test_explicit_tools_keep_winning_after_a_switch(tmp_path: Path) -> None:
    elsewhere, file = _made_elsewhere(tmp_path, "read", "bash")
    project = tmp_path / "project"
    project.mkdir()
    call = {"id": "c1", "name": "write", "arguments": {"path": "made.txt", "content": "x"}}
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    with RpcProcess(project, "--tools", "read,bash,write", script=_script(tmp_path, call), env=env) as pi:
        pi.call({"type": "switch_session", "sessionPath": str(file)})
        ends = _tool_ends(_run(pi, "write a file"))
    assert [(name, failed) for name, failed, _ in ends] == [("write", False)]
    assert (elsewhere / "made.txt").read_text() == "x"  # written in the session's folder


def test_a_session_whose_folder_is_gone_is_refused_with_pis_message(tmp_path: Path) -> None:
    gone, file = _made_elsewhere(tmp_path, "read")
    for child in gone.iterdir():
        child.unlink()
    gone.rmdir()
    project = tmp_path / "project"
    project.mkdir()
    with RpcProcess(project, env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}) as pi:
        before, _ = pi.call({"type": "get_state"})
        refused, _ = pi.call({"type": "switch_session", "sessionPath": str(file)})
        after, _ = pi.call({"type": "get_state"})
        calls = _run(pi, "still here")
    assert refused["success"] is False
    assert refused["error"] == (f"Stored session working directory does not exist: {gone}\n"
                                f"Session file: {file}\nCurrent working directory: {project}")
    assert after["data"]["sessionFile"] == before["data"]["sessionFile"]  # nothing changed
    assert any(r["type"] == "agent_end" for r in calls)
