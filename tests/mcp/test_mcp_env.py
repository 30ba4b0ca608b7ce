"""MCP stdio servers start without the user's credentials unless their config passes them explicitly."""

from __future__ import annotations

import sys
from pathlib import Path

from fake_openai import FakeOpenAI, write_agent_dir
from mcp_helpers import DEMO, model_args, run_pi, write_mcp

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-leak-1", "MY_SERVICE_TOKEN": "tok-leak-2", "DB_PASSWORD": "pw-leak-3"}


def test_a_stdio_server_gets_the_scrubbed_environment_plus_its_explicit_env(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    dump = tmp_path / "server-env"
    script = f'env > "{dump}"; exec "{sys.executable}" "{DEMO}"'
    write_mcp(agent, {"demo": {"command": "sh", "args": ["-c", script], "exposure": "direct",
                               "env": {"SERVICE_API_KEY": "given-on-purpose"}}})
    with FakeOpenAI([{"text": "done"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi", env={**SECRETS, "PLAIN_SETTING": "visible"})
    assert result.returncode == 0, result.stderr
    seen = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    assert not set(SECRETS) & set(seen), seen.keys()
    assert seen["SERVICE_API_KEY"] == "given-on-purpose"  # named in the config: passed
    assert seen["PLAIN_SETTING"] == "visible" and "PATH" in seen
