"""``mcp.json`` in pi's format and ``pi mcp add|list|remove`` (the real CLI in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import DEMO, run_pi, stdio_server, write_mcp

from plugins.mcp.config import load_config, resolve_value, update_server

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp"


def test_pi_mcp_add_writes_the_file_the_typescript_pi_writes(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    first = run_pi(ws, agent, "mcp", "add", "demo", "--env", "K=${TOK}", "--", "python",
                   "/work/mcp/tests/mcp/servers/demo_server.py", "--flag")
    second = run_pi(ws, agent, "mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--bearer-token-env-var",
                    "TOK", "--exposure", "direct")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith(f'Added global MCP server "demo" in {agent / "mcp.json"}.')
    # recorded from pi 1.6.0 running the same two commands
    assert (agent / "mcp.json").read_text() == (FIXTURES / "pi_mcp_add.json").read_text()


def test_the_file_pi_wrote_is_read_with_its_values_resolved(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text((FIXTURES / "pi_mcp_add.json").read_text())
    loaded = load_config(agent, tmp_path, project_trusted=False)
    assert loaded.errors == []
    demo, web = loaded.servers
    assert (demo.name, demo.exposure, demo.config["env"]) == ("demo", "codemode", {"K": "${TOK}"})
    assert (web.is_http, web.exposure) == (True, "direct")
    assert resolve_value(web.config["headers"]["Authorization"], "h", {"TOK": "abc"}) == "Bearer abc"
    assert resolve_value("a$$b $!c ${X}", "v", {"X": "1"}) == "a$b !c 1"


def test_pi_mcp_list_connects_and_reports_tools_and_exits_1_on_problems(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(toolExposure={"echo": "direct"}),
                      "off": stdio_server(enabled=False),
                      "bad name": {"command": "x"}, "broken": stdio_server("--hang", timeout=1)})
    result = run_pi(ws, agent, "mcp", "list")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "demo: connected, 13 tools (codemode, global)" in lines
    assert any(line.startswith("  tools: echo [direct], add, ") for line in lines)
    assert "off: disabled (codemode, global)" in lines
    assert "broken: failed (codemode, global)" in lines
    assert "  no answer to initialize within 1 s" in lines
    assert any('invalid server name "bad name"' in line for line in lines)
    listed = json.loads(run_pi(ws, agent, "mcp", "list", "--json").stdout)
    demo = next(s for s in listed["servers"] if s["name"] == "demo")
    assert demo["state"] == "connected" and demo["toolExposure"] == {"echo": "direct"} and demo["resources"] is True


def test_pi_mcp_remove_and_its_errors(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(), "keep": stdio_server()})
    removed = run_pi(ws, agent, "mcp", "remove", "demo")
    assert removed.returncode == 0 and "Removed global MCP server" in removed.stdout
    assert list(json.loads((agent / "mcp.json").read_text())["mcpServers"]) == ["keep"]
    missing = run_pi(ws, agent, "mcp", "remove", "demo")
    assert missing.returncode == 1 and 'No global MCP server named "demo"' in missing.stderr
    bad = run_pi(ws, agent, "mcp", "add", "x")
    assert bad.returncode == 1 and "Usage: pi mcp add" in bad.stderr
    sse = run_pi(ws, agent, "mcp", "add", "y", "--url", "http://h/sse", "--exposure", "sometimes")
    assert sse.returncode == 1 and 'exposure must be one of "codemode"' in sse.stderr
    assert "Traceback" not in bad.stderr + sse.stderr


def test_project_servers_need_trust_and_overrides_keep_the_global_entry(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"tools": stdio_server(env={"DEMO_VALUE": "global"})})
    added = run_pi(ws, agent, "mcp", "add", "-l", "local", "--", "python", str(DEMO))
    assert added.returncode == 0 and "The project is not trusted" in added.stdout
    (ws / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "local": {"command": "python", "args": [str(DEMO)]}, "tools": {"enabled": False, "exposure": "direct"}}}))
    untrusted = load_config(agent, ws, project_trusted=False)
    assert [s.name for s in untrusted.servers] == ["tools"] and untrusted.servers[0].enabled
    trusted = load_config(agent, ws, project_trusted=True)
    tools = next(s for s in trusted.servers if s.name == "tools")
    assert (tools.enabled, tools.exposure, tools.config["env"]) == (False, "direct", {"DEMO_VALUE": "global"})
    assert tools.override == str(ws / ".pi" / "mcp.json")
    update_server(ws / ".pi" / "mcp.json", "tools", {"enabled": True})
    assert json.loads((ws / ".pi" / "mcp.json").read_text())["mcpServers"]["tools"] == {"enabled": True,
                                                                                         "exposure": "direct"}
    listed = run_pi(ws, agent, "mcp", "list")
    assert f"{ws / '.pi' / 'mcp.json'} is ignored because the project is not trusted" in listed.stdout


def test_invalid_entries_are_reported_and_skipped(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"a": {"url": "ftp://x"}, "b": {"command": "x", "args": "no"}, "c": {"type": "sse", "url": "http://x"},
                      "d": {"command": "x", "timeout": 0}, "e_f": {"command": "x"}, "e-f": {"command": "y"},
                      "ok": {"command": "x", "exposure": "codemode-deferred"}})
    loaded = load_config(agent, tmp_path, project_trusted=False)
    assert [s.name for s in loaded.servers] == ["e_f", "ok"]
    assert loaded.servers[1].exposure == "codemode"
    messages = "\n".join(loaded.errors)
    for expected in ('server "a": url must be an http or https URL', 'server "b": args must be an array of strings',
                     'server "c": legacy SSE transport is not supported', 'server "d": timeout must be a positive',
                     'server "e-f" conflicts with "e_f"'):
        assert expected in messages
    (agent / "mcp.json").write_text("{not json")
    assert load_config(agent, tmp_path, project_trusted=False).errors[0].startswith(str(agent / "mcp.json"))
