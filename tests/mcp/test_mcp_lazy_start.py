"""Print and JSON mode start a server only when the first request declares its tools or a call needs it."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_helpers import model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir


def started(agent: Path) -> set[str]:
    log = agent / "mcp.log"
    return set(re.findall(r"\[(\w+)\] stderr demo server starting", log.read_text())) if log.exists() else set()


def test_servers_behind_codemode_or_tool_search_do_not_start_when_no_call_needs_them(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"cm": stdio_server(), "hidden": stdio_server(exposure="deferred"),
                      "dir": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "plain"}, {"text": "json"}]) as server:
        write_agent_dir(agent, server.base_url)
        printed = run_pi(ws, agent, *model_args(), "-p", "hi")
        json_mode = run_pi(ws, agent, *model_args(), "--mode", "json", "-p", "hi")
    assert printed.returncode == 0 and json_mode.returncode == 0, printed.stderr + json_mode.stderr
    assert printed.stdout.strip() == "plain"
    assert started(agent) == {"dir"}  # the direct server's tools are in the first request: it started, twice
    assert len(re.findall(r"\[dir\] stderr demo server starting", (agent / "mcp.log").read_text())) == 2
    for request in server.requests:
        names = tool_names(request)
        assert "mcp__dir__echo" in names and not [n for n in names if n.startswith(("mcp__cm__", "mcp__hidden__"))]
        assert "tool_search" in names  # the deferred server's tools stay reachable
        system = request["body"]["messages"][0]["content"]
        assert "- mcp__cm (" in system and "- mcp__hidden (tool_search)" in system


def test_a_tool_search_call_starts_the_servers_it_searches_and_finds_their_tools(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"one": stdio_server(exposure="deferred"), "two": stdio_server(exposure="deferred")})
    turns = [{"tool_calls": [{"id": "c1", "name": "tool_search", "arguments": {"query": "echo text back"}}]},
             {"text": "found"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "--mode", "json", "-p", "find echo")
    assert result.returncode == 0, result.stderr
    assert started(agent) == {"one", "two"}
    found = tool_results(server.requests[1])[-1]["content"]
    assert "mcp__one__echo" in found and "mcp__two__echo" in found
