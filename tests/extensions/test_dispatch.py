"""The dispatcher: load order, modes, async handlers, error isolation, fail-closed gating."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_core import (
    AfterToolCallEvent,
    BeforeToolCallEvent,
    Block,
    Cancel,
    ContextEvent,
    InputEvent,
    SessionBeforeCompactEvent,
    TextContent,
    ToolResultPatch,
    Transform,
    TurnStartEvent,
    UserMessage,
    hookimpl,
)
from pi_core.extensions.dispatch import Dispatcher, StrictPluginError
from pi_core.extensions.manager import PiPluginManager


def make(*plugins: tuple[str, object], strict: bool = False) -> tuple[Dispatcher, list[Any]]:
    pm = PiPluginManager()
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    errors: list[Any] = []
    return Dispatcher(pm, on_error=errors.append, strict=strict), errors


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def recorder(label: str, calls: list[str], **marker: bool) -> object:
    class Plugin:
        @hookimpl(**marker)
        def turn_start(self, event: TurnStartEvent) -> None:
            calls.append(label)

    return Plugin()


def test_handlers_run_in_load_order_not_pluggy_lifo() -> None:
    calls: list[str] = []
    dispatch, _ = make(*[(n, recorder(n, calls)) for n in ("builtin", "entrypoint", "project", "cli")])
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert calls == ["builtin", "entrypoint", "project", "cli"]


def test_tryfirst_and_trylast_move_handlers_keeping_load_order_within_groups() -> None:
    calls: list[str] = []
    dispatch, _ = make(
        ("a", recorder("a-last", calls, trylast=True)),
        ("b", recorder("b", calls)),
        ("c", recorder("c-last", calls, trylast=True)),
        ("d", recorder("d-first", calls, tryfirst=True)),
        ("e", recorder("e-first", calls, tryfirst=True)),
        ("f", recorder("f", calls)),
    )
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert calls == ["d-first", "e-first", "b", "f", "a-last", "c-last"]


def test_definition_order_inside_one_module_plugin() -> None:
    calls: list[str] = []

    class Plugin:
        @hookimpl(specname="turn_start")
        def zzz(self, event: TurnStartEvent) -> None:
            calls.append("first defined")

        @hookimpl(specname="turn_start")
        def aaa(self, event: TurnStartEvent) -> None:
            calls.append("second defined")

    dispatch, _ = make(("p", Plugin()))
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert calls == ["first defined", "second defined"]


def test_chain_mode_each_handler_sees_previous_output_sync_and_async() -> None:
    class Appends:
        @hookimpl
        def context(self, event: ContextEvent) -> None:
            event.messages.append(UserMessage(content=f"seen {len(event.messages)}"))

    class Replaces:
        @hookimpl
        async def context(self, event: ContextEvent) -> list[Any]:
            await asyncio.sleep(0)
            return [m for m in event.messages if m.content != "drop me"]

    dispatch, errors = make(("appends", Appends()), ("replaces", Replaces()), ("appends2", Appends()))
    event = ContextEvent(messages=[UserMessage(content="drop me"), UserMessage(content="keep")])
    run(dispatch.call("context", event))
    assert [m.content for m in event.messages] == ["keep", "seen 2", "seen 2"]
    assert errors == []


def test_first_mode_stops_at_the_first_decision() -> None:
    calls: list[str] = []

    class Undecided:
        @hookimpl
        def session_before_compact(self, event: Any) -> None:
            calls.append("undecided")

    class Cancels:
        @hookimpl
        async def session_before_compact(self, event: Any) -> Cancel:
            calls.append("cancels")
            return Cancel("not now")

    class Late:
        @hookimpl
        def session_before_compact(self, event: Any) -> None:
            calls.append("late")

    dispatch, _ = make(("u", Undecided()), ("c", Cancels()), ("l", Late()))
    event = run(dispatch.call("session_before_compact", SessionBeforeCompactEvent(None, [])))
    assert event.decision == Cancel("not now")
    assert calls == ["undecided", "cancels"]


def test_notify_mode_ignores_results_and_collect_returns_them_in_order() -> None:
    class A:
        @hookimpl
        def turn_start(self, event: Any) -> str:
            return "ignored"

        @hookimpl
        def resources_discover(self, event: Any, ctx: Any) -> str:
            return "from A"

    class B:
        @hookimpl
        async def resources_discover(self, event: Any, ctx: Any) -> str:
            return "from B"

    dispatch, errors = make(("a", A()), ("b", B()))
    assert run(dispatch.call("turn_start", TurnStartEvent())).turn_index == 0
    assert run(dispatch.collect("resources_discover", event=None, ctx=None)) == ["from A", "from B"]
    assert errors == []


def test_an_error_is_reported_with_the_plugin_name_and_the_next_handler_runs() -> None:
    calls: list[str] = []

    class Broken:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise RuntimeError("boom")

    class Exits:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            raise SystemExit(4)

    dispatch, errors = make(("broken", Broken()), ("exits", Exits()), ("fine", recorder("fine", calls)))
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert calls == ["fine"]
    assert [(e.plugin, e.hook, type(e.error).__name__) for e in errors] == [
        ("broken", "turn_start", "RuntimeError"), ("exits", "turn_start", "SystemExit")]
    assert "boom" in str(errors[0]) and "broken" in str(errors[0])


def test_a_keyboard_interrupt_a_handler_raises_is_its_failure_but_a_real_ctrl_c_goes_through() -> None:
    import os
    import signal

    class Interrupts:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise KeyboardInterrupt

    dispatch, errors = make(("i", Interrupts()))
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert [(e.plugin, type(e.error)) for e in errors] == [("i", KeyboardInterrupt)]

    class CtrlC:
        @hookimpl
        async def turn_start(self, event: Any) -> None:
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C while the handler runs
            await asyncio.sleep(5)

    dispatch, errors = make(("c", CtrlC()))
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(dispatch.call("turn_start", TurnStartEvent()))
    assert not errors


def test_before_tool_call_fails_closed() -> None:
    calls: list[str] = []

    class Broken:
        @hookimpl
        def before_tool_call(self, event: BeforeToolCallEvent) -> None:
            raise ValueError("policy file unreadable")

    class Later:
        @hookimpl
        def before_tool_call(self, event: BeforeToolCallEvent) -> None:
            calls.append("later")

    dispatch, errors = make(("policy", Broken()), ("later", Later()))
    event = run(dispatch.call("before_tool_call", BeforeToolCallEvent("bash", "c1", {"command": "ls"})))
    assert isinstance(event.blocked, Block)
    assert "policy" in event.blocked.reason and "policy file unreadable" in event.blocked.reason
    assert calls == []
    assert len(errors) == 1


def test_before_tool_call_may_rewrite_arguments_then_block() -> None:
    class Rewrites:
        @hookimpl
        def before_tool_call(self, event: BeforeToolCallEvent) -> dict[str, Any]:
            return {**event.arguments, "command": "ls -la"}

    class Blocks:
        @hookimpl
        def before_tool_call(self, event: BeforeToolCallEvent) -> Block | None:
            return Block("no listing") if "-la" in event.arguments["command"] else None

    dispatch, _ = make(("r", Rewrites()), ("b", Blocks()))
    event = run(dispatch.call("before_tool_call", BeforeToolCallEvent("bash", "c1", {"command": "ls"})))
    assert event.arguments == {"command": "ls -la"}
    assert event.blocked == Block("no listing")


def test_after_tool_call_patches_chain() -> None:
    class Redacts:
        @hookimpl
        def after_tool_call(self, event: AfterToolCallEvent) -> ToolResultPatch:
            return ToolResultPatch(content=[TextContent(text="[redacted]")], details={"redacted": True})

    class FlagsError:
        @hookimpl
        def after_tool_call(self, event: AfterToolCallEvent) -> None:
            if event.details == {"redacted": True}:
                event.is_error = True

    dispatch, _ = make(("r", Redacts()), ("f", FlagsError()))
    event = run(dispatch.call("after_tool_call", AfterToolCallEvent(
        "read", "c1", {"path": "secret"}, [TextContent(text="token=123")])))
    assert [c.text for c in event.content] == ["[redacted]"]
    assert event.is_error is True


def test_input_transform_then_handled_stops() -> None:
    calls: list[str] = []

    class Upper:
        @hookimpl
        def input(self, event: InputEvent) -> Transform:
            return Transform(event.text.upper())

    class Swallow:
        @hookimpl
        def input(self, event: InputEvent) -> Any:
            from pi_core import Handled

            calls.append(event.text)
            return Handled() if event.text == "PING" else None

    class Never:
        @hookimpl
        def input(self, event: InputEvent) -> None:
            calls.append("never")

    dispatch, _ = make(("u", Upper()), ("s", Swallow()), ("n", Never()))
    event = run(dispatch.call("input", InputEvent("ping")))
    assert event.handled and event.text == "PING"
    assert calls == ["PING"]


def test_a_wrong_return_type_is_reported_not_applied() -> None:
    class Wrong:
        @hookimpl
        def after_tool_call(self, event: Any) -> str:
            return "not a patch"

    dispatch, errors = make(("wrong", Wrong()))
    event = run(dispatch.call("after_tool_call", AfterToolCallEvent("read", "c", {}, [])))
    assert event.content == [] and errors and errors[0].plugin == "wrong"


def test_strict_mode_raises() -> None:
    class Broken:
        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise RuntimeError("boom")

    dispatch, _ = make(("broken", Broken()), strict=True)
    with pytest.raises(StrictPluginError, match="broken"):
        run(dispatch.call("turn_start", TurnStartEvent()))


def test_no_handler_means_no_work_and_cache_follows_registration() -> None:
    pm = PiPluginManager()
    dispatch = Dispatcher(pm)
    assert not dispatch.has("message_update")
    calls: list[str] = []
    pm.register(recorder("late", calls), name="late")
    assert dispatch.has("turn_start")
    run(dispatch.call("turn_start", TurnStartEvent()))
    pm.unregister(name="late")
    run(dispatch.call("turn_start", TurnStartEvent()))
    assert calls == ["late"]
