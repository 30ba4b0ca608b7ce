"""``/mcp`` through the RPC mode, whose ``ctx.ui`` dialogs are the client's: the menu and the word forms."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp_helpers import stdio_server, tool_names, write_mcp
from fake_openai import FakeOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402


def write_models(agent: Path, base_url: str) -> None:
    """A provider ``srv`` at the fake server (``fake`` belongs to the RPC tests' scripted model)."""
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"srv": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m", "name": "M", "contextWindow": 128000, "maxTokens": 4096}]}}}))


def dialog(method: str):
    return lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method


def answer(pi: RpcProcess, choose: Any) -> dict[str, Any]:
    """Answer the next select dialog with the option ``choose(options)`` picks (``None`` cancels)."""
    request, _ = pi.wait_for(dialog("select"))
    value = choose(request["options"])
    pi.send({"type": "extension_ui_response", "id": request["id"], **({"value": value} if value else {"cancelled": True})})
    return request


def starting(prefix: str):
    return lambda options: next(o for o in options if o.startswith(prefix))


def notices(records: list[dict[str, Any]]) -> list[str]:
    return [r["message"] for r in records if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]


def test_the_menu_changes_a_servers_exposure_and_saves_it(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    config = write_mcp(agent, {"demo": stdio_server(), "other": stdio_server(enabled=False)})
    with FakeOpenAI([{"text": "one"}]) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.call({"type": "prompt", "message": "/mcp status"})  # waits until the servers connected
            pi.send({"type": "prompt", "message": "/mcp", "id": "menu"})
            servers = answer(pi, starting("demo"))
            assert [o.split(" — ")[0] for o in servers["options"]] == ["demo", "other"]
            assert servers["options"][1] == "other — disabled · codemode · global"
            actions = answer(pi, starting("Exposure: codemode"))
            assert [a.split(" (")[0] for a in actions["options"]] == ["Tools", "Reconnect", "Exposure: codemode", "Disable"]
            exposures = answer(pi, lambda options: next(o for o in options if "direct" in o))
            assert [o.strip().split(" — ")[0].lstrip("✓ ") for o in exposures["options"]] == [
                "codemode", "deferred", "direct", "hidden"]
            notice, _ = pi.wait_for(dialog("notify"))
            answer(pi, lambda options: None)  # back from the server
            answer(pi, lambda options: None)  # close the menu
            pi.response("menu")
            pi.prompt("hello")
    assert notice["message"].startswith("demo: exposure direct · connected · 13 tools")
    assert json.loads(config.read_text())["mcpServers"]["demo"]["exposure"] == "direct"
    assert "mcp__demo__echo" in tool_names(server.requests[0])  # declared from the next request on


def test_the_word_forms_disable_enable_reconnect_and_explain_mistakes(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    config = write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "one"}, {"text": "two"}]) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            seen = []
            for command in ("/mcp disable demo", "/mcp status", "/mcp exposure demo sideways", "/mcp tools nope"):
                response, records = pi.call({"type": "prompt", "message": command})
                seen += records
            disabled = json.loads(config.read_text())["mcpServers"]["demo"]
            pi.prompt("while disabled")
            for command in ("/mcp enable demo", "/mcp reconnect demo", "/mcp tools demo"):
                response, records = pi.call({"type": "prompt", "message": command})
                seen += records
            pi.prompt("enabled again")
    messages = notices(seen)
    assert messages[0].startswith("demo: disabled · disabled")
    assert messages[1] == "demo: disabled (direct, global)"
    assert messages[2].startswith("Usage: /mcp [status")
    assert messages[3] == 'No MCP server "nope". Servers: demo'
    assert messages[4].startswith("demo: enabled · connected · 13 tools")
    assert messages[5].startswith("demo: reconnected · connected · 13 tools")
    assert messages[6].startswith("Tools of demo (exposure direct: declared to the model like built-in tools):\n  echo: Echo")
    assert disabled["enabled"] is False
    assert "enabled" not in json.loads(config.read_text())["mcpServers"]["demo"]  # the default is left out again
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]
    assert "mcp__demo__echo" in tool_names(server.requests[1])
