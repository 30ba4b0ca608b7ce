"""Hook time limits (``plugins.hookTimeoutMs``): a handler that does not return is skipped and reported;
blocking ``def`` handlers run where the limit can act; dialogs and ``ctx.waiting()`` do not count."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

from pi_core import BeforeToolCallEvent, Block, ContextEvent, TurnStartEvent, UserMessage, hookimpl
from pi_core.extensions.context import UI, ExtensionContext
from pi_core.extensions.dispatch import Dispatcher, HookTimeoutError, HookTimeouts, UNLIMITED_HOOKS
from pi_core.extensions.manager import PiPluginManager, build_plugin_host
from pi_core.runtime.settings import Settings

LIMIT = HookTimeouts(300)


def make(*plugins: tuple[str, object], timeouts: HookTimeouts = LIMIT) -> tuple[Dispatcher, list[Any]]:
    pm = PiPluginManager()
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    errors: list[Any] = []
    return Dispatcher(pm, on_error=errors.append, timeouts=timeouts), errors


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def turn_start(self, event: Any) -> None:
        self.calls.append("after")


def test_a_blocking_def_handler_is_skipped_and_reported_and_the_next_one_runs() -> None:
    class Hangs:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            threading.Event().wait()

    recorder = Recorder()
    dispatch, errors = make(("hangs", Hangs()), ("next", recorder))
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert [(e.plugin, e.hook, type(e.error)) for e in errors] == [("hangs", "turn_start", HookTimeoutError)]
    assert "plugins.hookTimeoutMs" in str(errors[0])
    assert recorder.calls == ["after"]


def test_a_hanging_async_handler_is_cancelled() -> None:
    cancelled = []

    class Hangs:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    dispatch, errors = make(("hangs", Hangs()))

    async def main() -> None:
        await dispatch.call("turn_start", TurnStartEvent())
        await asyncio.sleep(0)  # the cancellation is delivered

    asyncio.run(main())
    assert [type(e.error) for e in errors] == [HookTimeoutError]
    assert cancelled == [True]


def test_a_gate_that_hangs_blocks_the_call() -> None:
    class Gate:
        @hookimpl
        async def before_tool_call(self, event: Any) -> None:
            await asyncio.sleep(3600)

    dispatch, errors = make(("gate", Gate()))
    event = asyncio.run(dispatch.call("before_tool_call", BeforeToolCallEvent("bash", "c1", {"command": "ls"})))
    assert isinstance(event.blocked, Block) and "gate" in event.blocked.reason
    assert "HookTimeoutError" in event.blocked.reason and errors


def test_system_exit_from_an_async_or_def_handler_is_contained() -> None:
    class AsyncExit:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            sys.exit(3)

    class DefExit:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            sys.exit(4)

    dispatch, errors = make(("a", AsyncExit()), ("b", DefExit()))
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert [(e.plugin, type(e.error), e.error.code) for e in errors] == [("a", SystemExit, 3), ("b", SystemExit, 4)]


def test_a_def_handler_runs_off_the_loop_but_can_still_schedule_work_on_it() -> None:
    seen: dict[str, Any] = {}

    class Schedules:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            seen["thread"] = threading.current_thread()
            seen["task"] = asyncio.get_running_loop().create_task(asyncio.sleep(0, result="ran"))

    dispatch, errors = make(("s", Schedules()))

    async def main() -> Any:
        await dispatch.call("turn_start", TurnStartEvent())
        return await seen["task"]

    assert asyncio.run(main()) == "ran"
    assert seen["thread"] is not threading.main_thread() and not errors


def test_without_a_limit_handlers_run_inline_on_the_loop() -> None:
    seen = []

    class Where:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            seen.append(threading.current_thread())

    dispatch, _ = make(("w", Where()), timeouts=HookTimeouts(0))
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    dispatch.unlimited.add("w")  # pi's built-ins: also inline, whatever the limit
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert seen == [threading.main_thread()] * 2


def test_builtin_plugins_have_no_limit_and_others_do() -> None:
    host = build_plugin_host(Path.cwd(), autoload=False, discover_extensions=False)
    builtins = {name for name, record in host.records.items() if record.source == "builtin" and not record.disabled}
    assert builtins and builtins <= host.dispatch.unlimited
    assert all(not impl.limited for impl in host.dispatch.impls("register_tools"))


class SlowDialogs(UI):
    has_ui = True

    async def confirm(self, title: str, message: str = "", **options: Any) -> bool:
        await asyncio.sleep(0.8)  # the user thinks for longer than the limit
        return True


def test_time_in_a_dialog_or_in_ctx_waiting_does_not_count() -> None:
    class Asks:
        @hookimpl
        async def context(self, event: Any, ctx: Any) -> Any:
            assert await ctx.ui.confirm("keep going?")
            with ctx.waiting():
                await asyncio.sleep(0.8)  # a wait the plugin bounds itself
            return [UserMessage(content="answered")]

    dispatch, errors = make(("asks", Asks()))
    ctx = ExtensionContext(Path.cwd(), ui=SlowDialogs())
    event = asyncio.run(dispatch.call("context", ContextEvent(messages=[UserMessage(content="q")]), ctx))
    assert not errors
    assert [m.content for m in event.messages] == ["answered"]


def test_a_def_handler_that_returns_a_coroutine_is_awaited_with_the_same_limit() -> None:
    class Returns:
        @hookimpl
        def turn_start(self, event: Any) -> Any:
            return asyncio.sleep(3600)

    dispatch, errors = make(("r", Returns()))
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert [type(e.error) for e in errors] == [HookTimeoutError]


def test_a_registration_hook_that_hangs_unregisters_its_plugin_and_late_registrations_are_ignored() -> None:
    from pi_core import Tool, ToolResult

    release = threading.Event()
    done = threading.Event()

    def tool(name: str) -> Tool:
        return Tool(name=name, description="t", parameters={"type": "object"},
                    execute=lambda params, ctx: ToolResult.text("x"))

    class Hangs:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            release.wait()
            register(tool("late_tool"))
            done.set()

        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise AssertionError("an unregistered plugin's hooks do not run")

    class Fine:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(tool("fine_tool"))

    host = build_plugin_host(Path.cwd(), autoload=False, discover_extensions=False, plugins=[Hangs(), Fine()],
                             hook_timeouts=LIMIT)
    release.set()
    assert done.wait(10)
    failed = [d.message for d in host.diagnostics if d.level == "error"]
    assert len(failed) == 1 and "sdk:Hangs" in failed[0] and "HookTimeoutError" in failed[0]
    assert "fine_tool" in host.tools and "late_tool" not in host.tools
    asyncio.run(host.dispatch.call("turn_start", TurnStartEvent()))
    assert not host.hook_errors


def test_the_setting_and_its_per_hook_overrides() -> None:
    default = HookTimeouts.from_settings(Settings().plugins)
    assert default.seconds("context") == 5.0 and default.seconds("register_tools") == 5.0
    assert all(default.seconds(hook) is None for hook in UNLIMITED_HOOKS)
    tuned = HookTimeouts.from_settings(Settings.model_validate(
        {"plugins": {"hookTimeoutMs": 250, "hookTimeouts": {"context": 0, "session_before_compact": 60000}}}).plugins)
    assert tuned.seconds("input") == 0.25 and tuned.seconds("context") is None
    assert tuned.seconds("session_before_compact") == 60.0
    assert HookTimeouts.from_settings(Settings.model_validate({"plugins": {"hookTimeoutMs": 0}}).plugins
                                      ).seconds("input") is None
