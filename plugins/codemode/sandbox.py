"""Running one script in a V8 isolate (mini-racer) whose only way out is the host bridge.

Each script gets a fresh isolate (a few milliseconds once V8 is loaded) with a hard memory limit.
V8 runs on mini-racer's own thread, so a script that computes never blocks pi's event loop, and a
deadline or an abort terminates it wherever it is. The isolate has no file system, network,
modules or timers (the prelude removes mini-racer's ``setTimeout``); the script reaches the world
only through host calls: tools and the discovery globals, answered here one at a time, in order.

Isolates are limited per process (``PI_CODEMODE_MAX_WORKERS``, default 2, shared by every session);
scripts wait for a free one in arrival order, at most 60 seconds and never past their deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PRELUDE = Path(__file__).with_name("prelude.js")
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_WORKERS = 2
WORKER_WAIT_SECONDS = 60.0
LIMITS = {"storeValue": 256 * 1024, "storeTotal": 1024 * 1024, "outputChars": 16 * 1024 * 1024,
          "outputItems": 100_000}

HostCall = Callable[[str, Any], Awaitable[Any]]
"""``(name, arguments) -> value``: a tool or global the script called; raise to reject the call."""


class CallFailed(Exception):
    """A host call failed; the script's promise rejects with this message (and ``properties``)."""

    def __init__(self, message: str, properties: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.properties = properties


@dataclass
class ScriptError:
    kind: str
    """``script`` (threw or did not parse), ``timeout``, ``aborted`` or ``sandbox``."""
    message: str
    name: str = "Error"
    stack: str | None = None


@dataclass
class RunResult:
    ok: bool
    output: list[list[Any]] = field(default_factory=list)
    """``[kind, data]`` or ``["image", data, mime]`` items, ``kind`` being ``text`` or ``console``."""
    value: Any = None
    has_value: bool = False
    error: ScriptError | None = None
    writes: list[list[Any]] = field(default_factory=list)
    """``[key, json]`` sets and ``[key]`` deletions, in order (only for a successful script)."""


# -------------------------------------------------------------------------------------------------
# worker slots, shared by every session of the process


def max_workers() -> int:
    """``PI_CODEMODE_MAX_WORKERS`` if a positive integer; read per script so hosts may change it."""
    try:
        value = int(os.environ.get("PI_CODEMODE_MAX_WORKERS", ""))
    except ValueError:
        return DEFAULT_MAX_WORKERS
    return value if value > 0 else DEFAULT_MAX_WORKERS


class _Slots:
    def __init__(self) -> None:
        self.busy = 0
        self.waiting: list[asyncio.Future[None]] = []

    def _admit(self) -> None:
        while self.waiting and self.busy < max_workers():
            waiter = self.waiting.pop(0)
            if not waiter.done():
                self.busy += 1
                waiter.set_result(None)

    async def acquire(self, timeout: float, aborted: Callable[[], Awaitable[Any]]) -> str:
        """``reserved``, ``timeout`` or ``aborted`` (when ``aborted()`` finishes first)."""
        waiter = asyncio.get_running_loop().create_future()
        self.waiting.append(waiter)
        self._admit()
        if waiter.done():
            return "reserved"
        abort = asyncio.ensure_future(aborted())
        try:
            done, _ = await asyncio.wait({waiter, abort}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            abort.cancel()
        if waiter.done() and not waiter.cancelled():
            return "reserved"
        waiter.cancel()
        if waiter in self.waiting:
            self.waiting.remove(waiter)
        return "aborted" if abort in done else "timeout"

    def release(self) -> None:
        self.busy -= 1
        self._admit()


SLOTS = _Slots()
_v8_ready: asyncio.Future[None] | None = None


async def _load_v8() -> None:
    """Load V8 once, off the event loop (the first load takes a fraction of a second)."""
    global _v8_ready
    if _v8_ready is None:
        from py_mini_racer._dll import init_mini_racer

        _v8_ready = asyncio.ensure_future(asyncio.to_thread(init_mini_racer, ignore_duplicate_init=True))
    await asyncio.shield(_v8_ready)


# -------------------------------------------------------------------------------------------------
# one run


class Script:
    """One script in one isolate. ``tools`` are ``{name, id, description}``; ``globals`` ``{name, spread}``."""

    def __init__(self, code: str, *, tools: list[dict[str, str]], globals_: list[dict[str, Any]],
                 store: dict[str, Any], call_tool: HostCall, call_global: HostCall) -> None:
        self.code = code
        self.tools = tools
        self.globals = globals_
        self.store = store
        self.call_tool = call_tool
        self.call_global = call_global
        self._done: asyncio.Future[tuple[bool, Any, Any]] | None = None
        self._calls: set[asyncio.Task[None]] = set()
        self._vm_lock = asyncio.Lock()
        self._api: Any = None
        self._vm: Any = None

    async def run(self, deadline: float | None, aborted: Awaitable[Any]) -> RunResult:
        """Run to its end, ``deadline`` (``time.monotonic()``) or the abort; host calls still running
        then are cancelled."""
        from py_mini_racer import MiniRacer

        await _load_v8()
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        vm = self._vm = MiniRacer()
        abort = asyncio.ensure_future(aborted)
        try:
            vm.set_hard_memory_limit(MEMORY_LIMIT_BYTES)
            async with vm.wrap_py_function(self._bridge) as bridge:
                started = await self._start(vm, bridge)
                if started is not None:
                    return started
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                done, _ = await asyncio.wait({self._done, abort}, timeout=remaining,
                                             return_when=asyncio.FIRST_COMPLETED)
                if self._done in done:
                    if self._done.exception() is not None:
                        return RunResult(False, await self._stopped_output(), error=ScriptError(
                            "sandbox", str(self._done.exception())))
                    return await self._finish(*self._done.result())
                kind, message = (("aborted", "the call was aborted") if abort in done
                                 else ("timeout", "the script ran past its deadline"))
                return await self._stop(vm, kind, message)
        except Exception as exc:  # noqa: BLE001 - the VM failed (memory, a broken isolate)
            return RunResult(False, error=ScriptError("sandbox", _vm_message(vm, exc)))
        finally:
            abort.cancel()
            for task in list(self._calls):
                task.cancel()
            if self._calls:
                await asyncio.gather(*self._calls, return_exceptions=True)
            vm.close()

    async def _start(self, vm: Any, bridge: Any) -> RunResult | None:
        prelude = vm.eval(PRELUDE.read_text(encoding="utf-8"))
        store_json = json.dumps({k: json.dumps(v, ensure_ascii=False) for k, v in self.store.items()},
                                ensure_ascii=False)
        self._api = prelude(bridge, json.dumps(self.tools, ensure_ascii=False), json.dumps(self.globals),
                            store_json, vm.eval(f"({json.dumps(LIMITS)})"))
        try:
            # the prefix shares the script's first line, so line numbers in errors are the script's
            fn = await vm.eval_cancelable(f"(async (tools, console) => {{{self.code}\n}})\n//# sourceURL=codemode.js")
        except Exception as exc:  # noqa: BLE001 - a syntax error is the script's error
            head = _exception_text(exc)
            name, _, message = head.partition(": ")
            return RunResult(False, error=ScriptError("script", message or name, name if message else "SyntaxError",
                                                      head))
        self._spawn(self._in_vm(vm, "run", fn))
        return None

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)

    async def _in_vm(self, vm: Any, method: str, *args: Any) -> None:
        """Run the script on (``run``, or ``settle`` a call) until it waits again, then check it can
        still go on. One at a time: the isolate runs one thing at a time anyway."""
        async with self._vm_lock:
            if self._done is None or self._done.done():
                return
            try:
                await self._api[method].cancelable()(*args)
                await self._api["stalled"].cancelable()()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - out of memory, a broken isolate: the run ends
                if not self._done.done():
                    self._done.set_exception(_SandboxFailed(_vm_message(vm, exc)))

    async def _bridge(self, kind: str, *args: Any) -> None:
        assert self._vm is not None
        if kind == "done":
            ok, payload, writes = (list(args) + [None, None, None])[:3]
            if self._done is not None and not self._done.done():
                self._done.set_result((bool(ok), payload, writes))
            return
        call_id, name, args_json = args
        arguments = json.loads(args_json) if isinstance(args_json, str) else None
        target = self.call_tool if kind == "call" else self.call_global
        self._spawn(self._answer(self._vm, int(call_id), target, str(name), arguments))

    async def _answer(self, vm: Any, call_id: int, target: HostCall, name: str, arguments: Any) -> None:
        try:
            value = await target(name, arguments)
            ok, payload, props = True, None if value is None else json.dumps(value, ensure_ascii=False), None
        except CallFailed as exc:
            ok, payload, props = False, str(exc), json.dumps(exc.properties) if exc.properties else None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure rejects the script's promise
            ok, payload, props = False, str(exc) or type(exc).__name__, None
        await self._in_vm(vm, "settle", call_id, ok, payload, props)

    async def _finish(self, ok: bool, payload: Any, writes: Any) -> RunResult:
        output = await self._output()
        if not ok:
            return RunResult(False, output, error=_script_error(payload))
        result = RunResult(True, output, writes=json.loads(writes) if isinstance(writes, str) else [])
        if isinstance(payload, str):
            result.value, result.has_value = json.loads(payload), True
        return result

    async def _stop(self, vm: Any, kind: str, message: str) -> RunResult:
        return RunResult(False, await self._stopped_output(), error=ScriptError(kind, message))

    async def _stopped_output(self) -> list[list[Any]]:
        """The output of a script that is stopped: cancelling a running call terminates the script
        in V8, and running host calls are cancelled; what it printed is still in the isolate."""
        for task in list(self._calls):
            task.cancel()
        await asyncio.gather(*self._calls, return_exceptions=True)
        try:
            return await asyncio.wait_for(self._output(), 5)
        except Exception:  # noqa: BLE001 - an isolate that cannot answer keeps nothing
            return []

    async def _output(self) -> list[list[Any]]:
        text = await self._api["output"].cancelable()()
        return list(json.loads(text)) if isinstance(text, str) else []


class _SandboxFailed(Exception):
    pass


def _script_error(payload: Any) -> ScriptError:
    try:
        data = json.loads(payload) if isinstance(payload, str) else {}
    except ValueError:
        data = {"message": str(payload)}
    return ScriptError("script", str(data.get("message", "")), str(data.get("name") or "Error"),
                       data.get("stack") if isinstance(data.get("stack"), str) else None)


def _exception_text(exc: Exception) -> str:
    text = str(exc).strip()
    # mini-racer reports "<file>:<line>: <Name>: <message>" followed by the source line and a caret
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        for name in ("SyntaxError", "ReferenceError", "TypeError", "RangeError", "Error"):
            at = line.find(name + ":")
            if at >= 0:
                return line[at:].strip()
    return lines[0] if lines else type(exc).__name__


def _vm_message(vm: Any, exc: Exception) -> str:
    try:
        if vm.was_hard_memory_limit_reached():
            return f"the script used more than {MEMORY_LIMIT_BYTES // (1024 * 1024)} MB of memory"
    except Exception:  # noqa: BLE001
        pass
    return f"{type(exc).__name__}: {exc}"


__all__ = ["SLOTS", "CallFailed", "RunResult", "Script", "ScriptError", "max_workers"]
