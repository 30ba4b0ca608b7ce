"""Blocking plugin code (a ``def`` hook or tool) run off the event loop, so a limit or an abort can act.

A thread stuck in such a call is left behind and a new one takes the next call, so a hung handler never
starves the others; the threads are daemons and never keep pi from exiting. The worker sees the calling
context and the calling event loop as its running loop, so code written for the loop thread
(``asyncio.get_running_loop()``, ``ctx`` methods) keeps working from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
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
