"""AgentSession moving between session files, user shell commands, statistics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from scripted import Script, calls, text
from test_runtime_session import make_session

from pi_core import Cancel, hookimpl


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()][1:]


def test_new_session_starts_a_fresh_file(tmp_path: Path) -> None:
    session = make_session(tmp_path, Script([text("one"), text("two")]))
    run(session.prompt("first"))
    first = session.session.session_file
    assert run(session.new_session()) is True
    run(session.prompt("second"))
    second = session.session.session_file
    assert second != first and [m.role for m in session.messages] == ["system", "user", "assistant"]
    assert [e["type"] for e in entries(second)][:2] == ["model_change", "thinking_level_change"]
    assert len([e for e in entries(first) if e["type"] == "message"]) == 3  # the old file is untouched


def test_fork_before_a_user_message_and_clone(tmp_path: Path) -> None:
    session = make_session(tmp_path, Script([text("a1"), text("a2"), text("a3")]))
    run(session.prompt("q1"))
    run(session.prompt("q2"))
    original = session.session.session_file
    forks = session.get_fork_messages()
    assert [f.text for f in forks] == ["q1", "q2"]
    cancelled, forked_text = run(session.fork(forks[1].entry_id))
    assert (cancelled, forked_text) == (False, "q2")
    assert session.session.session_file != original
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]
    run(session.prompt("q2 again"))
    header = json.loads(session.session.session_file.read_text().splitlines()[0])
    assert header["parentSession"] == str(original)
    before = session.session.session_file
    assert run(session.clone()) is True
    assert session.session.session_file != before
    assert [m.content[0].text for m in session.messages if m.role == "user"] == ["q1", "q2 again"]


def test_a_plugin_can_cancel_switching_and_forking(tmp_path: Path) -> None:
    class Veto:
        __name__ = "veto"

        @hookimpl
        def session_before_switch(self, event: Any) -> Cancel:
            return Cancel("no")

        @hookimpl
        def session_before_fork(self, event: Any) -> Cancel:
            return Cancel("no")

    from pi_core import SessionManager, SystemMessage, build_plugin_host
    from pi_core.runtime.agent_session import AgentSession
    from scripted import MODEL

    host = build_plugin_host(tmp_path, agent_dir=tmp_path / "agent", autoload=False, plugins=[Veto()])
    session = AgentSession(host=host, session=SessionManager.create(tmp_path, session_dir=tmp_path / "s"),
                           model=MODEL, stream=Script([text("x")]), tools=[],
                           system_prompt=lambda tools: SystemMessage(sections={"preamble": "p"}))
    run(session.prompt("q"))
    file = session.session.session_file
    assert run(session.new_session()) is False and run(session.clone()) is False
    assert session.session.session_file == file


def test_user_bash_output_reaches_the_model_with_the_next_prompt(tmp_path: Path) -> None:
    script = Script([text("seen it")])
    session = make_session(tmp_path, script)
    deltas: list[str] = []
    result = run(session.run_bash("echo from-the-user; exit 4", on_output=deltas.append))
    assert result.output.strip() == "from-the-user" and result.exit_code == 4 and result.cancelled is False
    assert "".join(deltas).strip() == "from-the-user"
    run(session.prompt("what did I run?"))
    request = script.contexts[0].messages
    assert request[0].role == "user" and "echo from-the-user" in request[0].content[0].text
    recorded = [e["message"] for e in entries(session.session.session_file) if e["type"] == "message"]
    assert [m["role"] for m in recorded] == ["bashExecution", "system", "user", "assistant"]
    assert recorded[0]["exitCode"] == 4


def test_excluded_bash_output_is_stored_but_not_sent(tmp_path: Path) -> None:
    script = Script([text("ok")])
    session = make_session(tmp_path, script)
    run(session.run_bash("echo secret", exclude_from_context=True))
    run(session.prompt("hi"))
    assert all("secret" not in str(m.content) for m in script.contexts[0].messages)


def test_session_stats_and_last_text(tmp_path: Path) -> None:
    session = make_session(tmp_path, Script([calls(("echo", {"n": 1})), text("final words")]))
    run(session.prompt("go"))
    from pi_core.modes.rpc.stats import session_stats

    stats = session_stats(session)
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"],
            stats["totalMessages"]) == (1, 2, 1, 1, 5)
    assert set(stats) == {"sessionFile", "sessionId", "userMessages", "assistantMessages", "toolCalls",
                          "toolResults", "totalMessages", "tokens", "cost", "contextUsage"}
    assert stats["contextUsage"]["contextWindow"] == session.model.context_window
    assert session.last_assistant_text() == "final words"


def test_switching_back_restores_the_sessions_model_and_thinking_level(tmp_path: Path) -> None:
    from pi_core.ai.faux import FauxProvider

    first, second = FauxProvider("faux-a", "alpha"), FauxProvider("faux-b", "beta")
    first.enqueue("from alpha")
    second.enqueue("from beta")

    async def scenario() -> Any:
        from pi_core import create_agent_session

        session = await create_agent_session(tmp_path, model=first.model, plugins=[first, second],
                                             thinking_level="high")
        await session.prompt("one")
        path = session.session.session_file
        await session.new_session()
        await session.set_model(second.model)
        session.set_thinking_level("off")
        await session.prompt("two")
        await session.switch_session(path)
        return session

    session = run(scenario())
    assert (session.model.provider, session.model.id, session.thinking_level) == ("faux-a", "alpha", "high")
