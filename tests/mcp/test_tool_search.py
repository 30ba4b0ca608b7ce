"""``tool_search``: deferred MCP tools found by BM25 and declared for the next request; kept on resume."""

from __future__ import annotations

from pathlib import Path

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
