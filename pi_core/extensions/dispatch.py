"""The async hook dispatcher: the only code that touches ``pm.hook``.

pluggy gives us specs, markers, registration and validation; calling is done here, because pi's
semantics differ from pluggy's: handlers run in *load order* (pluggy: last registered first), each
handler's error is isolated (pluggy: the first exception aborts the call), handlers may be async, and
each hook has a mode (collect / chain / first / notify, see ``hookspecs``).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pluggy

from hookspecs import DISPATCH_MODES, FAIL_CLOSED


@dataclass(frozen=True)
class HookError:
    """One handler's failure, reported with the plugin's name."""

    plugin: str
    hook: str
    error: BaseException
    traceback: str

    def __str__(self) -> str:
        return f"plugin {self.plugin!r} failed in hook {self.hook!r}: {type(self.error).__name__}: {self.error}"


class StrictPluginError(Exception):
    """Raised instead of reporting when ``PI_STRICT_PLUGINS=1``."""


@dataclass(frozen=True)
class _Impl:
    plugin: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    call: Callable[[Any, Any], Any]
    """``call(event, ctx)`` passes the arguments the handler asked for (built once: hot hooks)."""


def _caller(function: Callable[..., Any], argnames: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    if argnames == ("event", "ctx"):
        return function
    if argnames == ("event",):
        return lambda event, ctx: function(event)
    if argnames == ("ctx",):
        return lambda event, ctx: function(ctx)
    if argnames == ("ctx", "event"):
        return lambda event, ctx: function(ctx, event)
    if not argnames:
        return lambda event, ctx: function()
    return lambda event, ctx: function(*[{"event": event, "ctx": ctx}[n] for n in argnames])


class Dispatcher:
    """Calls hooks of one plugin manager.

    :param pm: the plugin manager (its ``load_order`` maps plugin name to load position).
    :param on_error: receives each :class:`HookError`.
    :param strict: raise :class:`StrictPluginError` instead of reporting.
    """

    def __init__(self, pm: pluggy.PluginManager, *, on_error: Callable[[HookError], None] | None = None,
                 strict: bool = False) -> None:
        self._pm = pm
        self._on_error = on_error or (lambda err: None)
        self._strict = strict
        self._cache: dict[str, tuple[_Impl, ...]] = {}
        self._generation = -1

    # -- handler lookup ------------------------------------------------------------------------

    def impls(self, hook: str) -> tuple[_Impl, ...]:
        """Handlers of ``hook`` in call order: tryfirst, normal, trylast; each group in load order."""
        generation = getattr(self._pm, "generation", 0)
        if generation != self._generation:
            self._cache.clear()
            self._generation = generation
        cached = self._cache.get(hook)
        if cached is None:
            cached = self._cache[hook] = self._ordered(hook)
        return cached

    def _ordered(self, hook: str) -> tuple[_Impl, ...]:
        caller = getattr(self._pm.hook, hook, None)
        if caller is None:
            return ()
        order: dict[str, int] = getattr(self._pm, "load_order", {})

        def key(impl: Any) -> tuple[int, int, int]:
            group = 0 if impl.tryfirst else 2 if impl.trylast else 1
            code = getattr(impl.function, "__code__", None)
            return group, order.get(impl.plugin_name, len(order)), code.co_firstlineno if code else 0

        found = [i for i in caller.get_hookimpls() if not (i.wrapper or i.hookwrapper)]
        return tuple(_Impl(i.plugin_name, i.function, tuple(i.argnames), _caller(i.function, tuple(i.argnames)))
                     for i in sorted(found, key=key))

    def has(self, hook: str) -> bool:
        """Whether any handler exists; lets hot paths skip building an event."""
        return bool(self.impls(hook))

    # -- calling -------------------------------------------------------------------------------

    async def call(self, hook: str, event: Any, ctx: Any = None) -> Any:
        """Dispatch an event hook by its mode. Returns the event (chain/first/notify)."""
        mode = DISPATCH_MODES[hook]
        impls = self.impls(hook)
        if not impls:
            return event
        for impl in impls:
            try:
                result = impl.call(event, ctx)
                if result is not None and inspect.isawaitable(result):
                    result = await result
            except (Exception, SystemExit) as exc:
                if hook in FAIL_CLOSED:
                    return self._fail_closed(hook, impl, event, exc)
                self._report(impl.plugin, hook, exc)
                continue
            if mode == "notify":
                continue
            if result is not None:
                try:
                    if event._apply(result):  # a decision (block, cancel, handled) ends the dispatch
                        return event
                except TypeError as exc:  # an answer of the wrong shape: a gate blocks, never lets it through
                    if hook in FAIL_CLOSED:
                        return self._fail_closed(hook, impl, event, exc)
                    self._report(impl.plugin, hook, exc)
            after = getattr(event, "_after_handler", None)
            if after is not None:
                after()
        return event

    async def collect(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call every handler; return the non-``None`` results in order."""
        results = []
        for impl in self.impls(hook):
            try:
                result = await _invoke(impl, kwargs)
            except (Exception, SystemExit) as exc:
                self._report(impl.plugin, hook, exc)
                continue
            if result is not None:
                results.append(result)
        return results

    def call_each_sync(self, hook: str, make_kwargs: Callable[[str], dict[str, Any]],
                       on_failure: Callable[[str, BaseException], None]) -> None:
        """Registration-time helper: call each handler with its own kwargs (a ``register`` bound to its
        plugin), outside any event loop. Async handlers are run to completion."""
        for impl in self.impls(hook):
            kwargs = make_kwargs(impl.plugin)
            try:
                result = impl.function(*[kwargs[name] for name in impl.argnames])
                if inspect.isawaitable(result):
                    _run_sync(result)
            except (Exception, SystemExit) as exc:
                on_failure(impl.plugin, exc)

    # -- errors --------------------------------------------------------------------------------

    def _report(self, plugin: str, hook: str, exc: BaseException) -> None:
        error = HookError(plugin, hook, exc, "".join(traceback.format_exception(exc)))
        if self._strict:
            raise StrictPluginError(str(error)) from exc
        self._on_error(error)

    def _fail_closed(self, hook: str, impl: _Impl, event: Any, exc: BaseException) -> Any:
        from ..events import Block

        self._report(impl.plugin, hook, exc)
        event._apply(Block(reason=f"blocked because plugin {impl.plugin!r} failed: {type(exc).__name__}: {exc}"))
        return event


async def _invoke(impl: _Impl, kwargs: dict[str, Any]) -> Any:
    result = impl.function(*[kwargs[name] for name in impl.argnames])
    if inspect.isawaitable(result):
        result = await result
    return result


def _run_sync(awaitable: Any) -> Any:
    """Run a coroutine to completion from sync code, even when an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaitable)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(awaitable)
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="pi-sync-hook")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


__all__ = ["Dispatcher", "HookError", "StrictPluginError"]
