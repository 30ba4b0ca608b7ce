"""Automatic retries of transient provider failures for a running session (pi's ``auto_retry``).

After a run whose last answer failed transiently (rate limit, overload, 5xx, a dropped connection —
:func:`pi_core.ai.classify_error` decides), the failed answer is hidden from the model with a
``context_edit`` (it stays in the file, as in pi 1.6), the session waits ``base · 2^(attempt-1)`` ms and
continues the run. The attempt counter and the pending wait belong to :class:`AutoRetry`; what it needs
from the session is declared by :class:`RetryHost`. Backoff and the retry decision are the one
:class:`pi_core.ai.RetryPolicy`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from ..ai.retry import RetryPolicy
from ..ai.types import AssistantMessage
from .events import AutoRetryEndEvent, AutoRetryStartEvent


#: How the error of a reply whose Retry-After is beyond the retry cap begins.
WAIT_PREFIX = "The provider asks to wait"


class RetryHost(Protocol):
    """What :class:`AutoRetry` uses of the session."""

    @property
    def messages(self) -> list[Any]: ...

    async def hide_failed(self, message: Any) -> None:
        """Keep a failed answer in the file but out of the model's context."""

    async def emit(self, event: Any) -> None:
        """Send a session event to subscribers."""


class AutoRetry:
    """One session's retry state: the attempt of the current run and a pending wait.

    :param host: the session.
    :param policy: when to retry and how long to wait; ``policy.enabled`` is RPC's ``set_auto_retry``.
    """

    def __init__(self, host: RetryHost, policy: RetryPolicy) -> None:
        self._host = host
        self.policy = policy
        self.attempt = 0
        self.aborted = False
        """The run's retry wait was aborted (``abort`` during the delay): the run ended as aborted."""
        self._wait: asyncio.Event | None = None

    def start_run(self) -> None:
        self.attempt = 0
        self.aborted = False

    def will_retry(self, message: Any) -> bool:
        """Would the run be retried after ``message`` (``agent_end``'s ``willRetry``)? Not when the
        server asked for a longer wait (Retry-After) than ``retry.maxAgentDelayMs``."""
        if not isinstance(message, AssistantMessage) or not self.policy.should_retry(message, self.attempt + 1):
            return False
        return self.policy.delay_ms(self.attempt + 1, self._retry_after(message)) is not None

    def _retry_after(self, message: Any) -> int | None:
        lookup = getattr(self._host, "retry_after_ms", None)
        return lookup(message) if lookup is not None else None

    def explain_wait(self, message: AssistantMessage, retry_after_ms: int) -> str:
        """A failed answer's error text; when the server's Retry-After is longer than the retries may
        wait, it says so and when to try again (the run then ends instead of retrying)."""
        text = message.error_message or ""
        cap = self.policy.max_delay_ms
        if not self.policy.enabled or not cap or retry_after_ms <= cap or text.startswith(WAIT_PREFIX):
            return text
        seconds = -(-retry_after_ms // 1000)
        # a time of day is enough within a day; further off (an HTTP-date Retry-After), the date too
        layout = "%H:%M:%S UTC" if retry_after_ms < 86_400_000 else "%Y-%m-%d %H:%M:%S UTC"
        when = time.strftime(layout, time.gmtime(time.time() + retry_after_ms / 1000))
        return (f"{WAIT_PREFIX} {seconds} s before retrying, longer than retry.maxAgentDelayMs allows "
                f"({cap // 1000} s): try again after {when}. {text}")

    @property
    def waiting(self) -> bool:
        return self._wait is not None and not self._wait.is_set()

    def cancel(self, *, abort: bool = False) -> bool:
        """Cancel a pending wait (RPC ``abort_retry``; with ``abort``, the session's ``abort``, which
        marks the run aborted); returns whether one was pending."""
        if self._wait is None or self._wait.is_set():
            return False
        self._wait.set()
        self.aborted = self.aborted or abort
        return True

    async def answer_arrived(self, message: AssistantMessage) -> None:
        """An answer ended: one that is not an error ends the retries at once (``auto_retry_end`` right
        after its ``message_end``, as pi does), and a later failure of the run starts counting again."""
        if self.attempt and message.stop_reason != "error":
            attempt, self.attempt = self.attempt, 0
            await self._host.emit(AutoRetryEndEvent(success=True, attempt=attempt))

    async def maybe_retry(self) -> bool:
        """After a run: retry if the last answer calls for it. True when the run should continue."""
        messages = self._host.messages
        last = messages[-1] if messages else None
        if not isinstance(last, AssistantMessage) or not self.will_retry(last):
            if self.attempt:
                await self._host.emit(AutoRetryEndEvent(success=not _is_error(last), attempt=self.attempt,
                                                        final_error=getattr(last, "error_message", None)))
            return False
        self.attempt += 1
        delay = self.policy.delay_ms(self.attempt, self._retry_after(last)) or 0
        await self._host.emit(AutoRetryStartEvent(self.attempt, self.policy.max_retries, delay,
                                                  last.error_message or ""))
        await self._host.hide_failed(last)
        if await self._delay(delay / 1000):
            await self._host.emit(AutoRetryEndEvent(success=False, attempt=self.attempt,
                                                    final_error="Retry cancelled"))
            return False
        return True

    async def _delay(self, seconds: float) -> bool:
        """Wait before a retry; True when the wait was cancelled."""
        self._wait = asyncio.Event()
        try:
            await asyncio.wait_for(self._wait.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            self._wait = None


def _is_error(message: Any) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")


__all__ = ["AutoRetry", "RetryHost"]
