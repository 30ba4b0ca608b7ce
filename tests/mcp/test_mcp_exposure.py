"""Exposure beyond the defaults: ``hidden`` servers and tools, ``toolExposure`` per tool, ``autoEnableCodemode:
false``, and a server whose tool list changes while pi runs (``notifications/tools/list_changed``)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from mcp_helpers import model_args, run_pi, stdio_server, tool_names, tool_results, write_mcp
from fake_openai import FakeOpenAI, write_agent_dir
from test_mcp_command import notices, write_models

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

UNREACHABLE = ("MCP tools are only reachable from the codemode or tool_search tool, but neither is active "
               "(autoEnableCodemode is false); they cannot be called.")


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def test_hidden_servers_and_tools_are_unreachable_and_tool_exposure_sets_single_tools(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {
        "demo": stdio_server(exposure="direct", toolExposure={
            "delete_record": "hidden", "add": "codemode", "meet*": "deferred", "*": "direct", "meet": "hidden"}),
        "off": stdio_server(exposure="hidden")})
    script = ("const names = ALL_TOOLS.map((t) => t.name);\n"
              "let removed;\ntry { await tools.mcp__demo__delete_record({record_id: '1'}); removed = 'called'; }"
              " catch (e) { removed = e.message; }\n"
              "return {names: names.filter((n) => n.startsWith('mcp__')).sort(), removed,"
              " described: await describeTool('mcp__off__echo') === undefined,"
              " sum: (await tools.mcp__demo__add({a: 1, b: 2})).content[0].text}")
    turns = [call("codemode", {"code": script}, "c1"), call("mcp__demo__delete_record", {"record_id": "2"}, "c2"),
             {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = run_pi(ws, agent, *model_args(), "-p", "go")
    assert result.returncode == 0, result.stderr
    declared = tool_names(server.requests[0])
    # the exact name "meet" wins over "meet*"; among patterns the first that matches ("meet*" before "*")
    assert [n for n in declared if n.startswith("mcp__")] == [
        "mcp__demo__echo", "mcp__demo__slow", "mcp__demo__stall", "mcp__demo__toggle_extra", "mcp__demo__crash",
        "mcp__demo__huge", "mcp__demo__picture", "mcp__demo__fail", "mcp__demo__whoami"]
    assert {"codemode", "tool_search"} <= set(declared)  # for the codemode tool and the deferred ones
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert "- mcp__demo (codemode)" in system and "mcp__off" not in system
    answer = json.loads(tool_results(server.requests[1])[-1]["content"].split("Output:\n", 1)[1])
    reachable = set(answer["names"])
    assert {"mcp__demo__add", "mcp__demo__meet_writing", "mcp__demo__echo"} <= reachable  # codemode, deferred, direct
    assert not reachable & {"mcp__demo__delete_record", "mcp__demo__meet"}
    assert not [n for n in reachable if n.startswith("mcp__off__")]
    assert answer["removed"].startswith("tools.mcp__demo__delete_record is not defined"), answer["removed"]
    assert answer["described"] is True and answer["sum"] == "3"
    assert tool_results(server.requests[2])[-1]["content"] == "Tool mcp__demo__delete_record not found"


def test_auto_enable_codemode_false_leaves_codemode_off_and_warns_once(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server()}, autoEnableCodemode=False)
    with FakeOpenAI([{"text": "one"}, {"text": "two"}]) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            records = pi.prompt("hi") + pi.prompt("again")
            pi.call({"type": "prompt", "message": "/mcp status"}, timeout=60)  # its tools are there, unreachable
    assert notices(records).count(UNREACHABLE) == 1
    for request in server.requests:
        names = tool_names(request)
        assert "codemode" not in names and "tool_search" not in names
        assert not [n for n in names if n.startswith("mcp__")]
    # asked for by name, codemode reaches the server's tools, and nothing warns
    script = "return (await tools.mcp__demo__echo({text: 'hi'})).content[0].text"
    with FakeOpenAI([call("codemode", {"code": script}, "c1"), {"text": "ok"}]) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, "--tools", "+codemode", model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            records = pi.prompt("go")
    assert UNREACHABLE not in notices(records)
    result = tool_results(server.requests[1])[-1]["content"]
    assert result.startswith("Script completed\n") and result.endswith("\necho:hi"), result


def tools_of(pi: RpcProcess) -> str:
    response, records = pi.call({"type": "prompt", "message": "/mcp tools demo"}, timeout=60)
    return "\n".join(notices(records))


def wait_until(check: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)
    assert check()


def test_tools_a_server_adds_or_withdraws_while_pi_runs_follow_its_list(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_mcp(agent, {"demo": stdio_server(exposure="direct")})
    turns = [call("mcp__demo__toggle_extra", {}, "c1"), {"text": "added"},
             call("mcp__demo__extra", {"text": "hi"}, "c2"), {"text": "used"},
             call("mcp__demo__toggle_extra", {}, "c3"), {"text": "withdrawn"},
             call("mcp__demo__extra", {"text": "again"}, "c4"), {"text": "gone"}]
    with FakeOpenAI(turns) as server:
        write_models(agent, server.base_url)
        with RpcProcess(ws, model=("srv", "m"), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
            pi.prompt("add a tool")
            wait_until(lambda: "\n  extra: A tool that appears at run time." in tools_of(pi))
            pi.prompt("use it")
            pi.prompt("withdraw it")
            wait_until(lambda: "\n  extra:" not in tools_of(pi))
            pi.prompt("use it again")
    assert "mcp__demo__extra" not in tool_names(server.requests[0])
    assert tool_results(server.requests[1])[-1]["content"] == "added extra"
    assert "mcp__demo__extra" in tool_names(server.requests[2])  # declared once the server said so
    assert tool_results(server.requests[3])[-1]["content"] == "extra:hi"
    assert tool_results(server.requests[5])[-1]["content"] == "withdrew extra"
    assert "mcp__demo__extra" not in tool_names(server.requests[6])
    assert tool_results(server.requests[7])[-1]["content"] == "Tool mcp__demo__extra not found"
