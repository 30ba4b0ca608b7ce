"""The events a client of pi relies on, in pi 1.6's order: a plugin writing to the session, retries and the
queue, an abort mid-answer. A real ``pi --mode rpc`` against the local OpenAI-compatible fake server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rpc_client import RpcProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402

PLUGIN = '''
from pi_core import Command, CustomMessage, Tool, ToolResult, hookimpl


async def note(args, ctx):
    ctx.append_entry("probe-state", {"n": 1})
    ctx.send_message(CustomMessage(custom_type="probe-msg", content="custom hello", display=True))


async def remember(params, ctx):
    ctx.session.send_message(CustomMessage(custom_type="probe-late", content="after the turn", display=False),
                             trigger_turn=False)
    return ToolResult.text("remembered")


@hookimpl
def register_commands(register):
    register(Command("note", note, "write to the session"))


@hookimpl
def register_tools(register):
    register(Tool(name="remember", label="Remember", description="remember something",
                  parameters={"type": "object", "properties": {}}, execute=remember))
'''


def _rpc(tmp_path: Path, agent: Path, server: FakeOpenAI, *args: str, settings: dict[str, Any] | None = None,
         plugin: bool = True) -> RpcProcess:
    write_agent_dir(agent, server.base_url, settings)
    extensions: tuple[Path, ...] = ()
    if plugin:
        (tmp_path / "probe.py").write_text(PLUGIN)
        extensions = (tmp_path / "probe.py",)
    return RpcProcess(tmp_path, "--no-session", *args, scripted=False, extensions=extensions,
                      env={"PI_CODING_AGENT_DIR": str(agent)})


def _kinds(records: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in records:
        kind = r["type"]
        if kind in ("message_start", "message_end"):
            kind += f"[{r['message']['role']}]"
        if kind != "message_update" and kind != "response":
            out.append(kind)
    return out


def test_append_entry_and_an_idle_custom_message_are_announced(tmp_path: Path) -> None:
    with FakeOpenAI([]) as server, _rpc(tmp_path, tmp_path / "agent", server) as pi:
        done, seen = pi.call({"type": "prompt", "message": "/note"})
        assert done["data"] == {"disposition": "handled"}
        if not any(r["type"] == "message_end" for r in seen):
            _, more = pi.wait_for(lambda r: r["type"] == "message_end")
            seen += more
        entries, _ = pi.call({"type": "get_entries"})
    [appended] = [r for r in seen if r["type"] == "entry_appended"]
    assert appended["entry"]["type"] == "custom" and appended["entry"]["customType"] == "probe-state"
    assert appended["entry"]["data"] == {"n": 1}
    assert _kinds(seen) == ["entry_appended", "message_start[custom]", "message_end[custom]"]
    [end] = [r for r in seen if r["type"] == "message_end"]
    assert {k: end["message"][k] for k in ("role", "customType", "content", "display")} == \
        {"role": "custom", "customType": "probe-msg", "content": "custom hello", "display": True}
    stored = [e["type"] for e in entries["data"]["entries"]]
    assert stored[-2:] == ["custom", "custom_message"]


def test_a_custom_message_sent_mid_turn_without_a_turn_waits_for_the_turn_end(tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"id": "c1", "name": "remember", "arguments": {}}]}, {"text": "done"}]
    with FakeOpenAI(turns) as server, _rpc(tmp_path, tmp_path / "agent", server) as pi:
        seen = pi.prompt("go")
    kinds = _kinds(seen)
    late = kinds.index("message_start[custom]")
    assert kinds[late - 3:late + 3] == ["message_start[toolResult]", "message_end[toolResult]", "turn_end",
                                        "message_start[custom]", "message_end[custom]", "turn_start"]
    second = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "user"]
    assert "after the turn" in json.dumps(second[-1])


def test_auto_retry_end_follows_the_answer_and_the_queue_drains_before_the_steer(tmp_path: Path) -> None:
    turns = [{"error": {"status": 500, "message": "overloaded"}}, {"text": "recovered", "chunk_delay": 0.2}]
    with FakeOpenAI(turns) as server, _rpc(tmp_path, tmp_path / "agent", server, settings={
            "retry": {"baseDelayMs": 400}}, plugin=False) as pi:
        started, seen = pi.call({"type": "prompt", "message": "q"})
        _, more = pi.wait_for(lambda r: r["type"] == "auto_retry_start")
        queued, rest = pi.call({"type": "steer", "message": "steer me"})
        seen = pi.settle(seen + more + rest)
    assert queued["success"] is True
    kinds = _kinds(seen)
    retried = kinds[kinds.index("auto_retry_start"):]
    assert retried[:2] == ["auto_retry_start", "entry_appended"] and "queue_update" in retried[2:4]
    second_run = kinds[len(kinds) - kinds[::-1].index("agent_start") - 1:]
    assert second_run == ["agent_start", "turn_start", "queue_update", "message_start[user]", "message_end[user]",
                          "message_start[assistant]", "message_end[assistant]", "auto_retry_end", "turn_end",
                          "agent_end", "agent_settled"]
    drained = [r for r in seen if r["type"] == "queue_update"][-1]
    assert drained == {"type": "queue_update", "steering": [], "followUp": []}
    assert {"type": "auto_retry_end", "success": True, "attempt": 1} in seen


def test_an_aborted_answer_ends_its_open_text_block_first(tmp_path: Path) -> None:
    turns = [{"text": "word " * 200, "chunk_delay": 0.05}]
    with FakeOpenAI(turns) as server, _rpc(tmp_path, tmp_path / "agent", server, plugin=False) as pi:
        pi.send({"type": "prompt", "message": "hi", "id": "p"})
        _, seen = pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        stopped, more = pi.call({"type": "abort"})
        seen = pi.settle(seen + more)
    assert stopped["success"] is True
    streamed = [r["assistantMessageEvent"]["type"] for r in seen if r["type"] == "message_update"]
    assert streamed[0] == "text_start" and streamed[-1] == "text_end"  # as pi's openai-completions
    [end] = [r for r in seen if r["type"] == "message_end" and r["message"]["role"] == "assistant"]
    assert end["message"]["stopReason"] == "aborted"
    ended = next(r for r in seen if (r.get("assistantMessageEvent") or {}).get("type") == "text_end")
    assert ended["assistantMessageEvent"]["content"] == end["message"]["content"][0]["text"]
