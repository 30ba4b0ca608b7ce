"""A plugin tool whose plain ``def execute`` blocks (a sleep, a stuck read) cannot freeze pi: it runs off
the event loop, so an RPC ``abort`` and SIGTERM still end the call, and pi keeps answering."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fake_openai import FakeOpenAI, write_agent_dir

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

PLUGIN = '''
import os
import time
from pathlib import Path

from pi_core import Tool, ToolResult, hookimpl


def nap(params, ctx):
    Path(os.environ["NAP_MARK"]).write_text(str(os.getpid()))
    time.sleep(300)
    return ToolResult.text("woke up")


@hookimpl
def register_tools(register):
    register(Tool(name="nap", description="Sleep for a long time.", parameters={"type": "object", "properties": {}},
                  execute=nap))


@hookimpl
def session_shutdown(event, ctx):
    Path(os.environ["NAP_MARK"] + ".shutdown").write_text(event.reason)
'''

TURNS = [{"tool_calls": [{"id": "n1", "name": "nap", "arguments": {}}]}, {"text": "after the nap"}]
MODEL = ["--provider", "fake", "--model", "fake-model", "--no-session"]


def wait_for(predicate, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_an_rpc_abort_ends_a_blocking_def_tool_and_pi_keeps_answering(tmp_path: Path) -> None:
    plugin = tmp_path / "nap_plugin.py"
    plugin.write_text(PLUGIN)
    mark = tmp_path / "napping"
    with FakeOpenAI(TURNS) as server:
        write_agent_dir(tmp_path / "agent", server.base_url)
        env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "NAP_MARK": str(mark)}
        with RpcProcess(tmp_path, *MODEL, "-e", str(plugin), env=env) as pi:
            response, seen = pi.call({"type": "prompt", "message": "take a nap"}, timeout=60)
            assert response["success"] is True, response
            wait_for(mark.exists)
            state, more = pi.call({"type": "get_state"}, timeout=30)  # the loop is free while the tool sleeps
            assert state["success"] is True and state["data"]["isStreaming"] is True
            aborted, after = pi.call({"type": "abort"}, timeout=60)
            assert aborted["success"] is True
            records = pi.settle(seen + more + after, timeout=60)
    end = next(r for r in records if r.get("type") == "tool_execution_end")
    assert end["isError"] is True and "aborted" in json.dumps(end["result"]).lower()
    assert len(server.requests) == 1  # no second request after the abort


def test_sigterm_ends_print_mode_during_a_blocking_def_tool(tmp_path: Path) -> None:
    plugin = tmp_path / "nap_plugin.py"
    plugin.write_text(PLUGIN)
    mark = tmp_path / "napping"
    with FakeOpenAI(TURNS) as server:
        write_agent_dir(tmp_path / "agent", server.base_url)
        proc = subprocess.Popen([sys.executable, "-m", "pi_core", *MODEL, "-e", str(plugin), "-p", "take a nap"],
                                cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True,
                                env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
                                     "NAP_MARK": str(mark)})
        try:
            wait_for(mark.exists)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)  # the tool's sleep has 300 s to go
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert proc.returncode == 143, err.decode()
    assert b"Traceback" not in err and b"after the nap" not in out
    assert Path(str(mark) + ".shutdown").read_text() == "quit"
