"""``ToolContext.execute_tool``: a tool calling other tools as the model's calls run (pi's ``ctx.executeTool``).

A plugin tool ``relay`` calls the tools its arguments name; the calls go through validation and the
``before_tool_call``/``after_tool_call`` hooks, their events carry ``parentToolCallId``, and the session
records them as ``nestedCalls`` on relay's result message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402

PLUGIN = '''
import json
from pathlib import Path

from pi_core import Block, Tool, ToolCapabilities, ToolResult, ToolResultPatch, hookimpl

LOG = Path(__file__).with_name("hooks.jsonl")


def log(**fields):
    with LOG.open("a") as handle:
        handle.write(json.dumps(fields) + "\\n")


async def relay(params, ctx):
    outcomes = []
    log(kind="callable", names=sorted(t.name for t in ctx.tools))
    for call in params["calls"]:
        outcome = await ctx.execute_tool(call["name"], call.get("arguments", {}))
        outcomes.append({"id": outcome.tool_call_id, "error": outcome.is_error, "text": outcome.result.text_content()})
    return ToolResult.text(json.dumps(outcomes))


@hookimpl
def register_tools(register):
    register(Tool(name="relay", description="Call other tools.", execute=relay, exposure="model-only",
                  parameters={"type": "object", "properties": {"calls": {"type": "array"}}, "required": ["calls"]}))
    register(Tool(name="shout", description="Upper-case a text.", exposure="deferred",
                  capabilities=ToolCapabilities(concurrency_safe=True),
                  parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                  execute=lambda params, ctx: ToolResult.text(params["text"].upper())))


@hookimpl
def before_tool_call(event, ctx):
    log(kind="before", tool=event.tool_name, id=event.tool_call_id, parent=event.parent_tool_call_id)
    if event.arguments.get("text") == "forbidden":
        return Block("no shouting that")


@hookimpl
def after_tool_call(event, ctx):
    if event.tool_name == "shout":
        log(kind="after", id=event.tool_call_id, parent=event.parent_tool_call_id)
        return ToolResultPatch(content=[*event.content, *[]], details={"patched": True})
'''


def test_a_tool_runs_other_tools_through_the_hooks_and_the_session_records_the_calls(tmp_path: Path) -> None:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    plugin = tmp_path / "relay_plugin.py"
    plugin.write_text(PLUGIN)
    calls = [{"name": "shout", "arguments": {"text": "hello"}},
             {"name": "shout", "arguments": {"text": "forbidden"}},
             {"name": "shout", "arguments": {}},
             {"name": "nope", "arguments": {}},
             {"name": "read", "arguments": {"path": "missing.txt"}}]
    turns = [{"tool_calls": [{"id": "call_1", "name": "relay", "arguments": {"calls": calls}}]}, {"text": "done"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(agent, server.base_url)
        result = subprocess.run(
            [sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model", "-e", str(plugin),
             "--tools", "read,relay", "--mode", "json", "-p", "go"],
            cwd=ws, capture_output=True, text=True, timeout=90,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(next(m for m in server.requests[1]["body"]["messages"] if m["role"] == "tool")["content"])
    assert [o["id"] for o in outcomes] == [f"call_1/{n}" for n in range(1, 6)]
    assert outcomes[0] == {"id": "call_1/1", "error": False, "text": "HELLO"}
    assert outcomes[1]["error"] and outcomes[1]["text"] == "no shouting that"
    assert outcomes[2]["error"] and "text" in outcomes[2]["text"]  # validation names the missing field
    assert outcomes[3]["error"] and outcomes[3]["text"] == "Tool nope not found"
    assert outcomes[4]["error"] and "missing.txt" in outcomes[4]["text"]  # an active direct tool is callable

    hooks = [json.loads(line) for line in (tmp_path / "hooks.jsonl").read_text().splitlines()]
    assert {"kind": "callable", "names": ["read", "shout"]} in hooks  # not relay (model-only)
    befores = [h for h in hooks if h["kind"] == "before"]
    assert befores[0] == {"kind": "before", "tool": "relay", "id": "call_1", "parent": None}
    assert {h["id"]: h["parent"] for h in befores[1:]} == {"call_1/1": "call_1", "call_1/2": "call_1",
                                                           "call_1/5": "call_1"}
    assert [h for h in hooks if h["kind"] == "after"] == [{"kind": "after", "id": "call_1/1", "parent": "call_1"}]

    events = [json.loads(line) for line in result.stdout.splitlines()]
    nested = [e for e in events if e["type"].startswith("tool_execution") and e.get("parentToolCallId")]
    assert [(e["type"], e["toolCallId"]) for e in nested if e["type"] != "tool_execution_update"][:2] == [
        ("tool_execution_start", "call_1/1"), ("tool_execution_end", "call_1/1")]
    assert next(e for e in nested if e["toolCallId"] == "call_1/1" and e["type"] == "tool_execution_end")[
        "result"]["details"] == {"patched": True}

    session_file = next((agent / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    relay_result = next(e["message"] for e in entries if e.get("type") == "message"
                        and e["message"].get("role") == "toolResult")
    record = relay_result["nestedCalls"]
    assert record["complete"] is True
    assert [(c["id"], c["name"], c["status"]) for c in record["calls"]] == [
        ("call_1/1", "shout", "ok"), ("call_1/2", "shout", "error"), ("call_1/3", "shout", "error"),
        ("call_1/4", "nope", "error"), ("call_1/5", "read", "error")]
    assert record["calls"][0]["arguments"] == {"text": "hello"}
    assert record["calls"][1]["error"] == "no shouting that"
    # nothing of it reaches the model
    assert "nestedCalls" not in json.dumps(server.requests[1]["body"])
