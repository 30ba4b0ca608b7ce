"""MCP resources as the three resource tools (pi's, Codex's and opencode's names), end to end."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir


def calls(*specs: tuple[str, dict]) -> dict:
    return {"tool_calls": [{"id": f"c{n}", "name": name, "arguments": args} for n, (name, args) in enumerate(specs, 1)]}


def test_resources_are_listed_and_read_through_the_resource_tools(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [calls(("list_mcp_resources", {}), ("list_mcp_resource_templates", {"server": "demo"}),
                   ("read_mcp_resource", {"server": "demo", "uri": "demo://readme"}),
                   ("read_mcp_resource", {"server": "demo", "uri": "demo://records/42"}),
                   ("read_mcp_resource", {"server": "demo", "uri": "demo://logo.png"}),
                   ("read_mcp_resource", {"server": "nope", "uri": "demo://readme"}),
                   ("list_mcp_resources", {"cursor": "x"})),
             {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "--mode", "json", "-p", "go")
    assert result.returncode == 0, result.stderr
    declared = tool_names(server.requests[0])
    assert {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} <= set(declared)
    listing, templates, readme, record, _logo, unknown, bad_cursor = [m["content"] for m in tool_results(server.requests[1])]
    resources = json.loads(listing)["resources"]
    assert [(r["server"], r["uri"], r["name"]) for r in resources] == [
        ("demo", "demo://readme", "readme"), ("demo", "demo://logo.png", "logo")]  # the ui:// app view is left out
    assert resources[0]["description"] == "The demo README" and resources[0]["mimeType"] == "text/plain"
    listed_templates = json.loads(templates)
    assert listed_templates["server"] == "demo"
    assert [(t["uriTemplate"], t["name"]) for t in listed_templates["resourceTemplates"]] == [
        ("demo://records/{record_id}", "record")]
    assert readme == "Demo server README: tools echo and add."
    assert json.loads(record) == {"id": "42", "kind": "record"}
    assert unknown == 'MCP server "nope" has no resources. Servers with resources: demo'
    assert bad_cursor == "cursor can only be given together with a server"
    ends = {e["toolCallId"]: e for e in map(json.loads, result.stdout.splitlines()) if e["type"] == "tool_execution_end"}
    assert [b["type"] for b in ends["c5"]["result"]["content"]] == ["image"]  # the PNG reaches the model as an image
    assert ends["c3"]["result"]["structuredContent"] == {"server": "demo", "uri": "demo://readme", "contents": [
        {"uri": "demo://readme", "mimeType": "text/plain", "text": "Demo server README: tools echo and add."}]}


def test_resource_tools_of_a_codemode_server_are_called_from_scripts(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server()})
    code = ("const listing = await tools.list_mcp_resources({server: 'demo'});\n"
            "const read = await tools.read_mcp_resource({server: 'demo', uri: listing.resources[0].uri});\n"
            "return [listing.resources.length, read.contents[0].text]")
    turns = [{"tool_calls": [{"id": "s1", "name": "codemode", "arguments": {"code": code}}]}, {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "list_mcp_resources" not in tool_names(server.requests[0])  # deferred like the server's tools
    assert tool_results(server.requests[1])[-1]["content"].endswith('[2,"Demo server README: tools echo and add."]')
