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


BLOCKED = {
    # RPC `bash` with a `def user_bash` that never returns (user_bash has no time limit by default)
    "user_bash": ("def user_bash(event, ctx):\n    ENTER()\n    threading.Event().wait()", None),
    # no limit at all, and a `def` / an `async def` before_agent_start that never returns
    "def": ("def before_agent_start(event, ctx):\n    ENTER()\n    threading.Event().wait()", 0),
    "async def": ("async def before_agent_start(event, ctx):\n    ENTER()\n    await asyncio.Event().wait()", 0),
    # an `async def` that holds the event loop itself (time.sleep in a coroutine): the deadline ends it
    "loop held": ("async def before_agent_start(event, ctx):\n    ENTER()\n    time.sleep(3600)", 0),
}
BLOCKING_PLUGIN = """
import asyncio, os, threading, time
from pathlib import Path
from pi_core import hookimpl


def ENTER():
    Path(os.environ["ENTERED"]).touch()


@hookimpl
"""


# user_bash is RPC's bash command (and the terminal's !command): it is blocked in RPC mode only
@pytest.mark.parametrize(("blocked", "mode"), [(b, m) for b in BLOCKED for m in ("print", "json", "rpc")
                                               if b != "user_bash" or m == "rpc"])
def test_a_signal_ends_pi_while_a_plugin_handler_never_returns(tmp_path: Path, blocked: str, mode: str) -> None:
    """SIGTERM used to be ignored (twice, 10 s apart) while a `def` handler without a limit blocked the
    event loop; an `async def` one kept the run waiting for ever. pi exits 143, shutdown hooks run where
    the loop is free, and a run held even by the loop is ended by the deadline."""
    from pi_core.modes.signals import SHUTDOWN_DEADLINE_S

    body, limit = BLOCKED[blocked]
    plugin = tmp_path / "blocks.py"
    plugin.write_text(BLOCKING_PLUGIN + body + "\n" + SHUTDOWN_PLUGIN)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({} if limit is None else {"plugins": {"hookTimeoutMs": limit}}))
    args = ["--provider", "faux", "--model", "echo", "-e", str(plugin), "--no-session"]
    args += {"print": ["-p", "go"], "json": ["--mode", "json", "-p", "go"], "rpc": ["--mode", "rpc"]}[mode]
    mark = tmp_path / "shutdown"
    proc = subprocess.Popen([sys.executable, "-m", "pi_core", *args], cwd=tmp_path,
                            stdin=subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent), "SHUTDOWN_MARK": str(mark),
                                 "ENTERED": str(tmp_path / "entered")})
    try:
        if mode == "rpc":
            command = {"type": "bash", "command": "echo hi"} if blocked == "user_bash" else \
                {"type": "prompt", "message": "go"}
            proc.stdin.write((json.dumps({"id": "c", **command}) + "\n").encode())  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        wait_for(lambda: (tmp_path / "entered").exists())
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=SHUTDOWN_DEADLINE_S + 50)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    assert proc.returncode == 143, err.decode()
    assert b"Traceback" not in err
    if blocked != "loop held":  # the loop is free: a clean shutdown, well before the deadline
        assert mark.read_text() == "quit"
        assert time.monotonic() - started < SHUTDOWN_DEADLINE_S
    else:
        assert b"still running" in err


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_in_the_terminal_during_a_bash_call(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    """The terminal interface (the real pi in a pty): the bash tool's tree is killed, session_shutdown
    runs, pi exits with the signal's code."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
    from ptyterm import PtyApp

    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; (sleep 300; echo late) & echo $! >> {pids}; sleep 300"
    plugin = tmp_path / "shutdown_plugin.py"
    plugin.write_text(SHUTDOWN_PLUGIN)
    mark = tmp_path / "shutdown"
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm",
           "PI_CODING_AGENT_DIR": str(agent), "PI_NO_OSC52": "1", "SHUTDOWN_MARK": str(mark)}
    app = PtyApp([sys.executable, "-m", "pi_core", "-e", str(plugin), "--provider", "faux", "--model", "echo",
                  "--no-session"], env=env, cwd=tmp_path, stderr=tmp_path / "stderr.txt", columns=200)
    try:
        app.wait_for("/help for commands", 60)
        app.settle(0.5)  # the editor is up
        app.type(json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}))
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
        started = [int(p) for p in pids.read_text().split()]
        os.kill(app.proc.pid, sig)
        assert app.wait_exit(60) == code
    finally:
        app.close()
    wait_for(lambda: not any(alive(p) for p in started), timeout=10)
    assert mark.read_text() == "quit"
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
