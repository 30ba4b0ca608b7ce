"""In JSON and RPC mode stdout carries the protocol only: plugin prints (Python or fd 1) go to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, write_agent_dir

NOISY_PLUGIN = '''
import os, sys
from pi_core import hookimpl

@hookimpl
def session_start(event, ctx):
    print("noise from session_start")

@hookimpl
def before_agent_start(event, ctx):
    print("noise from before_agent_start")
    sys.stdout.write("more noise\\n")
    os.write(1, b"raw fd noise\\n")

@hookimpl
def message_end(event, ctx):
    print("noise from message_end", flush=True)

@hookimpl
def session_shutdown(event, ctx):
    print("noise from session_shutdown")
'''


@pytest.mark.parametrize("mode", ["json", "rpc"])
def test_plugin_prints_never_reach_the_protocol_stream(tmp_path: Path, mode: str) -> None:
    plugin = tmp_path / "noisy.py"
    plugin.write_text(NOISY_PLUGIN)
    with FakeOpenAI([{"text": "the answer"}]) as server:
        write_agent_dir(tmp_path / "agent", server.base_url)
        args = ["--provider", "fake", "--model", "fake-model", "-e", str(plugin), "--no-session"]
        stdin = ""
        if mode == "json":
            args += ["--mode", "json", "-p", "go"]
        else:
            args += ["--mode", "rpc"]
            stdin = '{"id":"p","type":"prompt","message":"go"}\n'
        done = subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=tmp_path, input=stdin,
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]  # every line is JSON
    assert any(r.get("type") == "agent_end" for r in records)
    for noise in ("noise from session_start", "noise from before_agent_start", "more noise", "raw fd noise",
                  "noise from message_end", "noise from session_shutdown"):
        assert noise not in done.stdout
        assert noise in done.stderr
