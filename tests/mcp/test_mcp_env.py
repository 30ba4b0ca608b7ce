"""What MCP stdio servers start with: no credentials of the user unless their config passes them, their `env`
values (`${VAR}`, `$$`, `!command`) resolved, their `cwd`."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_helpers import DEMO, model_args, run_pi, tool_names, write_mcp  # first: it puts fake_openai on the path
from fake_openai import FakeOpenAI, write_agent_dir

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


def test_stdio_cwd_and_env_values_with_variables_and_commands(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (ws / "served").mkdir()
    env = {"DEMO_VALUE": "${DEMO_TOKEN}-$$-$DEMO_PART", "DEMO_OTHER": "!printf from-a-command"}
    write_mcp(agent, {"demo": {"command": sys.executable, "args": [str(DEMO)], "cwd": "served", "env": env,
                               "exposure": "direct"},
                      "unset": {"command": sys.executable, "args": [str(DEMO)], "env": {"DEMO_VALUE": "${NOT_SET_X}"},
                                "exposure": "direct"}})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__whoami", "arguments": {}}]}, {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi", env={"DEMO_TOKEN": "tok-1", "DEMO_PART": "part"})
    assert result.returncode == 0, result.stderr
    answer = next(m for m in server.requests[1]["body"]["messages"] if m["role"] == "tool")["content"]
    # a credential-like variable reaches the server when its config names it; `cwd` is relative to the session's
    assert "DEMO_VALUE=tok-1-$-part DEMO_OTHER=from-a-command" in answer
    assert answer.endswith(f"cwd={(ws / 'served').resolve()}")
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__unset__")]
    log = (agent / "mcp.log").read_text()
    assert ('[unset] error failed to connect: MCP server "unset" env "DEMO_VALUE": environment variable NOT_SET_X '
            "is not set") in log
