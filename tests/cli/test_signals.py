"""SIGTERM and SIGHUP abort a run like Ctrl-C in -p, JSON and RPC mode: no process left, shutdown hooks run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, write_agent_dir

SHUTDOWN_PLUGIN = '''
import os
from pathlib import Path
from pi_core import hookimpl

@hookimpl
def session_shutdown(event, ctx):
    Path(os.environ["SHUTDOWN_MARK"]).write_text(event.reason)
'''


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def wait_for(predicate, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.05)


@pytest.mark.parametrize(("mode", "sig", "code"), [
    ("print", signal.SIGTERM, 143), ("json", signal.SIGTERM, 143), ("print", signal.SIGHUP, 129),
    ("json", signal.SIGHUP, 129), ("rpc", signal.SIGTERM, 143), ("rpc", signal.SIGHUP, 129)])
def test_a_signal_during_a_bash_call_kills_its_process_tree_and_shuts_down(
        tmp_path: Path, mode: str, sig: signal.Signals, code: int) -> None:
    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; (sleep 300; echo late) & echo $! >> {pids}; sleep 300"
    turns = [{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": command}}]},
             {"text": "should never be asked"}]
    plugin = tmp_path / "shutdown_plugin.py"
    plugin.write_text(SHUTDOWN_PLUGIN)
    mark = tmp_path / "shutdown"
    with FakeOpenAI(turns) as server:
        write_agent_dir(tmp_path / "agent", server.base_url)
        args = ["--provider", "fake", "--model", "fake-model", "-e", str(plugin), "--no-session"]
        args += {"print": ["-p", "go"], "json": ["--mode", "json", "-p", "go"], "rpc": ["--mode", "rpc"]}[mode]
        stdin = subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL
        proc = subprocess.Popen([sys.executable, "-m", "pi_core", *args], cwd=tmp_path, stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
                                     "SHUTDOWN_MARK": str(mark)})
        try:
            if mode == "rpc":
                proc.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
            wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
            started = [int(p) for p in pids.read_text().split()]
            assert all(alive(p) for p in started)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert proc.returncode == code, err.decode()
    wait_for(lambda: not any(alive(p) for p in started), timeout=10)
    assert mark.read_text() == "quit"
    assert b"Traceback" not in err
    assert b"should never be asked" not in out and len(server.requests) == 1
    if mode != "print":
        records = [json.loads(line) for line in out.splitlines()]
        end = next(r for r in records if r["type"] == "tool_execution_end")
        assert end["isError"] is True and "aborted" in json.dumps(end["result"])
