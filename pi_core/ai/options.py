"""What one request is given besides the model and the context: :class:`StreamOptions`, and the
signature of an API implementation (:data:`StreamFn`)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .abort import AbortSignal
from .types import Context, Model

if TYPE_CHECKING:
    from .auth.types import AuthResult
    from .event_stream import StreamWriter

#: Default thinking budgets (tokens) per level for budget-based providers.
DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
#: Levels above ``high`` fall back to ``high`` where a provider has nothing stronger.
LEVEL_ORDER = ("minimal", "low", "medium", "high", "xhigh", "max")


class RequestObserver(Protocol):
    """Sees a request's HTTP traffic (the plugin hooks ``before_provider_headers``,
    ``after_provider_response``, ``provider_stream_event``). Providers that speak HTTP call it."""

    async def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """The headers to send (may add, change or remove)."""

    async def response(self, status: int, headers: dict[str, str]) -> None:
        """The answer's status and headers, before its body is read."""

    async def stream_event(self, data: Any) -> None:
        """One parsed event of the answer's stream. An observer may also have ``wants_stream_events() ->
        bool``, asked once per request: ``False`` and the provider does not call this for that request."""


@dataclass
class StreamOptions:
    """Options of one request. API implementations read what applies to them and ignore the rest.

    ``reasoning`` is a thinking level (``minimal`` … ``xhigh``); ``None`` or ``"off"`` means no thinking
    parameters are sent. ``on_payload`` (sync or async) sees the provider payload before it is sent and
    may return a replacement. ``client`` is an ``httpx.AsyncClient`` to reuse (default: a pooled one per
    event loop). ``extra`` carries provider-specific options passed as keywords to ``stream()``.
    """

    api_key: str | None = None
    signal: AbortSignal | None = None
    reasoning: str | None = None
    thinking_budgets: dict[str, int] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    headers: dict[str, str] | None = None
    session_id: str | None = None
    on_payload: Callable[[Any], Any] | None = None
    client: Any = None
    cache_retention: str | None = None
    tool_choice: Any = None
    metadata: dict[str, Any] | None = None
    read_timeout: float | None = None
    observer: RequestObserver | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] | None = None
    """Environment values for this provider that take priority over the process environment (a stored
    credential's ``env`` object); read them with :meth:`getenv`."""
    auth: AuthResult | None = None
    """The resolved credential (set by ``stream()``): its kind, source and provider-specific extras."""
    route: Any = None
    """For a virtual model: what the session tells its router (a :class:`pi_core.ai.virtual.RouteContext`:
    the request's reason, the router state, the failed answer before a retry); ``None``: a direct request."""

    def getenv(self, name: str) -> str | None:
        """``name`` from :attr:`env`, else from the process environment (empty counts as unset)."""
        import os

        value = (self.env or {}).get(name) or os.environ.get(name)
        return value.strip() or None if value else None

    @property
    def thinking(self) -> str | None:
        """The requested thinking level, or ``None`` when thinking is off."""
        level = self.reasoning
        return None if level in (None, "", "off", "none") else level

    def budget_for(self, level: str) -> int:
        """Token budget of a level (``xhigh``/``max`` use ``high``'s), honouring ``thinking_budgets``."""
        budgets = {**DEFAULT_THINKING_BUDGETS, **(self.thinking_budgets or {})}
        return budgets.get("high" if level in ("xhigh", "max") else level, budgets["medium"])

    async def observe(self, data: Any) -> None:
        """Hand one parsed stream event to the observer (``provider_stream_event``)."""
        observe = self.stream_observer()
        if observe is not None:
            await observe(data)

    def stream_observer(self) -> Callable[[Any], Awaitable[None]] | None:
        """What :meth:`observe` calls, or ``None`` when nobody wants the parsed stream events; asked once
        per request, so a stream of many small deltas can skip the call (an observer without
        ``wants_stream_events()`` always wants them)."""
        observer = self.observer
        if observer is None:
            return None
        wants = getattr(observer, "wants_stream_events", None)
        return observer.stream_event if wants is None or wants() else None

    async def apply_on_payload(self, payload: Any) -> Any:
        """Run ``on_payload``; a non-``None`` result replaces the payload."""
        if self.on_payload is None:
            return payload
        result = self.on_payload(payload)
        if inspect.isawaitable(result):
            result = await result
        return payload if result is None else result


#: An API implementation: build the request for ``model`` and ``context``, stream the reply into the
#: writer, call ``writer.finish(...)`` at the end. Raise for failures; they become the ``error`` event.
StreamFn = Callable[[Model, Context, StreamOptions, "StreamWriter"], Awaitable[None]]

__all__ = ["DEFAULT_THINKING_BUDGETS", "RequestObserver", "StreamFn", "StreamOptions"]
