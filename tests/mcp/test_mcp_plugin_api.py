"""The MCP plugin API: ``ctx.register_mcp_server`` / ``unregister_mcp_server`` / ``get_mcp_servers`` and the
``mcp_servers_change`` hook, through ``pi -p`` with a plugin file and real SDK servers."""

from __future__ import annotations

import json
from pathlib import Path


from mcp_helpers import DEMO, model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir

PLUGIN = '''
import json
import sys
from pathlib import Path

from pi_core import hookimpl

LOG = Path(__file__).with_name("api.jsonl")
DEMO = {demo!r}


def log(**fields):
    with LOG.open("a") as handle:
        handle.write(json.dumps(fields) + "\\n")


def server(value):
    return {{"command": sys.executable, "args": [DEMO], "env": {{"DEMO_VALUE": value}}, "exposure": "direct"}}


@hookimpl
def session_start(event, ctx):
    ctx.register_mcp_server("plug", server("from-plugin"))
    ctx.register_mcp_server("demo", server("shadowed"))  # mcp.json defines demo: the file wins
    ctx.register_mcp_server("gone", server("never"))
    log(removed=ctx.unregister_mcp_server("gone"), again=ctx.unregister_mcp_server("gone"))
    log(servers=[s.name for s in ctx.get_mcp_servers()])
    for name, config in (("bad name!", server("x")), ("nocmd", {{"args": []}})):
        try:
            ctx.register_mcp_server(name, config)
        except ValueError as exc:
            log(error=str(exc))


@hookimpl
def mcp_servers_change(event, ctx):
    log(change=[s.name for s in event.servers])
'''


def test_a_plugin_registers_servers_for_its_session(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct", env={"DEMO_VALUE": "from-file"})})
    plugin = tmp_path / "servers_plugin.py"
    plugin.write_text(PLUGIN.format(demo=str(DEMO)))
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__plug__whoami", "arguments": {}},
                             {"id": "c2", "name": "mcp__demo__whoami", "arguments": {}}]}, {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-e", str(plugin), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "mcp__plug__echo" in tool_names(server.requests[0])  # the first request waits for it like any direct server
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__gone__")]
    plug, demo = [m["content"] for m in tool_results(server.requests[1])]
    assert "DEMO_VALUE=from-plugin" in plug
    assert "DEMO_VALUE=from-file" in demo
    records = [json.loads(line) for line in (tmp_path / "api.jsonl").read_text().splitlines()]
    assert {"removed": True, "again": False} in records
    assert {"servers": ["plug", "demo"]} in records
    errors = [r["error"] for r in records if "error" in r]
    assert errors == ['invalid MCP server name "bad name!" (use letters, digits, "_" and "-")',
                      'MCP server "nocmd" needs "command" (stdio) or "url" (streamable HTTP)']
    changes = [r["change"] for r in records if "change" in r]
    assert changes == [["plug"], ["plug", "demo"], ["plug", "demo", "gone"], ["plug", "demo"]]


def test_without_servers_the_api_still_answers(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    plugin = tmp_path / "quiet_plugin.py"
    plugin.write_text("import json\nfrom pathlib import Path\nfrom pi_core import hookimpl\n\n"
                      "@hookimpl\ndef session_start(event, ctx):\n"
                      "    Path(__file__).with_name('seen.json').write_text(json.dumps([s.name for s in ctx.get_mcp_servers()]))\n")
    with FakeOpenAI([{"text": "plain"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-e", str(plugin), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "seen.json").read_text()) == []
    assert not (agent / "mcp.log").exists()  # nothing connected, nothing imported


REPLACEMENTS = '''
from pi_core import Command, Tool, ToolResult, hookimpl


def tool(name, text):
    return Tool(name=name, description=f"{text} (a plugin's)", parameters={"type": "object"},
                execute=lambda params, ctx: ToolResult.text(f"{text} ran"), exposure="model-only",
                default_active=False, reaches_tools=lambda arguments: "all")


@hookimpl
def register_tools(register):
    register(tool("codemode", "scripts"), replaces="codemode")
    register(tool("tool_search", "search"), replaces="tool_search")


@hookimpl
def register_commands(register):
    async def mcp(args, ctx):
        await ctx.ui.notify(f"the plugin's /mcp {args}", "info")

    register(Command("mcp", mcp, "MCP, the plugin's way"), replaces="mcp")
'''


def test_a_plugin_replaces_codemode_tool_search_and_the_mcp_command(ws: Path, tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
    from rpc_client import RpcProcess
    from test_mcp_command import notices, write_models

    agent = tmp_path / "agent"
    write_mcp(agent, {"cm": stdio_server(), "def": stdio_server(exposure="deferred")})
    plugin = tmp_path / "replacements.py"
    plugin.write_text(REPLACEMENTS)
    turns = [{"tool_calls": [{"id": "c1", "name": "codemode", "arguments": {}},
                             {"id": "c2", "name": "tool_search", "arguments": {}}]}, {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), extensions=(plugin,), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            _, records = pi.call({"type": "prompt", "message": "/mcp status"})
            pi.prompt("go")
    assert "the plugin's /mcp status" in notices(records)
    declared = {t["function"]["name"]: t["function"]["description"] for t in server.requests[0]["body"]["tools"]}
    # the MCP plugin activates the replacements for its servers, and nothing rewrites their descriptions
    assert declared["codemode"] == "scripts (a plugin's)" and declared["tool_search"] == "search (a plugin's)"
    assert [m["content"] for m in tool_results(server.requests[1])] == ["scripts ran", "search ran"]
