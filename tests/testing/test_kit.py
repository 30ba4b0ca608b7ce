"""The plugin author's kit, used the way a plugin's own tests use it (the fixtures come from the
``pytest11`` entry point, not from a conftest)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest

from pi_core import Block, Tool, ToolResult, hookimpl
from pi_core.testing import FakeProviderServer, PiTestSession, error, text, thinking, tool_call


class Shouter:
    """A plugin object: one tool, one gate."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        async def run(params: dict[str, Any], ctx: Any) -> ToolResult:
            return ToolResult.text(params["text"].upper())

        register(Tool(name="shout", description="Upper-case text.", execute=run,
                      parameters={"type": "object", "properties": {"text": {"type": "string"}},
                                  "required": ["text"]}))

    @hookimpl
    def before_tool_call(self, event: Any) -> Block | None:
        if event.tool_name == "shout" and "secret" in event.arguments.get("text", ""):
            return Block("secrets are not shouted")
        return None


def test_pi_session_runs_a_scripted_tool_turn(pi_session: PiTestSession) -> None:
    pi_session.script([thinking("The user wants it loud."), tool_call("shout", {"text": "hi"})], "Done: HI")
    pi_session.start(plugins=[Shouter()])
    assert pi_session.prompt("shout hi") == "Done: HI"
    call = pi_session.assert_tool_called("shout", {"text": "hi"})
    result = pi_session.assert_tool_result("shout", contains="HI", is_error=False)
    assert result.tool_call_id == call.id
    # what the model received: the tool's declaration, then the tool result in the second request
    assert "shout" in [t.name for t in pi_session.requests[0].context.tools]
    pi_session.assert_model_saw("shout hi", request=0)
    pi_session.assert_model_saw("HI", request=1)
    assert pi_session.assert_entry("model_change", provider="faux-script")["modelId"] == "faux-1"
    roles = [e["message"]["role"] for e in pi_session.entries("message") if e["message"]["role"] != "system"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    with pytest.raises(AssertionError, match="no blocked call"):
        pi_session.assert_blocked("shout")  # it ran
    pi_session.assert_not_blocked("shout")
    with pytest.raises(AssertionError, match="no call of tool 'read'"):
        pi_session.assert_tool_called("read")
    with pytest.raises(AssertionError, match="not"):
        pi_session.assert_tool_called("shout", {"text": "other"})


def test_blocked_calls_and_error_turns(pi_session: PiTestSession) -> None:
    pi_session.script(tool_call("shout", {"text": "my secret"}), "Sorry.")
    pi_session.start(plugins=[Shouter()], settings={"retry": {"enabled": False}})
    pi_session.prompt("shout my secret")
    pi_session.assert_blocked("shout", reason="secrets are not shouted")
    with pytest.raises(AssertionError, match="never ran"):
        pi_session.assert_not_blocked("shout")

    pi_session.script(error("invalid request: bad thing", status=400))
    pi_session.prompt("again")
    last = pi_session.assistant_messages[-1]
    assert last.stop_reason == "error" and "bad thing" in (last.error_message or "")


def test_installed_plugins_load_in_pi_session(pi_session: PiTestSession, pi_project: Any) -> None:
    # a project extension (the session trusts the project by default, as a test wants)
    ext = pi_project / ".pi" / "extensions" / "marker.py"
    ext.parent.mkdir(parents=True)
    ext.write_text("from pi_core import UserMessage, hookimpl\n\n@hookimpl\ndef context(event):\n"
                   "    return [*event.messages, UserMessage(content='[marked by the project]')]\n")
    pi_session.script(text("ok"))
    pi_session.prompt("hello")
    pi_session.assert_model_saw("[marked by the project]")
    stored = [e["message"]["role"] for e in pi_session.entries("message")]
    assert stored.count("user") == 1  # a per-request change, not the stored history


def test_async_tests_use_the_a_methods(pi_project: Any, pi_agent_dir: Any) -> None:
    async def main() -> None:
        harness = PiTestSession(pi_project, pi_agent_dir)
        harness.script("from async")
        with pytest.raises(RuntimeError, match="aprompt"):
            harness.prompt("no")
        assert await harness.aprompt("yes") == "from async"
        await harness.aclose()

    asyncio.run(main())


def test_run_pi_talks_to_the_fake_server(fake_provider_server: FakeProviderServer, run_pi: Any) -> None:
    fake_provider_server.script(tool_call("ls", {}), "Listed.")
    result = run_pi("-p", "list files")
    assert result.ok, result
    assert result.stdout.strip() == "Listed."
    first, second = fake_provider_server.requests
    assert first.path == "/v1/chat/completions" and first.body["model"] == "fake-model"
    assert "list files" in json.dumps(first.body["messages"][-1])
    assert second.body["messages"][-1]["role"] == "tool"

    fake_provider_server.script("as json")
    events = run_pi("--mode", "json", "hi").events_of("agent_end")
    assert len(events) == 1


@pytest.mark.parametrize("provider", ["fake-anthropic", "fake-google"])
def test_fake_server_speaks_anthropic_and_google(fake_provider_server: FakeProviderServer, run_pi: Any,
                                                 provider: str) -> None:
    fake_provider_server.script([thinking("hmm"), tool_call("ls", {"path": "."})], "Seen it.")
    result = run_pi("--provider", provider, "--model", "fake-model", "-p", "look")
    assert result.ok, result
    assert result.stdout.strip() == "Seen it."
    paths = [r.path for r in fake_provider_server.requests]
    expected = "/v1/messages" if provider == "fake-anthropic" else "/v1beta/models/fake-model:streamGenerateContent"
    assert all(p.startswith(expected) for p in paths) and len(paths) == 2


def test_fake_server_error_turns_and_exhaustion(fake_provider_server: FakeProviderServer, run_pi: Any) -> None:
    fake_provider_server.script({"error": {"status": 400, "message": "context too weird"}})
    failed = run_pi("-p", "x")
    assert failed.returncode == 1 and "context too weird" in failed.stderr
    exhausted = run_pi("-p", "y")
    assert exhausted.returncode == 1 and "script exhausted" in exhausted.stderr


def test_the_kit_is_not_imported_by_pi(tmp_path: Any) -> None:
    code = "import sys, pi_core.cli; pi_core.cli.run(['--help']); print(sorted(m for m in sys.modules if m.startswith('pi_core.testing')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_fixtures_come_from_the_entry_point() -> None:
    from importlib import metadata

    points = [ep for ep in metadata.entry_points(group="pytest11") if ep.value == "pi_core.testing.plugin"]
    assert [ep.name for ep in points] == ["pi"]


def test_recorded_requests_read_like_dicts(fake_provider_server: FakeProviderServer, run_pi: Any) -> None:
    fake_provider_server.script("ok")
    run_pi("-p", "z")
    request = fake_provider_server.requests[0]
    assert request["body"] == request.body and json.dumps(request["headers"])
    with pytest.raises(KeyError):
        request["nope"]
