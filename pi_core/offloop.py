"""Blocking plugin code (a ``def`` hook or tool) run off the event loop, so a limit or an abort can act.

A thread stuck in such a call is left behind and a new one takes the next call, so a hung handler never
starves the others; the threads are daemons and never keep pi from exiting. The worker sees the calling
context and the calling event loop as its running loop, so code written for the loop thread
(``asyncio.get_running_loop()``, ``ctx`` methods) keeps working from it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import queue
import threading
from collections.abc import Callable
from typing import Any


class _Workers:
    KEEP_IDLE = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1  # this job is that worker's
                self._jobs.put(job)
                return
        threading.Thread(target=self._work, args=(job,), name="pi-worker", daemon=True).start()

    def _work(self, job: Callable[[], None]) -> None:
        while True:
            job()
            with self._lock:
                if self._idle >= self.KEEP_IDLE:
                    return
                self._idle += 1
            job = self._jobs.get()


workers = _Workers()


def in_worker(thunk: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run ``thunk`` in a worker thread; its outcome arrives in the returned future (which may be
    abandoned: the thread then finishes, or not, on its own)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def job() -> None:
        asyncio.events._set_running_loop(loop)
        try:
            outcome = (True, context.run(thunk))
        except BaseException as exc:  # handed to the caller
            outcome = (False, exc)
        finally:
            asyncio.events._set_running_loop(None)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(deliver, *outcome)

    workers.submit(job)
    return future


def call_on_loop(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on the event loop's own thread, waiting for its result.

    A ``def`` hook runs in a worker thread that sees the session's loop as its running loop; what it calls
    on ``ctx`` changes the session, the transcript and the screen, which only the loop's thread may touch.
    On the loop's thread (or with no loop running) this is a plain call."""
    loop = asyncio.events._get_running_loop()
    owner = getattr(loop, "_thread_id", None)
    if loop is None or owner is None or owner == threading.get_ident() or loop.is_closed():
        return fn(*args, **kwargs)
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the calling thread
            done.set_exception(exc)

    try:
        loop.call_soon_threadsafe(run)
    except RuntimeError:  # the loop closed meanwhile
        return fn(*args, **kwargs)
    return done.result()


class LoopBound:
    """A stand-in for ``target`` whose plain methods run on the event loop's thread when called from another
    thread (:func:`call_on_loop`); coroutine methods and attributes pass through as they are."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value) or inspect.iscoroutinefunction(value) or isinstance(value, type):
            return value

        def bound(*args: Any, **kwargs: Any) -> Any:
            return call_on_loop(value, *args, **kwargs)

        return bound

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"LoopBound({self._target!r})"


def on_loop_thread() -> bool:
    """True on the running event loop's own thread (or with no loop running): no marshalling needed."""
    loop = asyncio.events._get_running_loop()
    owner = getattr(loop, "_thread_id", None)
    return loop is None or owner is None or owner == threading.get_ident()
