"""The ``mcp_servers`` section stays in the system prompt as the branch's first prompt had it (the provider's
cache of the conversation keeps working); a changed section reaches the model in a message, as pi appends it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from mcp_helpers import run_pi, stdio_server, write_mcp
from fake_openai import FakeOpenAI
from test_mcp_command import write_models

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

CHANGED = "The MCP servers changed. This replaces the <mcp_servers> section of the system prompt:"
GONE = "The MCP servers changed: no server's tools are reached through codemode or tool_search any more."


def system_prompt(request: dict[str, Any]) -> str:
    first = request["body"]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def user_texts(request: dict[str, Any]) -> list[str]:
    texts = []
    for message in request["body"]["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


EXTENSION = """
import sys

from pi_core import Command, hookimpl


@hookimpl
def register_commands(register):
    def add_docs(args, ctx):
        ctx.register_mcp_server("docs", {"command": sys.executable, "args": [%r], "description": "Docs server."})

    register(Command("add-docs", add_docs, "register the docs server"))
"""


def changes(request: dict[str, Any]) -> list[str]:
    return [t for t in user_texts(request) if "MCP servers changed" in t]


def mcp(pi: RpcProcess, command: str) -> list[str]:
    _, records = pi.call({"type": "prompt", "message": f"/mcp {command}"}, timeout=60)
    return [line for r in records if r.get("type") == "extension_ui_request" and r.get("method") == "notify"
            for line in r["message"].splitlines()]


def test_a_changed_section_is_appended_and_the_system_prompt_stays_the_same(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(description="A demo server.")})
    extension = tmp_path / "docs_server.py"
    extension.write_text(EXTENSION % stdio_server()["args"][0])
    turns = [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}, {"text": "five"}]
    with FakeOpenAI(turns) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), extensions=(extension,), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.prompt("first")
            pi.prompt("unchanged")
            pi.call({"type": "prompt", "message": "/add-docs"})
            deadline = time.monotonic() + 60  # the plugin's server is added in the background
            while time.monotonic() < deadline and not any(line.startswith("docs:") for line in mcp(pi, "status")):
                time.sleep(0.2)
            pi.prompt("after adding")
            mcp(pi, "disable docs")
            mcp(pi, "disable demo")
            pi.prompt("after disabling")
            mcp(pi, "enable demo")
        resumed = run_pi(ws, agent, "--provider", "srv", "--model", "m", "-c", "-p", "resumed")
    assert resumed.returncode == 0, resumed.stderr
    first, unchanged, added, disabled, again = server.requests
    frozen = system_prompt(first)
    assert "<mcp_servers>\nMCP servers whose tools are not declared to you." in frozen
    assert "- mcp__demo (codemode): A demo server.\n</mcp_servers>" in frozen
    # every later request starts with the very same system prompt, the resumed one too
    assert [system_prompt(r) for r in (unchanged, added, disabled, again)] == [frozen] * 4
    assert changes(first) == changes(unchanged) == []
    (both,) = changes(added)
    assert both.startswith(CHANGED + "\n<mcp_servers>\n")
    assert "- mcp__demo (codemode): A demo server.\n- mcp__docs (codemode): Docs server.\n</mcp_servers>" in both
    assert user_texts(added).index(both) == user_texts(added).index("after adding") + 1
    assert changes(disabled) == [both, GONE + " Disregard the <mcp_servers> section of the system prompt."]
    # the resumed session (demo enabled again, docs not registered) is told the section it has now
    assert changes(again)[:2] == changes(disabled) and len(changes(again)) == 3
    assert changes(again)[2].endswith("<mcp_servers>\n" + frozen.split("<mcp_servers>\n", 1)[1])
    (session,) = agent.rglob("*.jsonl")
    records = [json.loads(line) for line in session.read_text().splitlines()]
    recorded = [r["data"] for r in records if r.get("type") == "custom" and r.get("customType") == "mcp_servers"]
    assert len(recorded) == 1 and "(codemode)" in recorded[0]["section"]  # written once, by the first prompt
    told = [r for r in records if r.get("type") == "custom_message" and r.get("customType") == "mcp_servers"]
    assert [r["display"] for r in told] == [False, False, False]
