"""``tool_search``: deferred MCP tools found by BM25 and declared for the next request; kept on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_helpers import run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir

from plugins.tool_search.ranking import Document, rank, tokenize


def test_ranking_prefers_names_coverage_and_exact_names() -> None:
    docs = [Document("mcp__gh__list_issues", "List issues of a repository."),
            Document("mcp__gh__create_issue", "Create a new issue in a repository with a title and body."),
            Document("mcp__fs__read_file", "Read a file from disk.", "mcp__fs files"),
            Document("mcp__gh__search_code", "Search code across repositories; mentions issues issues issues.")]
    assert tokenize("readFile read_file Issues") == ["read", "file", "read", "file", "issue"]
    assert rank("create issue", docs, 2)[0][0] == "mcp__gh__create_issue"
    assert rank("issues", docs, 8)[0][0] in ("mcp__gh__list_issues", "mcp__gh__create_issue")
    assert rank("search_code", docs, 1)[0][0] == "mcp__gh__search_code"  # the exact local name wins
    assert rank("files", docs, 1)[0][0] == "mcp__fs__read_file"  # through the namespace text
    assert rank("the of", docs) == [] and rank("nothing like it", docs) == []


def test_tool_search_loads_a_deferred_tool_for_the_next_request_and_a_resume_keeps_it(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="deferred")})
    turns = [{"tool_calls": [{"id": "c1", "name": "tool_search", "arguments": {"query": "add two integers sum"}}]},
             {"tool_calls": [{"id": "c2", "name": "mcp__demo__add", "arguments": {"a": 20, "b": 22}}]},
             {"text": "42"}, {"text": "again"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        first = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-p", "add 20 and 22")
        resumed = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-c", "-p", "once more")
    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    before, after, final, again = server.requests
    assert "tool_search" in tool_names(before)  # activated for the deferred server
    assert not [n for n in tool_names(before) if n.startswith("mcp__")]
    loaded = tool_results(after)[-1]["content"]
    assert loaded.startswith("Loaded ") and "- mcp__demo__add: Add two integers and return the sum." in loaded
    assert "mcp__demo__add" in tool_names(after)
    assert tool_results(final)[-1]["content"] == "42"
    assert "mcp__demo__add" in tool_names(again)  # the resumed branch declares what was loaded on it
    assert "<mcp_servers>" in before["body"]["messages"][0]["content"]
    assert "- mcp__demo (tool_search)" in before["body"]["messages"][0]["content"]
    # recorded as pi records it: a system message declaring the loaded tool, after the tool_search result
    records = session_records(agent)
    # no tool_search entry: the only custom entry is the mcp_servers section the first prompt fixed
    assert [r["customType"] for r in records if r["type"] == "custom"] == ["mcp_servers"]
    messages = [r["message"] for r in records if r["type"] == "message"]
    at = next(i for i, m in enumerate(messages) if m["role"] == "toolResult" and m["toolName"] == "tool_search")
    change = messages[at + 1]
    assert change["role"] == "system" and change["content"] == "" and "toolsRemoved" not in change
    assert [t["name"] for t in change["toolsAdded"]] == ["mcp__demo__add"]
    assert change["toolsAdded"][0]["parameters"]["properties"].keys() == {"a", "b"}
    assert messages[at + 2]["role"] == "assistant"
    assert [m["role"] for m in messages].count("system") == 2  # the resume declared nothing new


def session_records(agent: Path) -> list[dict[str, Any]]:
    (path,) = agent.rglob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_loads_recorded_by_earlier_versions_as_custom_entries_are_still_declared(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="deferred")})
    with FakeOpenAI([{"text": "hello"}, {"text": "again"}]) as server:
        write_agent_dir(agent, server.base_url)
        first = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-p", "hi")
        (path,) = agent.rglob("*.jsonl")
        lines = path.read_text().splitlines()
        last = json.loads(lines[-1])
        old = {"type": "custom", "id": "0ldl0ad1", "parentId": last["id"], "timestamp": last["timestamp"],
               "customType": "tool_search", "data": {"loaded": ["mcp__demo__add"]}}
        path.write_text("\n".join([*lines, json.dumps(old)]) + "\n")
        resumed = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-c", "-p", "once more")
    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    assert "mcp__demo__add" not in tool_names(server.requests[0])
    assert "mcp__demo__add" in tool_names(server.requests[1])


def test_tool_search_without_matches_and_with_bad_arguments(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="deferred")})
    turns = [{"tool_calls": [{"id": "c1", "name": "tool_search", "arguments": {"query": "zzzz qqqq"}},
                             {"id": "c2", "name": "tool_search", "arguments": {"query": "echo", "limit": 0}}]},
             {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, "--provider", "fake", "--model", "fake-model", "--no-session", "-p", "x")
    assert result.returncode == 0, result.stderr
    contents = [m["content"] for m in tool_results(server.requests[1])]
    assert contents == ["No matching tools found.", "limit must be a positive integer"]


def test_a_tree_move_declares_what_the_target_branch_loaded(tmp_path: Path) -> None:
    import asyncio

    from pi_core import Tool, ToolResult, create_agent_session, hookimpl
    from pi_core.ai.faux import FauxProvider, faux_tool_call, faux_turn

    class Deferred:
        __name__ = "deferred-weather"

        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Tool(name="weather_lookup", description="Look up the weather forecast for a city.",
                          parameters={"type": "object", "properties": {"city": {"type": "string"}}},
                          execute=lambda p, c: ToolResult.text("sunny"), exposure="deferred"))

    faux = FauxProvider("faux-w", "w")
    faux.enqueue(faux_turn(faux_tool_call("tool_search", {"query": "weather forecast"})), "loaded", "other")

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Deferred()],
                                             tools=["read", "tool_search"], agent_dir=tmp_path / "agent")
        await session.prompt("find the weather tool")
        loaded = session.ctx.get_active_tools()
        records = [json.loads(line) for line in session.session.session_file.read_text().splitlines()]
        ids = [r["id"] for r in records if r["type"] == "message" and r["message"]["role"] in ("user", "assistant")]
        await session.navigate_tree(ids[0])  # back before the load
        before = session.ctx.get_active_tools()
        await session.navigate_tree(ids[-1])  # the branch that loaded it
        return loaded, before, session.ctx.get_active_tools()

    loaded, before, again = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert "weather_lookup" in loaded and "weather_lookup" not in before and "weather_lookup" in again
    assert [t.name for t in faux.requests[1].context.tools] == ["read", "tool_search", "weather_lookup"]
