"""The hooks pi 0.8x added, and the actionable turn_end / message_end, one test each, driven through a real
session (the faux provider) or the CLI against a local server that speaks the provider's wire protocol."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    AgentStartPatch,
    AssistantMessage,
    Block,
    BoundaryPatch,
    Command,
    CommandContext,
    ExecResult,
    ExtensionContext,
    ResourcePaths,
    TextContent,
    Tool,
    ToolResult,
    TrustDecision,
    UserBashResult,
    build_plugin_host,
    create_agent_session,
    hookimpl,
)
from pi_core.ai.faux import FauxProvider, faux_error, faux_tool_call
from pi_core.testing import FakeProviderServer


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


async def session_with(tmp_path: Path, faux: FauxProvider, *plugins: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("session", "memory")
    return await create_agent_session(tmp_path, model=faux.model, plugins=[faux, *plugins],
                                      agent_dir=tmp_path / "agent", **kwargs)


def texts(request: Any) -> list[str]:
    out = []
    for message in request.context.messages:
        content = message.content
        out.append(content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content))
    return out


# -- project_trust ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "loaded"), [("yes", True), ("no", False)])
def test_project_trust_decides_before_project_code_loads(tmp_path: Path, answer: str, loaded: bool) -> None:
    project, agent = tmp_path / "project", tmp_path / "agent"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "local.py").write_text("from pi_core import hookimpl\n")
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "decider.py").write_text(f'''
from pi_core import TrustDecision, hookimpl

SEEN = []

@hookimpl
def project_trust(event, ctx):
    SEEN.append(str(event.cwd))
    return TrustDecision("{answer}", remember=True)
''')
    host = build_plugin_host(project, agent_dir=agent, autoload=False)
    assert ("project:local" in host.records) is loaded
    trust = json.loads((agent / "trust.json").read_text())
    assert str(project) in json.dumps(trust)


def test_a_pi_style_trust_answer_and_undecided(tmp_path: Path) -> None:
    project, agent = tmp_path / "project", tmp_path / "agent"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "local.py").write_text("from pi_core import hookimpl\n")

    class Undecided:
        @hookimpl
        def project_trust(self, event: Any) -> Any:
            return TrustDecision("undecided")

    class PiStyle:
        @hookimpl
        def project_trust(self, event: Any) -> Any:
            return {"trusted": "yes"}

    ext = tmp_path / "ext.py"
    ext.write_text("from pi_core import hookimpl\n\n@hookimpl\ndef project_trust(event, ctx):\n"
                   "    return {'trusted': 'yes'}\n")
    host = build_plugin_host(project, agent_dir=agent, autoload=False, extension_paths=[ext])
    assert "project:local" in host.records  # -e files take part, as in pi
    assert not (agent / "trust.json").exists()  # not remembered
    order = host.pm.load_order
    assert order["project:local"] < order[f"cli:{ext}"]  # handlers still run project first


# -- settling -----------------------------------------------------------------------------------------


def test_agent_before_settle_appends_and_continues_once(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("first answer", "answer after the reminder")
    order: list[str] = []

    class Reminder:
        done = False

        @hookimpl
        def agent_end(self, event: Any) -> None:
            order.append("agent_end")

        @hookimpl
        def agent_before_settle(self, event: Any, ctx: ExtensionContext) -> Any:
            order.append("before_settle")
            if self.done:
                return None
            self.done = True
            return BoundaryPatch([*event.entries, {"type": "custom_message", "customType": "reminder",
                                                   "content": "Review the diff.", "display": False},
                                  {"type": "custom", "customType": "state", "data": {"n": 1}}], continue_=True)

        @hookimpl
        def agent_settled(self, event: Any, ctx: ExtensionContext) -> None:
            order.append(f"settled aborted={event.aborted} idle={ctx.is_idle()}")

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Reminder())
        await session.prompt("go")
        return session

    session = run(scenario())
    assert order == ["agent_end", "before_settle", "agent_end", "before_settle", "settled aborted=False idle=True"]
    assert texts(faux.requests[1])[-1] == "Review the diff."
    types = [e["type"] for e in session.session.raw_entries()]
    assert "custom_message" in types and "custom" in types
    assert session.last_assistant_text() == "answer after the reminder"


def test_agent_settled_fires_once_per_prompt_after_its_follow_ups_and_when_aborted(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.01)
    faux.enqueue("first answer", "answer to the follow-up", "a long answer that is cut off " * 20,
                 "answer to the settled hook's message")
    order: list[str] = []

    class Watch:
        sent = False

        @hookimpl
        def agent_end(self, event: Any, ctx: ExtensionContext) -> None:
            order.append("agent_end")
            if len(order) == 1:
                ctx.send_user_message("one more thing", deliver_as="followUp")  # the prompt goes on

        @hookimpl
        def agent_settled(self, event: Any, ctx: ExtensionContext) -> None:
            order.append(f"settled aborted={event.aborted} idle={ctx.is_idle()}")
            if event.aborted and not self.sent:
                self.sent = True
                ctx.send_user_message("after the abort")  # starts once every handler returned

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Watch())
        await session.prompt("go")
        order.append("prompt returned")
        task = asyncio.ensure_future(session.prompt("long"))
        while not faux.requests[2:] or session.ctx.is_idle():
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        await session.abort()
        await task
        while order.count("settled aborted=False idle=True") < 2:  # the run the settled hook started
            await asyncio.sleep(0.01)

    run(scenario())
    assert order == ["agent_end", "agent_end", "settled aborted=False idle=True", "prompt returned",
                     "agent_end", "settled aborted=True idle=True", "agent_end", "settled aborted=False idle=True"]
    assert [t[-1] for t in map(texts, faux.requests)] == ["go", "one more thing", "long", "after the abort"]


def test_wait_for_idle_returns_once_the_running_prompt_settled(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.02)
    faux.enqueue("a long answer that streams for a while " * 3, "and the follow-up")
    order: list[str] = []

    class Watch:
        @hookimpl
        def agent_end(self, event: Any, ctx: ExtensionContext) -> None:
            order.append("agent_end")
            if order.count("agent_end") == 1:
                ctx.send_user_message("follow-up", deliver_as="followUp")

        @hookimpl
        def agent_settled(self, event: Any) -> None:
            order.append("settled")

        @hookimpl
        def register_commands(self, register: Any) -> None:
            async def wait(args: str, ctx: CommandContext) -> None:
                order.append(f"command idle={ctx.is_idle()}")
                await ctx.wait_for_idle()
                order.append(f"waited idle={ctx.is_idle()} answers={len(faux.requests)}")
                await ctx.wait_for_idle()  # idle already: returns at once
                order.append("again")

            register(Command("wait", wait))

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Watch())
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.is_streaming:
            await asyncio.sleep(0.005)
        await session.prompt("/wait", streaming_behavior="steer")
        await task

    run(scenario())
    assert order == ["command idle=False", "agent_end", "agent_end", "settled", "waited idle=True answers=2",
                     "again"]


def test_a_bad_boundary_proposal_is_reported_and_writes_nothing(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("answer")

    class Bad:
        @hookimpl
        def agent_before_settle(self, event: Any) -> Any:
            return {"entries": [{"type": "custom", "customType": "ok"}, {"type": "nonsense"}], "continue": True}

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Bad())
        await session.prompt("go")
        return session

    session = run(scenario())
    assert len(faux.requests) == 1
    assert not [e for e in session.session.raw_entries() if e["type"] == "custom"]
    assert "nonsense" in str(session.host.hook_errors[0].error)


def test_turn_end_can_hide_an_answer_and_ask_again(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("a bad answer", "a better answer")
    seen: list[Any] = []

    class Redo:
        done = False

        @hookimpl
        def turn_end(self, event: Any) -> Any:
            seen.append((event.outcome, event.message_entry_id is not None))
            if self.done:
                return None
            self.done = True
            return {"entries": [{"type": "context_edit", "targetId": event.message_entry_id, "replacement": None},
                                {"type": "custom_message", "customType": "redo", "content": "Answer again.",
                                 "display": False}], "continue": True}

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Redo())
        await session.prompt("question")
        return session

    session = run(scenario())
    assert seen == [("completed", True), ("completed", True)]
    second = texts(faux.requests[1])
    assert "a bad answer" not in second and second[-1] == "Answer again."
    assert session.last_assistant_text() == "a better answer"


def test_message_end_can_replace_a_message_of_the_same_role(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("secret: hunter2", "fine")

    class Redact:
        @hookimpl
        def message_end(self, event: Any) -> Any:
            message = event.message
            if isinstance(message, AssistantMessage) and "hunter2" in message.text():
                return message.model_copy(update={"content": [TextContent(text="secret: [redacted]")]})
            if getattr(message, "role", None) == "user" and "wrong" in str(message.content):
                return AssistantMessage(content=[TextContent(text="not allowed")])  # another role: refused
            return None

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Redact())
        await session.prompt("tell me")
        await session.prompt("wrong role")
        return session

    session = run(scenario())
    stored = [e["message"] for e in session.session.raw_entries() if e["type"] == "message"]
    assert stored[2]["content"][0]["text"] == "secret: [redacted]"
    assert "secret: [redacted]" in texts(faux.requests[1])
    assert any("wrong role" in str(m.get("content")) for m in stored if m["role"] == "user")
    assert "must be a user message" in str(session.host.hook_errors[0].error)


# -- the user's shell ---------------------------------------------------------------------------------


class RemoteShell:
    def __init__(self) -> None:
        self.ran: list[tuple[str, Path]] = []

    async def exec(self, command: str, cwd: Path, *, on_data: Any, signal: Any, timeout: Any, env: Any) -> ExecResult:
        self.ran.append((command, cwd))
        on_data(f"remote ran: {command}\n".encode())
        return ExecResult(3)


def test_user_bash_runs_through_operations_or_takes_a_result(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("ok")
    remote = RemoteShell()

    class Router:
        @hookimpl
        def user_bash(self, event: Any) -> Any:
            if event.command.startswith("ssh:"):
                return UserBashResult(operations=remote)
            if event.command == "fake":
                return {"result": {"output": "made up", "exitCode": 0, "cancelled": False}}
            return None

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Router())
        deltas: list[str] = []
        remote_result = await session.run_bash("ssh:uname", on_output=deltas.append)
        fake_result = await session.run_bash("fake")
        local = await session.run_bash("echo local")
        await session.prompt("what ran?")
        return remote_result, fake_result, local, deltas

    remote_result, fake_result, local, deltas = run(scenario())
    assert (remote_result.output.strip(), remote_result.exit_code) == ("remote ran: ssh:uname", 3)
    assert deltas == ["remote ran: ssh:uname\n"] and remote.ran == [("ssh:uname", tmp_path)]
    assert (fake_result.output, fake_result.exit_code) == ("made up", 0)
    assert local.output.strip() == "local"
    seen = "\n".join(texts(faux.requests[0]))
    assert "remote ran: ssh:uname" in seen and "made up" in seen


# -- provider traffic ---------------------------------------------------------------------------------

TRAFFIC_EXT = '''
import json
from pi_core import hookimpl

LOG = {log!r}

def note(kind, value):
    with open(LOG, "a") as f:
        f.write(json.dumps([kind, value]) + "\\n")

@hookimpl
def before_provider_headers(event, ctx):
    event.headers["x-session"] = "abc"
    event.headers["user-agent"] = None

@hookimpl
def after_provider_response(event, ctx):
    note("response", event.status)

@hookimpl
def provider_stream_event(event, ctx):
    note("event", [event.provider, event.model, sorted(event.data)])
'''


def test_provider_header_response_and_stream_hooks_see_the_http_traffic(tmp_path: Path) -> None:
    agent, log = tmp_path / "agent", tmp_path / "log.jsonl"
    ext = tmp_path / "traffic.py"
    ext.write_text(TRAFFIC_EXT.format(log=str(log)))
    with FakeProviderServer([{"text": "hello there"}]) as server:
        agent.mkdir()
        server.write_models_json(agent)
        result = subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                                 "--no-session", "-e", str(ext), "-p", "hi"], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["x-session"] == "abc" and "user-agent" not in headers
    notes = [json.loads(line) for line in log.read_text().splitlines()]
    assert notes[0] == ["response", 200]
    events = [n[1] for n in notes if n[0] == "event"]
    assert events and all(e[:2] == ["fake", "fake-model"] and "choices" in e[2] for e in events)


# -- thinking, failed compaction --------------------------------------------------------------------------


def test_thinking_level_select(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    seen: list[tuple[str, str | None]] = []

    class Watch:
        @hookimpl
        def thinking_level_select(self, event: Any) -> None:
            seen.append((event.level, event.previous_level))

        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(Command("think", lambda args, ctx: ctx.set_thinking_level(args)))

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Watch(), thinking_level="low")
        await session.prompt("/think high")
        await asyncio.sleep(0.05)

    run(scenario())
    assert seen == [("high", "low")]


def test_session_compact_failed(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("one", "two", "three", faux_error("400: the summary request was refused", status=400))
    seen: list[Any] = []

    class Watch:
        @hookimpl
        def session_compact_failed(self, event: Any) -> None:
            seen.append((event.reason, event.aborted, event.error_message))

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Watch(), settings={"compaction": {"keep_recent_tokens": 1}})
        for text in ("a", "b", "c"):
            await session.prompt(text)
        with pytest.raises(Exception, match="refused"):
            await session.compact()

    run(scenario())
    assert seen and seen[0][:2] == ("manual", False) and "refused" in seen[0][2]


# -- resources_discover ---------------------------------------------------------------------------------


def test_resources_discover_adds_skills_templates_and_themes(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    (extra / "skills" / "deploy").mkdir(parents=True)
    (extra / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy it\n---\nSteps")
    (extra / "prompts").mkdir()
    (extra / "prompts" / "ship.md").write_text("Ship $1 today.")
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("ok")
    reasons: list[str] = []

    class Resources:
        @hookimpl
        def resources_discover(self, event: Any) -> ResourcePaths:
            reasons.append(event.reason)
            return ResourcePaths(skill_paths=[extra / "skills"], prompt_paths=[str(extra / "prompts")],
                                 theme_paths=["themes"])

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Resources())
        await session.prompt("/ship v2")
        return session

    session = run(scenario())
    assert reasons == ["startup"]
    assert "deploy" in faux.requests[0].context.system_prompt
    assert texts(faux.requests[0])[-1] == "Ship v2 today."
    assert session.theme_paths == [tmp_path / "themes"]


# -- ending a run from a tool -----------------------------------------------------------------------------


def test_a_terminating_tool_result_ends_the_run(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue([faux_tool_call("answer", {"value": 42})], "never asked for")

    class Structured:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Tool(name="answer", description="the final answer", parameters={"type": "object"},
                          execute=lambda params, ctx: ToolResult.text("done", details=params, terminate=True)))

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Structured())
        await session.prompt("answer")
        return session

    session = run(scenario())
    assert len(faux.requests) == 1
    assert session.messages[-1].role == "toolResult" and session.messages[-1].details == {"value": 42}


@pytest.mark.parametrize("answer", [Block("no deploys today", terminate=True),
                                    {"block": True, "reason": "no deploys today", "terminate": True}])
def test_a_block_may_end_the_run(tmp_path: Path, answer: Any) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue([faux_tool_call("bash", {"command": "deploy"})], "never asked for")

    class Gate:
        @hookimpl
        def before_tool_call(self, event: Any) -> Any:
            return answer

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, Gate())
        await session.prompt("deploy")
        return session

    session = run(scenario())
    assert len(faux.requests) == 1
    result = session.messages[-1]
    assert result.is_error and result.content[0].text == "no deploys today"


# -- pi-style answers ------------------------------------------------------------------------------------


def test_pi_style_dicts_are_understood_and_odd_answers_never_open_a_gate(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue([faux_tool_call("bash", {"command": "ls"}), faux_tool_call("bash", {"command": "rm -rf /"})],
                 "done", "q2 answer")

    class PiStyle:
        @hookimpl
        def before_tool_call(self, event: Any) -> Any:
            if "rm" in event.arguments["command"]:
                return {"block": True, "reason": "not that"}
            return {"bloc": True}  # a typo: blocks (fail closed), never lets the call through

        @hookimpl
        def input(self, event: Any) -> Any:
            return {"action": "transform", "text": event.text.upper()}

        @hookimpl
        def session_before_fork(self, event: Any) -> Any:
            return {"cancel": True}

    async def scenario() -> Any:
        session = await session_with(tmp_path, faux, PiStyle(), session="new")
        await session.prompt("q1")
        await session.prompt("q2")
        return session, await session.fork(session.get_fork_messages()[0].entry_id)

    session, (cancelled, _) = run(scenario())
    results = [m for m in session.messages if m.role == "toolResult"]
    assert [r.is_error for r in results] == [True, True]
    assert results[1].content[0].text == "not that"
    assert "blocked because plugin" in results[0].content[0].text and "bloc" in results[0].content[0].text
    assert texts(faux.requests[0])[-1] == "Q1" and cancelled is True


def test_pi_event_names_are_suggested(tmp_path: Path) -> None:
    class PiNames:
        __name__ = "pi-names"

        @hookimpl
        def tool_call(self, event: Any) -> None:
            return None

    host = build_plugin_host(tmp_path, agent_dir=tmp_path / "agent", autoload=False, plugins=[PiNames()])
    assert "did you mean 'before_tool_call'?" in host.records["sdk:pi-names"].error


# -- before_agent_start: system prompt options (pi's prompt-customizer) -----------------------------------


def test_before_agent_start_sections_rebuild_the_prompt_unless_it_was_set(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("one", "two")
    seen: list[list[str]] = []

    class Customizer:
        @hookimpl
        def before_agent_start(self, event: Any) -> Any:
            options = event.system_prompt_options
            seen.append([t.name for t in options.tools])
            options.sections["tool_guidance"] = "Read before you edit."
            if event.prompt == "override":
                return AgentStartPatch(system_prompt="Only this.")
            return None

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Customizer())
        await session.prompt("hi")
        await session.prompt("override")

    run(scenario())
    first, second = (r.context.system_prompt for r in faux.requests)
    assert "<tool_guidance>\nRead before you edit.\n</tool_guidance>" in first
    assert first.index("<cwd>") < first.index("<tool_guidance>")  # named sections come after cwd
    assert second == "Only this."  # a prompt set by a handler wins over the options
    assert seen[0] == ["read", "bash", "edit", "write"]


def test_a_later_before_agent_start_handler_sees_the_prompt_rebuilt_from_earlier_sections(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("one", "two")
    seen: list[tuple[str, str]] = []

    class Sections:
        __name__ = "a-sections"

        @hookimpl
        def before_agent_start(self, event: Any) -> None:
            event.system_prompt_options.sections["house_rules"] = "Tabs, never spaces."

    class Reader:
        __name__ = "b-reader"

        @hookimpl
        def before_agent_start(self, event: Any, ctx: Any) -> Any:
            seen.append((event.system_prompt, ctx.get_system_prompt()))
            if event.prompt == "append":
                return AgentStartPatch(system_prompt=event.system_prompt + "\n\nAppended by b.")
            return None

    async def scenario() -> None:
        session = await session_with(tmp_path, faux, Sections(), Reader())
        await session.prompt("look")
        await session.prompt("append")

    run(scenario())
    rule = "<house_rules>\nTabs, never spaces.\n</house_rules>"
    for event_prompt, ctx_prompt in seen:
        assert rule in event_prompt and ctx_prompt == event_prompt
    first, second = (r.context.system_prompt for r in faux.requests)
    assert rule in first and "Appended by b." not in first
    assert rule in second and second.endswith("Appended by b.")  # b built on a's sections, not on the base prompt
