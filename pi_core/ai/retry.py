"""Which failures are worth retrying, how long to wait, and an opt-in retrying stream.

:func:`classify_error` sorts a failure into ``overflow`` (compact, then retry — the runtime's job),
``transient`` (rate limits, overload, 5xx, dropped connections, timeouts: retry after a pause), ``auth``
(401/403, missing or rejected keys), ``fatal`` (other 4xx, refusals, quota exhaustion) or ``aborted``.
An HTTP status at the start of the message decides first, so a 400 whose body happens to contain
"500" is still fatal; texts without a status are matched against known transient phrasings.

:class:`RetryPolicy` holds pi's session-level defaults: 3 retries, 2 s base delay doubling per attempt,
a server-requested ``Retry-After`` honoured up to 60 s (a longer one fails fast).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .abort import AbortSignal
from .event_stream import ABORTED_MESSAGE, EventStream
from .events import ErrorEvent, RetryEvent
from .overflow import is_context_overflow, is_overflow_text
from .types import AssistantMessage

ErrorKind = Literal["overflow", "transient", "auth", "fatal", "aborted"]

_TRANSIENT = re.compile("|".join((
    r"overloaded", r"server_busy", r"servers are (?:currently )?busy", r"high demand", r"at capacity",
    r"rate.?limit", r"too many requests", r"(?<![a-z0-9])(?:408|409|425|429|5\d\d)(?![a-z0-9])",
    r"service.?(?:is.?)?(?:temporarily.?)?unavailable", r"server.?error", r"server (?:had|encountered) an error",
    r"internal.?error",
    r"provider.?returned.?(?:an.?)?error", r"upstream", r"stream was interrupted", r"network.?error",
    r"connection.?(?:error|reset|refused|lost|closed|aborted)", r"other side closed", r"fetch failed",
    r"socket hang up", r"ECONN(?:RESET|ABORTED|REFUSED)", r"ETIMEDOUT", r"EPIPE", r"ENOTFOUND", r"EAI_AGAIN",
    r"getaddrinfo", r"timed? ?out", r"timeout", r"ended without", r"ended before", r"peer closed",
    r"incomplete chunked read", r"resource.?exhausted", r"try (?:your request )?again", r"retry",
    # Sign in with ChatGPT: usage or user data briefly unavailable (may come mid-stream, without a status)
    r"subscription_sharing_usage_unavailable", r"subscription_sharing_user_unavailable",
)), re.IGNORECASE)
_QUOTA = re.compile(r"insufficient_quota|quota exceeded|exceeded your current quota|billing|available balance|"
                    r"out of budget|usage limit reached|credit balance is too low|"
                    # Sign in with ChatGPT: the subscription's shared limit (resets after hours), or the one a
                    # ChatGPT Business workspace admin set
                    r"subscription_sharing_usage_limit_exceeded|"
                    r"subscription_sharing_workplace_individual_usage_limit_exceeded", re.IGNORECASE)
_AUTH = re.compile(r"No API key for provider|invalid.?api.?key|incorrect api key|invalid x-api-key|"
                   r"authentication|unauthori[sz]ed|permission.?denied|API key not valid", re.IGNORECASE)
_STATUS = re.compile(r"^(\d{3})(?=[:\s]|$)")


def error_status(text: str) -> int | None:
    """The HTTP status an error text starts with (``"429: {...}"``, ``"400 {...}"``, Google's JSON)."""
    match = _STATUS.match(text.strip())
    if match:
        return int(match.group(1))
    if text.startswith("{"):
        from ..safejson import parse_json

        try:
            data = parse_json(text)
        except ValueError:
            return None
        code = (data.get("error") or {}).get("code") if isinstance(data, dict) and isinstance(data.get("error"), dict) \
            else None
        return code if isinstance(code, int) else None
    return None


def _kind_of_status(status: int, text: str) -> ErrorKind | None:
    if status in (401, 403):
        return "auth"
    if status in (408, 409, 425, 429) or 500 <= status <= 599:
        return "fatal" if _QUOTA.search(text) else "transient"
    if 400 <= status <= 499:
        return "auth" if _AUTH.search(text) else "fatal"
    return None


def classify_error(error: AssistantMessage | BaseException | str | Any, *, provider: str | None = None,
                   context_window: int | None = None) -> ErrorKind:
    """Sort a failed reply, an exception or an error text; see the module docstring."""
    status: int | None = getattr(error, "status", None) if not isinstance(error, AssistantMessage) else None
    if isinstance(error, ErrorEvent):
        error = error.message
    if isinstance(error, AssistantMessage):
        if error.stop_reason == "aborted":
            return "aborted"
        if is_context_overflow(error, context_window):
            return "overflow"
        text, provider = error.error_message or "", provider or error.provider
    elif isinstance(error, asyncio.CancelledError):
        return "aborted"
    else:
        text = str(error)
    if is_overflow_text(text, provider):
        return "overflow"
    status = status or error_status(text)
    by_status = _kind_of_status(status, text) if status else None
    if by_status is not None:
        return by_status
    if _AUTH.search(text):
        return "auth"
    if _QUOTA.search(text):
        return "fatal"
    return "transient" if _TRANSIENT.search(text) else "fatal"


#: Retries of a request that went silent (``httpIdleTimeoutMs``), whatever ``max_retries`` allows: a
#: server that hangs once may answer the next request; one that hangs twice is reported.
IDLE_TIMEOUT_RETRIES = 1


def is_idle_timeout(message: AssistantMessage | Any) -> bool:
    """Whether a failed reply is an idle timeout (the provider sent nothing for ``httpIdleTimeoutMs``)."""
    from .http import IDLE_TIMEOUT_PREFIX

    text = getattr(message, "error_message", None)
    return isinstance(text, str) and text.startswith(IDLE_TIMEOUT_PREFIX)


@dataclass
class RetryPolicy:
    """Backoff for transient failures: ``base_delay_ms · 2^(attempt-1)``, at most ``max_retries`` times."""

    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000
    enabled: bool = True

    def delay_ms(self, attempt: int, retry_after_ms: int | None = None) -> int | None:
        """Wait before ``attempt`` (1-based); ``None`` when the server asks for longer than allowed."""
        if retry_after_ms is not None:
            return retry_after_ms if not self.max_delay_ms or retry_after_ms <= self.max_delay_ms else None
        delay = self.base_delay_ms * 2 ** max(0, attempt - 1)
        return min(delay, self.max_delay_ms) if self.max_delay_ms else delay

    def should_retry(self, message: AssistantMessage, attempt: int, context_window: int | None = None) -> bool:
        """Whether a failed reply deserves attempt number ``attempt`` (1-based)."""
        if is_idle_timeout(message) and attempt > IDLE_TIMEOUT_RETRIES:
            return False
        return (self.enabled and attempt <= self.max_retries and message.stop_reason == "error"
                and classify_error(message, context_window=context_window) == "transient")


async def _sleep(delay_ms: int, signal: AbortSignal | None) -> bool:
    """Sleep; ``False`` when the signal fired first."""
    if signal is None:
        await asyncio.sleep(delay_ms / 1000)
        return True
    if signal.aborted:
        return False
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait_for(asyncio.shield(waiter), delay_ms / 1000)
        return False
    except asyncio.TimeoutError:
        return True
    finally:
        waiter.cancel()


def retrying_stream(start: Callable[[], EventStream], policy: RetryPolicy,
                    signal: AbortSignal | None = None) -> EventStream:
    """An event stream that re-runs ``start()`` after transient failures.

    Between attempts a :class:`~pi_core.ai.RetryEvent` is emitted (carrying the failed message); the next
    attempt begins with its own ``start`` event. Only the last attempt's terminal event is delivered.
    Overflows, 4xx errors and aborts are never retried.
    """
    outer = EventStream()

    async def run() -> None:
        attempt = 0
        while True:
            inner = start()
            final: Any = None
            try:
                async for event in inner:
                    if event.terminal:
                        final = event
                        break
                    outer.push(event)
            except asyncio.CancelledError:  # the outer stream was closed: stop the attempt too
                await inner.aclose()
                outer.push(inner.final_event or ErrorEvent("aborted", AssistantMessage(
                    stop_reason="aborted", error_message=ABORTED_MESSAGE)))
                return
            final = final or inner.final_event
            message = final.message
            delay = policy.delay_ms(attempt + 1, getattr(final, "retry_after_ms", None))
            if delay is None or not policy.should_retry(message, attempt + 1):
                outer.push(final)
                return
            attempt += 1
            outer.push(RetryEvent(attempt, policy.max_retries, delay, message))
            if not await _sleep(delay, signal):
                message.stop_reason, message.error_message = "aborted", ABORTED_MESSAGE
                outer.push(ErrorEvent("aborted", message))
                return

    def orphaned() -> None:
        if not outer.done:
            message = AssistantMessage(stop_reason="aborted", error_message=ABORTED_MESSAGE)
            outer.push(ErrorEvent("aborted", message))

    outer._bind(run, orphaned)
    return outer


__all__ = ["ErrorKind", "RetryPolicy", "classify_error", "error_status", "retrying_stream"]
