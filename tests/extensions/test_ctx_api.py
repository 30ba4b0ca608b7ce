"""The ``ctx`` every hook gets: one test per state member and method, through a real SDK session with the
scripted ``faux`` provider (requests, session entries and hook calls are what is asserted)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    AgentStartPatch,
    Command,
    CommandContext,
    ExtensionContext,
    Tool,
    ToolResult,
    UserMessage,
    create_agent_session,
    hookimpl,
)
from pi_core.ai import Context, ProviderConfig
from pi_core.ai.faux import FauxProvider, faux_tool_call
from pi_core.testing import FakeProviderServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import RpcProcess  # noqa: E402


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


async def settle(session: Any, rounds: int = 50) -> None:
    """Let background work started by the API (runs, compactions, hooks) finish."""
    for _ in range(rounds):
        await asyncio.sleep(0.01)
        await session.wait_for_idle()


def entries(session: Any) -> list[dict[str, Any]]:
    return list(session.session.raw_entries())


def command(name: str, handler: Any) -> Any:
    class Plugin:
        __name__ = f"cmd-{name}"

        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(Command(name, handler, f"the {name} command"))

    return Plugin()


def user_texts(request: Any) -> list[str]:
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(b.text for b in content if b.type == "text")

    return [text(m.content) for m in request.context.messages if m.role == "user"]


# -- state -----------------------------------------------------------------------------------------


def test_thinking_level_can_be_read_and_set_and_is_clamped(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    plain = FauxProvider("faux-p", "plain", reasoning=False)
    seen: dict[str, Any] = {}

    async def handler(args: str, ctx: CommandContext) -> None:
        seen["before"] = (ctx.thinking_level, ctx.get_thinking_level())
        seen["set"] = ctx.set_thinking_level("high")
        seen["after"] = ctx.thinking_level
        ctx.set_model(plain.model)
        seen["clamped"] = ctx.thinking_level

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, plain, command("t", handler)],
                                             thinking_level="low", agent_dir=tmp_path / "agent")
        await session.prompt("/t")
        await settle(session)
        return session

    session = run(scenario())
    assert seen == {"before": ("low", "low"), "set": "high", "after": "high", "clamped": "off"}
    levels = [e["thinkingLevel"] for e in entries(session) if e["type"] == "thinking_level_change"]
    assert levels == ["low", "high", "off"]


def test_scoped_models_are_the_sessions(tmp_path: Path) -> None:
    a, b = FauxProvider("faux-a", "alpha"), FauxProvider("faux-b", "beta")
    seen: list[list[str]] = []

    class Watch:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append([f"{m.provider}/{m.id}" for m in ctx.scoped_models])

    run(create_agent_session(tmp_path, model=a.model, plugins=[a, b, Watch()], scoped_models=["faux-b/beta", a.model],
                             session="memory", agent_dir=tmp_path / "agent"))
    assert seen == [["faux-b/beta", "faux-a/alpha"]]


def test_signal_is_the_running_turns_and_none_when_idle(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue([faux_tool_call("probe", {})], "done")
    seen: dict[str, Any] = {}

    def probe(params: dict[str, Any], tctx: Any) -> ToolResult:
        seen["tool"] = tctx.session.signal
        seen["same"] = tctx.session.signal is tctx.signal
        return ToolResult.text("ok")

    class Watch:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Tool(name="probe", description="p", parameters={"type": "object"}, execute=probe))

        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen["start"] = ctx.signal

        @hookimpl
        def turn_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.setdefault("turn", ctx.signal)

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Watch()], session="memory",
                                             agent_dir=tmp_path / "agent")
        await session.prompt("go")
        seen["after"] = session.ctx.signal

    run(scenario())
    assert seen["start"] is None and seen["after"] is None
    assert seen["turn"] is not None and seen["tool"] is not None and seen["same"] is True


def test_model_registry_is_the_sessions_own(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    helper = FauxProvider("faux-helper", "helper")
    helper.enqueue("a summary from the helper")
    seen: dict[str, Any] = {}

    async def handler(args: str, ctx: CommandContext) -> None:
        registry = ctx.model_registry
        model = registry.find("faux-helper", "helper")
        seen["found"] = model is not None and model.id
        seen["missing"] = registry.find("faux-helper", "nope")
        seen["available"] = sorted(f"{m.provider}/{m.id}" for m in registry.get_available()
                                   if m.provider.startswith("faux-"))
        seen["auth"] = registry.has_configured_auth(model)
        seen["provider_auth"] = await registry.get_provider_auth("faux-helper")
        answer = await registry.complete(model, Context(messages=[UserMessage(content="summarize")]),
                                         max_tokens=100, reasoning_effort="low")
        seen["answer"] = (answer.stop_reason, answer.text())

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, session="memory",
                                             plugins=[faux, command("r", handler)], agent_dir=tmp_path / "agent")
        session.models.register_provider(helper.api_provider)  # an API only this session knows
        session.models.register_provider(helper.provider_config)
        await session.prompt("/r")

    run(scenario())
    assert seen["found"] == "helper" and seen["missing"] is None and seen["auth"] is True
    assert seen["available"] == ["faux-a/alpha", "faux-helper/helper"]
    assert seen["provider_auth"] is None or seen["provider_auth"].api_key is None  # faux needs no key
    assert seen["answer"] == ("stop", "a summary from the helper")
    assert helper.requests[0].options.max_tokens == 100 and helper.requests[0].options.reasoning == "low"


def test_register_and_unregister_a_provider_at_run_time(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    late = FauxProvider("faux-late", "late-model")
    late.enqueue("answer from the late provider")
    seen: dict[str, Any] = {}

    async def add(args: str, ctx: CommandContext) -> None:
        ctx.register_provider(late.api_provider)
        ctx.register_provider(ProviderConfig(name="faux-late", api=late.api, models=list(late.models),
                                             requires_api_key=False))
        seen["switched"] = ctx.set_model("faux-late/late-model")

    async def remove(args: str, ctx: CommandContext) -> None:
        seen["removed"] = ctx.unregister_provider("faux-late")
        seen["after"] = ctx.model_registry.find("faux-late", "late-model")

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, session="memory", agent_dir=tmp_path / "a",
                                             plugins=[faux, command("add", add), command("remove", remove)])
        await session.prompt("/add")
        await session.prompt("hello")
        seen["last"] = session.last_assistant_text()
        await session.prompt("/remove")

    run(scenario())
    assert seen["switched"] is True and seen["last"] == "answer from the late provider"
    assert seen["removed"] is True and seen["after"] is None


def test_is_project_trusted_follows_the_trust_decision(tmp_path: Path) -> None:
    seen: list[bool] = []

    class Watch:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.is_project_trusted())

    faux = FauxProvider("faux-a", "alpha")
    for approve in (True, False):
        run(create_agent_session(tmp_path, model=faux.model, plugins=[faux, Watch()], approve=approve,
                                 session="memory", agent_dir=tmp_path / "agent"))
    assert seen == [True, False]


def test_has_pending_messages_while_steering_waits(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue([faux_tool_call("wait", {})], "done", "steered answer")
    seen: list[bool] = []

    def wait(params: dict[str, Any], tctx: Any) -> ToolResult:
        seen.append(tctx.session.has_pending_messages())
        tctx.session.send_message("a steering message")
        seen.append(tctx.session.has_pending_messages())
        return ToolResult.text("ok")

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Tool(name="wait", description="w", parameters={"type": "object"}, execute=wait))

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Tools()], session="memory",
                                             agent_dir=tmp_path / "agent")
        await session.prompt("go")
        return session.ctx.has_pending_messages()

    assert run(scenario()) is False
    assert seen == [False, True]
    assert "a steering message" in user_texts(faux.requests[1])


def test_get_context_usage_reports_the_last_answers_tokens(tmp_path: Path) -> None:
    from pi_core.ai.faux import FauxTurn, faux_text

    faux = FauxProvider("faux-a", "alpha", context_window=1000)
    faux.enqueue(FauxTurn([faux_text("hi")], usage={"input": 150, "output": 50}))
    seen: list[Any] = []

    class Watch:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.get_context_usage())

        @hookimpl
        def agent_end(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.get_context_usage())

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Watch()], session="memory",
                                             agent_dir=tmp_path / "agent")
        await session.prompt("go")

    run(scenario())
    before, after = seen
    assert before.tokens is None and before.context_window == 1000 and before.percent is None
    assert after.tokens == 200 and after.percent == pytest.approx(20.0)


def test_compact_returns_at_once_and_reports_completion_or_failure(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", responder=lambda context, options: "the summary")
    faux.enqueue("one", "two", "three")
    seen: list[Any] = []

    async def handler(args: str, ctx: CommandContext) -> None:
        seen.append(ctx.compact(custom_instructions="keep names", on_complete=lambda r: seen.append(r.summary),
                                on_error=lambda e: seen.append(f"error: {e}")))

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, command("c", handler)],
                                             agent_dir=tmp_path / "agent", settings={"compaction": {
                                                 "enabled": True, "reserve_tokens": 100, "keep_recent_tokens": 1}})
        for text in ("a", "b", "c"):
            await session.prompt(text)
        await session.prompt("/c")
        await settle(session)
        await session.prompt("/c")  # right after a compaction: nothing to compact
        await settle(session)
        return session

    session = run(scenario())
    assert seen[0] is None and seen[2] is None  # compact() itself returns nothing, at once
    assert "the summary" in seen[1] and seen[3] == "error: Already compacted"
    assert "keep names" in str(faux.requests[3].context.messages[-1].content)
    assert [e["type"] for e in entries(session)].count("compaction") == 1


def test_get_system_prompt_and_its_chain_in_before_agent_start(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("ok")
    seen: list[str] = []

    class First:
        @hookimpl
        def before_agent_start(self, event: Any, ctx: ExtensionContext) -> AgentStartPatch:
            return AgentStartPatch(system_prompt=ctx.get_system_prompt() + "\nFIRST")

    class Second:
        @hookimpl
        def before_agent_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.get_system_prompt())

        @hookimpl
        def agent_end(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.get_system_prompt())

    run(_prompt_once(tmp_path, faux, [First(), Second()], "go"))
    assert seen[0].endswith("\nFIRST") and seen[1].endswith("\nFIRST")
    assert faux.requests[0].context.system_prompt.endswith("\nFIRST")


async def _prompt_once(tmp_path: Path, faux: FauxProvider, plugins: list[Any], text: str, **kwargs: Any) -> Any:
    session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, *plugins], session="memory",
                                         agent_dir=tmp_path / "agent", **kwargs)
    await session.prompt(text)
    await settle(session)
    return session


def test_get_settings_is_the_sessions(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    seen: list[Any] = []

    class Watch:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.get_settings().retry.max_retries)

    run(create_agent_session(tmp_path, model=faux.model, plugins=[faux, Watch()], session="memory",
                             agent_dir=tmp_path / "agent", settings={"retry": {"max_retries": 7}}))
    assert seen == [7]


# -- messages, entries, names ------------------------------------------------------------------------


def test_send_user_message_runs_through_input_and_before_agent_start(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.01)
    faux.enqueue("first answer", "second answer")
    seen: list[Any] = []

    class Watch:
        @hookimpl
        def input(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(("input", event.text, event.source, event.streaming_behavior))

        @hookimpl
        def before_agent_start(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(("start", event.prompt))

    async def send(args: str, ctx: CommandContext) -> None:
        ctx.send_user_message("/not-a-template " + args)

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Watch(), command("send", send)],
                                             session="memory", agent_dir=tmp_path / "agent")
        await session.prompt("/send please")
        await settle(session)
        task = asyncio.ensure_future(session.prompt("again"))
        while not session.is_streaming:
            await asyncio.sleep(0.005)
        with pytest.raises(RuntimeError, match="deliver_as"):
            session.ctx.send_user_message("too early")
        session.ctx.send_user_message("queued", deliver_as="followUp")
        await task
        await settle(session)

    run(scenario())
    assert ("input", "/not-a-template please", "extension", None) in seen
    assert ("start", "/not-a-template please") in seen
    assert ("input", "queued", "extension", "followUp") in seen
    assert user_texts(faux.requests[0]) == ["/not-a-template please"]


def test_set_label_and_get_session_name(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("answer")
    seen: list[Any] = []

    async def mark(args: str, ctx: CommandContext) -> None:
        leaf = ctx.session.get_leaf_id()
        assert leaf is not None
        ctx.set_label(leaf, "checkpoint")
        ctx.set_session_name("labelled")
        seen.append(ctx.get_session_name())
        seen.append(ctx.session.get_label(leaf))

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, command("mark", mark)],
                                             agent_dir=tmp_path / "agent")
        await session.prompt("hi")
        await session.prompt("/mark")
        return session

    session = run(scenario())
    assert seen == ["labelled", "checkpoint"]
    label = next(e for e in entries(session) if e["type"] == "label")
    assert label["label"] == "checkpoint"


def test_get_commands_lists_plugin_commands_templates_and_skills(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview it")
    skill = tmp_path / "agent" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy the app\n---\nSteps")
    faux = FauxProvider("faux-a", "alpha")
    seen: list[Any] = []

    async def handler(args: str, ctx: CommandContext) -> None:
        seen.extend(ctx.get_commands())

    async def scenario() -> None:
        session = await create_agent_session(project, model=faux.model, plugins=[faux, command("list", handler)],
                                             session="memory", agent_dir=tmp_path / "agent", approve=True)
        await session.prompt("/list")

    run(scenario())
    by_name = {c.name: c for c in seen}
    assert by_name["list"].source == "extension" and by_name["list"].description == "the list command"
    assert by_name["review"].source == "prompt" and by_name["review"].description == "Review the diff"
    assert by_name["review"].source_info.path == project / ".pi" / "prompts" / "review.md"
    assert by_name["skill:deploy"].source == "skill" and by_name["skill:deploy"].source_info.path is not None
    assert [c.source for c in seen] == sorted((c.source for c in seen), key=["extension", "prompt", "skill"].index)


def test_exec_honours_signal_and_max_buffer(tmp_path: Path) -> None:
    from pi_core import AbortController

    faux = FauxProvider("faux-a", "alpha")
    seen: dict[str, Any] = {}

    async def handler(args: str, ctx: CommandContext) -> None:
        big = await ctx.exec("python3", ["-c", "print('x' * 5000)"], max_buffer=100)
        seen["big"] = len(big.stdout)
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.3, controller.abort)
        slow = await ctx.exec("sleep", ["20"], signal=controller.signal, timeout=25)
        seen["aborted"] = (slow.killed or slow.cancelled, slow.exit_code)

    run(_prompt_once(tmp_path, faux, [command("x", handler)], "/x"))
    assert seen["big"] <= 100
    assert seen["aborted"][0] is True


def test_events_bus_between_plugins(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    got: list[Any] = []

    class Listener:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            async def later(data: Any) -> None:
                got.append(("async", data))

            def broken(data: Any) -> None:
                raise ValueError("listener bug")

            self.off = ctx.events.on("greeting", lambda data: got.append(("sync", data)))
            ctx.events.on("greeting", broken)
            ctx.events.on("greeting", later)

    listener = Listener()

    async def emit(args: str, ctx: CommandContext) -> None:
        ctx.events.emit("greeting", {"text": args})
        listener.off()
        ctx.events.emit("greeting", "second")
        ctx.events.emit("nobody-listens", 1)

    session = run(_prompt_once(tmp_path, faux, [listener, command("emit", emit)], "/emit hello"))
    assert got == [("sync", {"text": "hello"}), ("async", {"text": "hello"}), ("async", "second")]
    assert [str(e.error) for e in session.host.hook_errors] == ["listener bug", "listener bug"]


# -- model -------------------------------------------------------------------------------------------


def test_set_model_takes_effect_before_it_returns(tmp_path: Path) -> None:
    a, b = FauxProvider("faux-a", "alpha"), FauxProvider("faux-b", "beta")
    b.enqueue("answer from beta")
    seen: list[Any] = []

    class Switch:
        @hookimpl
        def input(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(ctx.set_model("faux-b/beta"))
            seen.append(ctx.model.id if ctx.model else None)

        @hookimpl
        def model_select(self, event: Any, ctx: ExtensionContext) -> None:
            seen.append(("selected", event.model.id, event.previous_model.id))

    session = run(_prompt_once(tmp_path, a, [b, Switch()], "hi"))
    # model_select is heard in the background: before or after the input handler goes on
    assert [s for s in seen if not isinstance(s, tuple)] == [True, "beta"] and ("selected", "beta", "alpha") in seen
    assert a.requests == [] and session.last_assistant_text() == "answer from beta"


# -- commands -----------------------------------------------------------------------------------------


def test_command_context_new_session_with_setup_keeps_ctx_working(tmp_path: Path) -> None:
    from pi_core import UserMessage as User

    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("before", "after")
    seen: dict[str, Any] = {}

    async def handoff(args: str, ctx: CommandContext) -> None:
        parent = ctx.session.session_file
        result = await ctx.new_session(parent_session=parent,
                                       setup=lambda manager: manager.append_message(User(content="context: kiwi")))
        seen["cancelled"] = result.cancelled
        seen["file"] = ctx.session.session_file
        ctx.send_user_message("continue")

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, command("handoff", handoff)],
                                             agent_dir=tmp_path / "agent")
        await session.prompt("first")
        seen["first"] = session.session.session_file
        await session.prompt("/handoff")
        await settle(session)
        return session

    session = run(scenario())
    assert seen["cancelled"] is False and seen["file"] != seen["first"]
    header = json.loads(seen["file"].read_text().splitlines()[0])
    assert header["parentSession"] == str(seen["first"])
    assert user_texts(faux.requests[1]) == ["context: kiwi", "continue"]
    assert session.session.session_file == seen["file"]


def test_command_context_fork_switch_and_navigate(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("a1", "a2")
    seen: dict[str, Any] = {}

    async def moves(args: str, ctx: CommandContext) -> None:
        original = ctx.session.session_file
        users = [e for e in ctx.session.get_raw_branch() if e.get("type") == "message"
                 and e["message"]["role"] == "user"]
        nav = await ctx.navigate_tree(users[1]["id"])
        seen["nav"] = (nav.cancelled, nav.editor_text)
        fork = await ctx.fork(users[0]["id"])
        seen["fork"] = (fork.cancelled, fork.text, ctx.session.session_file != original)
        back = await ctx.switch_session(original)
        seen["switch"] = (back.cancelled, ctx.session.session_file == original)
        await ctx.wait_for_idle()

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, command("moves", moves)],
                                             agent_dir=tmp_path / "agent")
        await session.prompt("q1")
        await session.prompt("q2")
        await session.prompt("/moves")

    run(scenario())
    assert seen == {"nav": (False, "q2"), "fork": (False, "q1", True), "switch": (False, True)}


def test_command_context_reload_imports_extensions_again(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue("one", "two")
    ext = tmp_path / "ext.py"
    log = tmp_path / "log.txt"

    def write_extension(marker: str) -> None:
        ext.write_text(f'''
from pathlib import Path
from pi_core import Command, hookimpl

@hookimpl
def register_commands(register):
    async def reload(args, ctx):
        await ctx.reload()
    register(Command("reload", reload))

@hookimpl
def before_agent_start(event, ctx):
    event.system_prompt += "\\nMARK {marker}"

@hookimpl
def session_start(event, ctx):
    with open({str(log)!r}, "a") as f:
        f.write("start " + event.reason + " {marker}\\n")

@hookimpl
def session_shutdown(event, ctx):
    with open({str(log)!r}, "a") as f:
        f.write("shutdown " + event.reason + "\\n")
''')

    write_extension("v1")

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux], session="memory",
                                             extension_paths=[ext], agent_dir=tmp_path / "agent")
        await session.prompt("first")
        write_extension("v2")
        await session.prompt("/reload")
        await session.prompt("second")

    run(scenario())
    assert faux.requests[0].context.system_prompt.endswith("MARK v1")
    assert faux.requests[1].context.system_prompt.endswith("MARK v2")
    assert log.read_text().splitlines() == ["start startup v1", "shutdown reload", "start reload v2"]


def test_command_context_get_system_prompt_options(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    faux = FauxProvider("faux-a", "alpha")
    seen: dict[str, Any] = {}

    async def handler(args: str, ctx: CommandContext) -> None:
        options = ctx.get_system_prompt_options()
        seen["tools"] = [t.name for t in options.tools]
        seen["context"] = [f.path.name for f in options.context_files]

    run(_prompt_once(tmp_path, faux, [command("opts", handler)], "/opts", tools=["read", "bash"]))
    assert seen == {"tools": ["read", "bash"], "context": ["AGENTS.md"]}


REGISTRY_EXT = '''
from pi_core import Command, hookimpl
from pi_core.ai import Context, Model, ProviderConfig, UserMessage

BASE_URL = {base_url!r}


@hookimpl
def register_providers(register):
    register(ProviderConfig(name="helper", api="openai-completions", base_url=BASE_URL, api_key="k",
                            models=[Model(id="helper-model", name="Helper", provider="helper",
                                          api="openai-completions")]))


async def ask(args, ctx):
    model = ctx.model_registry.find("helper", "helper-model")
    events = ctx.model_registry.stream(model, Context(messages=[UserMessage(content=args)]), max_tokens=50)
    kinds = [event.type async for event in events]
    answer = await events.result()
    await ctx.ui.notify(f"{{answer.provider}}/{{answer.model}}: {{answer.text()}} ({{kinds[0]}}..{{kinds[-1]}})")


@hookimpl
def register_commands(register):
    register(Command("ask", ask, "Ask the helper model"))
'''


def test_model_registry_streams_from_a_provider_an_e_file_registered(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    """``ctx.model_registry`` is the session's own: a provider registered by a ``-e`` file is found there,
    and ``stream(...)`` streams pi's events from it (driven through ``pi --mode rpc``)."""
    ext = pi_project / "registry_ext.py"
    ext.write_text(REGISTRY_EXT.format(base_url=fake_provider_server.base_url_for("openai-completions")))
    fake_provider_server.script("help is here")
    with RpcProcess(pi_project, scripted=False, extensions=(ext,)) as pi:
        _, seen = pi.call({"type": "prompt", "message": "/ask please help"})
    notes = [r["message"] for r in seen if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]
    assert notes == ["helper/helper-model: help is here (start..done)"]
    body = fake_provider_server.requests[0].body
    assert body["model"] == "helper-model" and body["messages"][-1]["content"] in ("please help",
                                                                                   [{"type": "text", "text": "please help"}])
