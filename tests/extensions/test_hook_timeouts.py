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
from pi_core.extensions.dispatch import (
    TIMEOUTS_BEFORE_DISABLED,
    UNLIMITED_HOOKS,
    Dispatcher,
    HookTimeoutError,
    HookTimeouts,
)
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


def test_without_a_limit_a_def_handler_still_runs_off_the_loop() -> None:
    """So that one that blocks never holds the event loop: pi must still hear SIGTERM (the signal tests
    drive that through pi). pi's built-ins run inline, whatever the limit."""
    seen = []

    class Where:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            seen.append(threading.current_thread())

    dispatch, _ = make(("w", Where()), timeouts=HookTimeouts(0))
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert seen[-1] is not threading.main_thread()
    dispatch.unlimited.add("w")
    dispatch._cache.clear()
    asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert seen[-1] is threading.main_thread()


def test_a_handler_stuck_for_good_costs_one_limit_not_one_per_call() -> None:
    """The audit's case: a message_update handler that blocks made a 20-word answer take 56 s (one 5 s
    limit per streamed delta, one more stuck thread each). Its later calls are skipped while the first
    one is stuck, and that is said once."""
    import time

    class Hangs:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            threading.Event().wait()

    recorder = Recorder()
    dispatch, errors = make(("hangs", Hangs()), ("next", recorder), timeouts=HookTimeouts(1000))

    async def main() -> None:
        for _ in range(20):
            await dispatch.call("turn_start", TurnStartEvent())

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 10  # one limit (1 s); it was 20 s
    assert [type(e.error).__name__ for e in errors] == ["HookTimeoutError", "HookStuckError"]
    assert "skipped until that call returns" in str(errors[1])
    assert recorder.calls == ["after"] * 20  # the other plugin's handler ran every time


def test_a_handler_that_keeps_running_out_of_time_is_switched_off() -> None:
    calls = []

    class Slow:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            calls.append(1)
            await asyncio.sleep(3600)  # cancelled at the limit each time, so never stuck

    dispatch, errors = make(("slow", Slow()))

    async def main() -> None:
        for _ in range(6):
            await dispatch.call("turn_start", TurnStartEvent())

    asyncio.run(main())
    assert len(calls) == TIMEOUTS_BEFORE_DISABLED
    assert [type(e.error) for e in errors] == [HookTimeoutError] * TIMEOUTS_BEFORE_DISABLED
    assert "is not called again in this session" in str(errors[-1])


def test_keyboard_interrupt_from_a_handler_is_its_failure() -> None:
    class Sync:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise KeyboardInterrupt

    class Async:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            raise KeyboardInterrupt

    for timeouts in (LIMIT, HookTimeouts(0)):
        recorder = Recorder()
        dispatch, errors = make(("sync", Sync()), ("async", Async()), ("next", recorder), timeouts=timeouts)
        asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
        assert [(e.plugin, type(e.error)) for e in errors] == [("sync", KeyboardInterrupt),
                                                              ("async", KeyboardInterrupt)]
        assert recorder.calls == ["after"]


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


def test_a_message_update_handler_that_hangs_through_pi(tmp_path: Path) -> None:
    """message_update comes once per streamed delta: with a handler stuck for good each delta used to
    wait the whole limit (the audit: a 20-word answer took 56 s). Now one limit, said twice at most."""
    import json
    import os
    import subprocess
    import time

    plugin = tmp_path / "stuck_updates.py"
    plugin.write_text("import threading\nfrom pi_core import hookimpl\n\n@hookimpl\n"
                      "def message_update(event, ctx):\n    threading.Event().wait()\n")
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"plugins": {"hookTimeoutMs": 1000}}))
    prompt = " ".join(f"word{i}" for i in range(60))  # echoed back in about 100 deltas
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pi_core", "-e", str(plugin), "--provider", "faux", "--model",
                           "echo", "--no-session", "-p", prompt], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert time.monotonic() - started < 60  # one 1 s limit; it was one per delta, over 100 s
    assert done.returncode == 0 and prompt in done.stdout, done.stderr
    said = [line for line in done.stderr.splitlines() if "stuck_updates.py" in line]
    assert len(said) == 2 and "HookTimeoutError" in said[0] and "HookStuckError" in said[1]
