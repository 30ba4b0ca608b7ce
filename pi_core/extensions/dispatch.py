"""The async hook dispatcher: the only code that touches ``pm.hook``.

pluggy gives us specs, markers, registration and validation; calling is done here, because pi's
semantics differ from pluggy's: handlers run in *load order* (pluggy: last registered first), each
handler's error is isolated (pluggy: the first exception aborts the call), handlers may be async, and
each hook has a mode (collect / chain / first / notify, see ``hookspecs``).

Each handler call has a time limit (``plugins.hookTimeoutMs``, :class:`HookTimeouts`): a handler that has
not returned by then is skipped and reported as a :class:`HookTimeoutError` naming the plugin and the
hook. So that the limit can act on a ``def`` handler that blocks, limited ``def`` handlers run in a
worker thread (whose running event loop is the session's, so the ``ctx`` API and ``asyncio`` calls work
from them); ``async def`` handlers run as a task that is cancelled at the limit. Time spent in ``ctx.ui``
dialogs and inside :func:`hook_wait` (``ctx.waiting()``) does not count. Without a limit (``0``, and the
long-running hooks in :data:`UNLIMITED_HOOKS`) a ``def`` handler still runs in a worker thread, so one that
blocks never holds the event loop (SIGTERM is still heard); only pi's built-in plugins run inline.

A handler that ran out of time and whose call is still running (a thread stuck for good) is not called
again until that call returns: its later calls are skipped at once, reported once. After
:data:`TIMEOUTS_BEFORE_DISABLED` timeouts it is not called again in the session. So a hook that always
hangs costs one limit, not one per call (``message_update`` comes once per streamed token), and leaves
one thread behind, not one per call.

A ``KeyboardInterrupt`` (or another exception that is not an ``Exception``) raised by a handler is that
handler's failure like any other; a real Ctrl-C is told apart by where it was raised (not by a ``raise`` in
the handler's own code) and goes through.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dis
import inspect
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from hookspecs import DISPATCH_MODES, FAIL_CLOSED

from ..offloop import in_worker, workers


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


class HookTimeoutError(TimeoutError):
    """A handler did not return within its hook's time limit; it was skipped."""

    def __init__(self, seconds: float, running: Any = None) -> None:
        self.seconds = seconds
        self.running = running
        """The abandoned call (a future), which may go on running in its thread."""
        super().__init__(f"did not return within {seconds:g} s and was skipped (the limit is the setting "
                         f"plugins.hookTimeoutMs)")


class HookStuckError(RuntimeError):
    """A handler is skipped without being called: an earlier call that ran out of time has not returned,
    or it ran out of time too often (:data:`TIMEOUTS_BEFORE_DISABLED`)."""


#: A handler that ran out of time this many times is not called again in the session.
TIMEOUTS_BEFORE_DISABLED = 3


#: The default limit of one handler call, in milliseconds (``plugins.hookTimeoutMs``).
DEFAULT_HOOK_TIMEOUT_MS = 5000

#: Hooks with no limit unless ``plugins.hookTimeouts`` gives one: their handlers may legitimately take
#: long (a compaction or branch summary written with a model, a user's ``!command`` run by the plugin).
UNLIMITED_HOOKS: frozenset[str] = frozenset({"session_before_compact", "session_before_tree", "user_bash"})


@dataclass(frozen=True)
class HookTimeouts:
    """The time limits of hook calls: ``default_ms`` for every hook (``0``: none), ``per_hook`` overrides
    by hook name (``0``: none). Hooks in :data:`UNLIMITED_HOOKS` have none unless ``per_hook`` names them."""

    default_ms: int = DEFAULT_HOOK_TIMEOUT_MS
    per_hook: Mapping[str, int] = field(default_factory=dict)

    def seconds(self, hook: str) -> float | None:
        """The limit of one ``hook`` handler call in seconds, ``None`` for none."""
        ms = self.per_hook.get(hook)
        if ms is None:
            ms = 0 if hook in UNLIMITED_HOOKS else self.default_ms
        return ms / 1000 if ms and ms > 0 else None

    @classmethod
    def from_settings(cls, plugins: Any) -> HookTimeouts:
        """From the settings' ``plugins`` section (``hookTimeoutMs``, ``hookTimeouts``)."""
        return cls(int(getattr(plugins, "hook_timeout_ms", DEFAULT_HOOK_TIMEOUT_MS)),
                   dict(getattr(plugins, "hook_timeouts", None) or {}))


NO_TIMEOUTS = HookTimeouts(0)


# -- the clock of one handler call ----------------------------------------------------------------


class _Clock:
    """How much of a handler call's limit is used; stopped while the handler waits on the user."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._spent = 0.0
        self._since = time.monotonic()
        self._paused = 0

    def pause(self) -> None:
        with self._lock:
            if self._paused == 0:
                self._spent += time.monotonic() - self._since
            self._paused += 1

    def resume(self) -> None:
        with self._lock:
            self._paused -= 1
            if self._paused == 0:
                self._since = time.monotonic()

    def remaining(self) -> float | None:
        """Seconds left, ``None`` while paused."""
        with self._lock:
            if self._paused:
                return None
            return self.limit - self._spent - (time.monotonic() - self._since)


_CLOCK: contextvars.ContextVar[_Clock | None] = contextvars.ContextVar("pi_hook_clock", default=None)

#: While a handler waits on the user, its limit is looked at again this often.
_PAUSED_POLL_S = 0.25
#: How long a handler task cancelled at its limit gets to end (it normally does at its next await).
_CANCEL_GRACE_S = 0.05


@contextlib.contextmanager
def hook_wait() -> Iterator[None]:
    """Time spent inside this block does not count against the current hook call's time limit
    (``ctx.waiting()``; ``ctx.ui`` dialogs use it). Outside a hook call it does nothing."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock.pause()
    try:
        yield
    finally:
        clock.resume()


class _Exited(Exception):
    """A ``SystemExit`` (or ``KeyboardInterrupt``) raised by a handler running as a task, carried out of it: a
    task would hand it to the event loop, which ends the program."""

    def __init__(self, exit: SystemExit | KeyboardInterrupt) -> None:
        super().__init__(exit)
        self.exit = exit


async def _contained(awaitable: Any) -> Any:
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _Exited(exc) from None


async def _call_limited(impl: _Impl, limit: float, thunk: Callable[[], Any]) -> Any:
    """Call a handler with a time limit; raises :class:`HookTimeoutError` when it runs out."""
    clock = _Clock(limit)
    token = _CLOCK.set(clock)
    try:
        if impl.is_async:
            result = thunk()
            if result is None or not inspect.isawaitable(result):
                return result
            running: asyncio.Future[Any] = asyncio.ensure_future(_contained(result))
        else:
            running = in_worker(thunk)
    finally:
        _CLOCK.reset(token)
    result = await _within(running, clock)
    if result is not None and inspect.isawaitable(result):  # a `def` that returned an awaitable
        token = _CLOCK.set(clock)
        try:
            running = asyncio.ensure_future(_contained(result))
        finally:
            _CLOCK.reset(token)
        result = await _within(running, clock)
    return result


async def _within(running: asyncio.Future[Any], clock: _Clock) -> Any:
    while True:
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            break
        await asyncio.wait({running}, timeout=_PAUSED_POLL_S if remaining is None else remaining)
        if running.done():
            break
    if not running.done():
        running.add_done_callback(_forget)
        if isinstance(running, asyncio.Task):
            running.cancel()
            await asyncio.wait({running}, timeout=_CANCEL_GRACE_S)  # a cancelled task ends at its next await
        # a worker thread is left to finish on its own: its future is done when (if ever) it returns
        raise HookTimeoutError(clock.limit, running)
    try:
        return running.result()
    except _Exited as exc:
        raise exc.exit from None


def _forget(future: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned call's outcome so asyncio does not log it."""
    if not future.cancelled():
        future.exception()


def _call_limited_blocking(limit: float, thunk: Callable[[], Any]) -> Any:
    """:func:`_call_limited` for code outside an event loop (registration): blocks the calling thread,
    runs ``thunk`` (and a coroutine it returns) in a worker."""
    clock = _Clock(limit)
    token = _CLOCK.set(clock)
    try:
        context = contextvars.copy_context()
    finally:
        _CLOCK.reset(token)
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def job() -> None:
        try:
            result = context.run(thunk)
            if result is not None and inspect.isawaitable(result):
                result = context.run(asyncio.run, _contained(result))
            done.set_result(result)
        except _Exited as exc:
            done.set_exception(exc.exit)
        except BaseException as exc:  # handed to the caller
            done.set_exception(exc)

    workers.submit(job)
    while True:
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            break
        try:
            return done.result(timeout=_PAUSED_POLL_S if remaining is None else remaining)
        except concurrent.futures.TimeoutError:
            continue
    if done.done():
        return done.result()
    raise HookTimeoutError(clock.limit)


@dataclass(frozen=True)
class _Impl:
    plugin: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    call: Callable[[Any, Any], Any]
    """``call(event, ctx)`` passes the arguments the handler asked for (built once: hot hooks)."""
    is_async: bool = False
    limited: bool = True
    """Whether the hook time limit applies (not to pi's built-in plugins, see ``Dispatcher.unlimited``)."""


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
    :param timeouts: the time limit of each handler call (default: none, the host sets the settings').
    """

    def __init__(self, pm: pluggy.PluginManager, *, on_error: Callable[[HookError], None] | None = None,
                 strict: bool = False, timeouts: HookTimeouts = NO_TIMEOUTS) -> None:
        self._pm = pm
        self._on_error = on_error or (lambda err: None)
        self._strict = strict
        self.timeouts = timeouts
        self.unlimited: set[str] = set()
        """Plugins whose handlers run without a time limit, inline: pi's built-ins (part of pi; their
        waits have their own limits, and hot hooks stay cheap). Set before their first call."""
        self._cache: dict[str, tuple[_Impl, ...]] = {}
        self._generation = -1
        self._breakers: dict[tuple[str, str], _Breaker] = {}
        """(plugin, hook) -> its timeouts so far and the call that ran out of time last."""

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
        return tuple(_Impl(i.plugin_name, i.function, tuple(i.argnames), _caller(i.function, tuple(i.argnames)),
                           _is_async(i.function), i.plugin_name not in self.unlimited)
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
        limit = self.timeouts.seconds(hook)
        for impl in impls:
            try:
                if not impl.limited:  # pi's built-ins: inline (hot hooks stay cheap)
                    result = impl.call(event, ctx)
                    if result is not None and inspect.isawaitable(result):
                        result = await result
                else:
                    self._check_stuck(impl, hook)
                    thunk = lambda impl=impl: impl.call(event, ctx)  # noqa: E731
                    result = await (_call_unlimited(impl, thunk) if limit is None else
                                    _call_limited(impl, limit, thunk))
            except BaseException as exc:  # noqa: BLE001 - a handler's failure, whatever it raised
                if not self._handler_failed(impl, hook, exc):
                    raise
                if isinstance(exc, _Skipped):
                    continue
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
        limit = self.timeouts.seconds(hook)
        for impl in self.impls(hook):
            try:
                if not impl.limited:
                    result = await _invoke(impl, kwargs)
                else:
                    self._check_stuck(impl, hook)
                    thunk = lambda impl=impl: _arguments(impl, kwargs)  # noqa: E731
                    result = await (_call_unlimited(impl, thunk) if limit is None else
                                    _call_limited(impl, limit, thunk))
            except BaseException as exc:  # noqa: BLE001 - a handler's failure, whatever it raised
                if not self._handler_failed(impl, hook, exc):
                    raise
                if not isinstance(exc, _Skipped):
                    self._report(impl.plugin, hook, exc)
                continue
            if result is not None:
                results.append(result)
        return results

    def call_each_sync(self, hook: str, make_kwargs: Callable[[str], dict[str, Any]],
                       on_failure: Callable[[str, BaseException], None]) -> None:
        """Registration-time helper: call each handler with its own kwargs (a ``register`` bound to its
        plugin), outside any event loop. Async handlers are run to completion. With a time limit each
        call runs in a worker thread; one that runs out is a failure (:class:`HookTimeoutError`)."""
        limit = self.timeouts.seconds(hook)
        for impl in self.impls(hook):
            kwargs = make_kwargs(impl.plugin)
            try:
                if limit is None or not impl.limited:
                    result = impl.function(*[kwargs[name] for name in impl.argnames])
                    if inspect.isawaitable(result):
                        _run_sync(result)
                else:
                    _call_limited_blocking(limit, lambda impl=impl, kwargs=kwargs: _arguments(impl, kwargs))
            except BaseException as exc:  # noqa: BLE001 - a handler's failure, whatever it raised
                if not _is_failure(exc, impl):
                    raise
                on_failure(impl.plugin, exc)

    # -- handlers that fail or hang ---------------------------------------------------------------

    def _check_stuck(self, impl: _Impl, hook: str) -> None:
        """Raise :class:`_Skipped` instead of calling a handler whose timed-out call still runs, or that
        ran out of time too often; the first skip of a stuck call is reported."""
        breaker = self._breakers.get((impl.plugin, hook))
        if breaker is None:
            return
        if breaker.timeouts >= TIMEOUTS_BEFORE_DISABLED:
            raise _Skipped()  # said when it happened
        if breaker.running is None or breaker.running.done():
            breaker.running = None
            return
        if not breaker.reported:
            breaker.reported = True
            self._report(impl.plugin, hook, HookStuckError(
                "its call that ran out of time has not returned; it is skipped until that call returns"))
        raise _Skipped()

    def _handler_failed(self, impl: _Impl, hook: str, exc: BaseException) -> bool:
        """Whether ``exc`` is the handler's failure (else it is pi's own: a cancellation, a real Ctrl-C);
        notes a timeout for the breaker."""
        if isinstance(exc, _Skipped):
            return True
        if not _is_failure(exc, impl):
            return False
        if isinstance(exc, HookTimeoutError):
            breaker = self._breakers.setdefault((impl.plugin, hook), _Breaker())
            breaker.timeouts += 1
            breaker.running, breaker.reported = exc.running, False
            if breaker.timeouts >= TIMEOUTS_BEFORE_DISABLED:
                exc.args = (f"{exc.args[0]}; it ran out of time {breaker.timeouts} times and is not called "
                            "again in this session",)
        return True

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


class _Skipped(Exception):
    """A handler not called (see ``Dispatcher._check_stuck``)."""


@dataclass
class _Breaker:
    timeouts: int = 0
    running: Any = None
    """The call that ran out of time last, while it may still run (a future)."""
    reported: bool = False
    """Whether skipping because of it was reported."""


_ASYNCIO = Path(asyncio.__file__).parent


def _is_failure(exc: BaseException, impl: _Impl) -> bool:
    """A handler's exception is its failure unless it is a cancellation (pi stopping the call) or a
    ``KeyboardInterrupt`` from a real Ctrl-C: one a handler raised itself comes from a ``raise`` outside
    asyncio (a signal interrupts whatever instruction runs; asyncio's runner raises the second Ctrl-C),
    or from a worker thread, which never receives signals."""
    if isinstance(exc, Exception | SystemExit):
        return True
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return False
    if not isinstance(exc, KeyboardInterrupt):
        return True  # another BaseException a plugin made up
    frame, lasti, in_worker_thread = None, -1, False
    tb = exc.__traceback__
    while tb is not None:
        frame, lasti, tb = tb.tb_frame, tb.tb_lasti, tb.tb_next
        in_worker_thread = in_worker_thread or frame.f_code.co_name == "job" and \
            Path(frame.f_code.co_filename).name in ("offloop.py", "dispatch.py")
    if frame is None:
        return False
    code = frame.f_code
    explicit = 0 <= lasti < len(code.co_code) and code.co_code[lasti] == _RAISE
    return in_worker_thread or explicit and not Path(code.co_filename).is_relative_to(_ASYNCIO)


_RAISE = dis.opmap["RAISE_VARARGS"]


async def _call_unlimited(impl: _Impl, thunk: Callable[[], Any]) -> Any:
    """A handler call without a time limit: a ``def`` still runs in a worker thread (one that blocks must
    not hold the event loop: pi would not even hear SIGTERM); an ``async def`` is awaited."""
    result = thunk() if impl.is_async else await in_worker(thunk)
    if result is not None and inspect.isawaitable(result):
        result = await result
    return result


def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function)


def _arguments(impl: _Impl, kwargs: dict[str, Any]) -> Any:
    return impl.function(*[kwargs[name] for name in impl.argnames])


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


__all__ = ["DEFAULT_HOOK_TIMEOUT_MS", "Dispatcher", "HookError", "HookStuckError", "HookTimeoutError", "HookTimeouts",
           "StrictPluginError", "TIMEOUTS_BEFORE_DISABLED", "UNLIMITED_HOOKS", "hook_wait"]
