"""Response shapes a client of pi 1.6 relies on: ``compact``'s usage, expected refusals without a traceback,
the fork points of every branch. A real ``pi --mode rpc`` against the local OpenAI-compatible fake server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rpc_client import RpcProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from fake_openai import FakeOpenAI, write_agent_dir  # noqa: E402


def _rpc(tmp_path: Path, server: FakeOpenAI, *args: str, settings: dict[str, Any] | None = None) -> RpcProcess:
    agent = tmp_path / "agent"
    write_agent_dir(agent, server.base_url, settings)
    return RpcProcess(tmp_path, *args, scripted=False, env={"PI_CODING_AGENT_DIR": str(agent)})


def test_nothing_to_compact_is_answered_without_a_traceback(tmp_path: Path) -> None:
    with FakeOpenAI([]) as server, _rpc(tmp_path, server, "--no-session") as pi:
        refused, _ = pi.call({"type": "compact"})
        state, _ = pi.call({"type": "get_state"})
        pi.close_stdin()
        assert pi.wait() == 0
    assert refused["success"] is False and refused["error"] == "Nothing to compact (session too small)"
    assert state["success"] is True
    assert b"Traceback" not in pi.stderr and b"CompactionError" not in pi.stderr


def test_compact_usage_of_a_split_turn_says_the_total_is_not_the_providers(tmp_path: Path) -> None:
    turns = [{"text": "first answer"}, {"text": "second answer"}, {"text": "THE SUMMARY"}, {"text": "prefix"}]
    with FakeOpenAI(turns) as server, _rpc(tmp_path, server, "--no-session",
                                           settings={"compaction": {"keepRecentTokens": 3}}) as pi:
        pi.prompt("first question")
        pi.prompt("second question")
        done, _ = pi.call({"type": "compact"})
    assert done["success"] is True and len(server.requests) == 4  # history summary + turn prefix summary
    usage = done["data"]["usage"]
    assert usage["input"] == 200 and usage["output"] == 20
    assert usage["cost"]["totalFromProvider"] is False


def _branched_session(cwd: Path) -> Path:
    """one -> a1 -> two -> a2, and from a1 a second branch: an image alone, then "other two" (the leaf)."""
    from pi_core import AssistantMessage, ImageContent, SessionManager, TextContent, UserMessage

    manager = SessionManager.create(cwd, cwd / "sessions")
    manager.append_message(UserMessage(content=[TextContent(text="one")]))
    a1 = manager.append_message(AssistantMessage(content=[TextContent(text="a1")], provider="fake",
                                                 model="fake-model", api="openai-completions"))
    manager.append_message(UserMessage(content=[TextContent(text="two")]))
    manager.append_message(AssistantMessage(content=[TextContent(text="a2")], provider="fake",
                                            model="fake-model", api="openai-completions"))
    manager.branch(a1)
    manager.append_message(UserMessage(content=[ImageContent(data="iVBORw0KGgo=", mime_type="image/png")]))
    manager.append_message(UserMessage(content=[TextContent(text="other two")]))
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


def test_fork_messages_come_from_every_branch_and_skip_empty_texts(tmp_path: Path) -> None:
    session = _branched_session(tmp_path)
    with FakeOpenAI([]) as server, _rpc(tmp_path, server, "--session", str(session)) as pi:
        listed, _ = pi.call({"type": "get_fork_messages"})
        messages, _ = pi.call({"type": "get_messages"})
    assert [m["text"] for m in listed["data"]["messages"]] == ["one", "two", "other two"]
    active = [m["content"][0].get("text") for m in messages["data"]["messages"] if m["role"] == "user"]
    assert "two" not in active  # "two" is on the other branch, and still offered for forking


def test_faux_is_never_offered_unless_pi_faux_is_set(tmp_path: Path) -> None:
    with FakeOpenAI([]) as server:
        with _rpc(tmp_path, server, "--no-session") as pi:
            models, _ = pi.call({"type": "get_available_models"})
            cycled, _ = pi.call({"type": "cycle_model"})
            named, _ = pi.call({"type": "set_model", "provider": "faux", "modelId": "echo"})
        with RpcProcess(tmp_path, "--no-session", scripted=False, env={
                "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_FAUX": "1"}) as pi:
            listed, _ = pi.call({"type": "get_available_models"})
    assert [(m["provider"], m["id"]) for m in models["data"]["models"]] == [("fake", "fake-model")]
    assert cycled["success"] is True and cycled["data"] is None  # pi 1.6: nothing to cycle to
    assert named["success"] is True and named["data"]["id"] == "echo"  # asked for by name, it is used
    assert ("faux", "echo") in {(m["provider"], m["id"]) for m in listed["data"]["models"]}
