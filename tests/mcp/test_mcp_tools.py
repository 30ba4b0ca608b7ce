"""MCP tools end to end: ``pi -p`` against a fake model, with real SDK servers over stdio and HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import HttpServer, model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir


def call(name: str, arguments: dict, call_id: str = "call_1") -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def test_a_direct_stdio_tool_is_declared_called_and_its_result_reaches_the_next_request(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [call("mcp__demo__echo", {"text": "hi there"}), {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "use echo")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    first, second = server.requests
    declared = tool_names(first)
    assert "mcp__demo__echo" in declared and "mcp__demo__add" in declared
    echo = next(t for t in first["body"]["tools"] if t["function"]["name"] == "mcp__demo__echo")["function"]
    assert echo["description"] == "Echo the given text back, prefixed with 'echo:'."
    assert echo["parameters"]["properties"]["text"]["type"] == "string"
    assert [m["content"] for m in tool_results(second)] == ["echo:hi there"]


def test_an_http_server_with_a_bearer_token_from_the_environment(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with HttpServer() as http:
        write_mcp(agent, {"web": {"url": http.url, "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"},
                                  "exposure": "direct"}})
        turns = [call("mcp__web__add", {"a": 2, "b": 40}), {"text": "ok"}]
        with FakeOpenAI(turns) as server:
            write_agent_dir(agent, server.base_url)
            result = run_pi(ws, agent, *model_args(), "-p", "add", env={"DEMO_TOKEN": "s3cret"})
    assert result.returncode == 0, result.stderr
    assert tool_results(server.requests[1])[0]["content"] == "42"


def test_http_requests_are_retried_as_pi_retries_them(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    log = tmp_path / "requests.log"
    # the server answers the first initialize, the first tool call and the first resource read with 503
    busy = [a for method in ("initialize", "tools/call", "resources/read") for a in ("--unavailable", method)]
    with HttpServer(*busy, "--requests", str(log)) as http:
        write_mcp(agent, {"web": {"url": http.url, "exposure": "direct"}})
        turns = [call("mcp__web__echo", {"text": "first"}, "c1"),
                 call("read_mcp_resource", {"server": "web", "uri": "demo://readme"}, "c2"),
                 call("mcp__web__echo", {"text": "second"}, "c3"), {"text": "done"}]
        with FakeOpenAI(turns) as server:
            write_agent_dir(agent, server.base_url)
            result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "mcp__web__echo" in tool_names(server.requests[0])  # connected on the second attempt
    outcomes = [tool_results(request)[-1]["content"] for request in server.requests[1:]]
    # a tool call is never tried again (the server may have run it); a resource read is, once
    assert outcomes == ['MCP server "web" answered HTTP 503 during tool echo',
                        "Demo server README: tools echo and add.", "echo:second"]
    received = log.read_text().splitlines()
    assert [r for r in received if r.startswith("tools/call")] == [
        'tools/call echo {"text": "first"}', 'tools/call echo {"text": "second"}']
    assert received.count("resources/read") == 2
    # initialize: 503, then connected; after each 503 the SDK's transport is gone, so the next request connects again
    assert received.count("initialize") == 4
    assert "[web] warning connecting failed (HTTP 503 from http://127.0.0.1:" in (agent / "mcp.log").read_text()


def test_a_restarted_http_server_gets_the_call_again_on_a_new_session(ws: Path, tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
    from rpc_client import RpcProcess
    from test_mcp_command import write_models

    agent = tmp_path / "agent"
    log = tmp_path / "requests.log"
    turns = [call("mcp__web__echo", {"text": "before"}, "c1"), {"text": "one"},
             call("mcp__web__echo", {"text": "after"}, "c2"), {"text": "two"}]
    with HttpServer("--requests", str(log)) as http, FakeOpenAI(turns) as server:
        write_mcp(agent, {"web": {"url": http.url, "exposure": "direct", "headers": {"Authorization": "Bearer t"}}})
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.prompt("before")
            http.restart()  # the new process answers the old session's requests with 404
            pi.prompt("after")
    assert [tool_results(server.requests[n])[-1]["content"] for n in (1, 3)] == ["echo:before", "echo:after"]
    received = log.read_text().splitlines()
    # the call that met the unknown session did not run; it went again on a new session, as pi sends it
    assert received.count("initialize") == 2
    assert [r for r in received if r.startswith("tools/call")] == [
        'tools/call echo {"text": "before"}', 'tools/call echo {"text": "after"}', 'tools/call echo {"text": "after"}']
    assert "[web] warning the server no longer knows the session; connecting again" in (agent / "mcp.log").read_text()


def test_an_error_result_and_an_image_result(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__fail", "arguments": {"reason": "testing"}},
                             {"id": "c2", "name": "mcp__demo__picture", "arguments": {}}]}, {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "--mode", "json", "-p", "go")
    assert result.returncode == 0, result.stderr
    ends = [json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_end"' in line]
    by_id = {e["toolCallId"]: e for e in ends}
    assert by_id["c1"]["isError"] is True
    assert "failed because testing" in by_id["c1"]["result"]["content"][0]["text"]
    picture = by_id["c2"]["result"]
    assert not by_id["c2"]["isError"]
    assert [b["type"] for b in picture["content"]] == ["text", "image"]
    assert picture["structuredContent"]["content"][1]["mimeType"] == "image/png"


def test_no_mcp_turns_every_server_off(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "plain"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "--no-mcp", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]
    assert not (agent / "mcp.log").exists()


def test_nothing_mcp_related_is_imported_without_servers(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "plain"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "pi_core.agent.loop" in imported  # the profile does list what the run imported ...
    assert not {m for m in imported if m.split(".")[0] in ("mcp", "py_mini_racer", "mcp_types")}
    assert not {m for m in imported if m.startswith("plugins.mcp.")}  # ... and none of the plugin's parts


def test_the_plugin_can_be_disabled_like_any_other(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "plain"}]) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "hi", env={"PI_DISABLE_PLUGINS": "mcp"})
    assert result.returncode == 0, result.stderr
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]


def test_tools_patterns_apply_to_mcp_tools_registered_at_run_time(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as server:
        write_agent_dir(agent, server.base_url)
        allow = run_pi(ws, agent, *model_args(), "--tools", "read,mcp__demo__e*", "-p", "hi")
        exclude = run_pi(ws, agent, *model_args(), "--exclude-tools", "mcp__demo__*,*_mcp_*", "-p", "hi")
    assert allow.returncode == 0 and exclude.returncode == 0, allow.stderr + exclude.stderr
    assert tool_names(server.requests[0]) == ["read", "mcp__demo__echo"]
    assert tool_names(server.requests[1]) == ["read", "bash", "edit", "write"]


POLICY = '''
import json
from pathlib import Path

from pi_core import Block, hookimpl

LOG = Path(__file__).with_name("caps.jsonl")


@hookimpl
def before_tool_call(event, ctx):
    caps = event.tool.capabilities
    with LOG.open("a") as handle:
        handle.write(json.dumps({"tool": event.tool_name, "reads": caps.reads, "writes": caps.writes,
                                 "network": caps.network, "annotations": event.tool.annotations}) + "\\n")
    if caps.writes:
        return Block("read-only policy: this tool may change things")
'''


def test_mcp_annotations_become_capabilities_a_policy_plugin_can_act_on(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    plugin = tmp_path / "policy.py"
    plugin.write_text(POLICY)
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__demo__echo", "arguments": {"text": "hi"}},
                             {"id": "c2", "name": "mcp__demo__delete_record", "arguments": {"record_id": "7"}}]},
             {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-e", str(plugin), "-p", "go")
    assert result.returncode == 0, result.stderr
    seen = {r["tool"]: r for r in map(json.loads, (tmp_path / "caps.jsonl").read_text().splitlines())}
    assert seen["mcp__demo__echo"] == {"tool": "mcp__demo__echo", "reads": True, "writes": False, "network": False,
                                       "annotations": {"readOnlyHint": True}}
    assert seen["mcp__demo__delete_record"]["writes"] is True and seen["mcp__demo__delete_record"]["network"] is True
    echo, delete = [m["content"] for m in tool_results(server.requests[1])]
    assert echo == "echo:hi"
    assert "read-only policy: this tool may change things" in delete and "deleted" not in delete
