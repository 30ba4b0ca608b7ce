"""``stream()`` and ``complete()``: the entry points of the model layer.

``stream`` never raises for provider failures: an unknown API, a missing key, an HTTP error, a cut
connection or an abort all end the stream with an ``error`` event whose message has ``stop_reason``
``error`` or ``aborted`` and an ``error_message``. Abort cancels the producer task, which closes the HTTP
stream; the aborted message keeps what had arrived.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Any

from .abort import AbortSignal
from .auth.resolve import login_hint
from .auth.types import AuthResult
from .errors import MissingApiKeyError, ProviderError, ProviderHTTPError, describe_exception
from .http import merge_headers
from .event_stream import ABORTED_MESSAGE, EventStream, StreamWriter
from .options import StreamOptions
from .registry import ModelRegistry, default_registry
from .types import AssistantMessage, Context, Model


def _as_context(context: Context | dict[str, Any]) -> Context:
    return context if isinstance(context, Context) else Context.model_validate(context)


def stream(model: Model, context: Context | dict[str, Any], *, registry: ModelRegistry | None = None,
           api_key: str | None = None, signal: AbortSignal | None = None, reasoning: str | None = None,
           max_tokens: int | None = None, temperature: float | None = None,
           headers: dict[str, str] | None = None, session_id: str | None = None, on_payload: Any = None,
           client: Any = None, retry: Any = None, observer: Any = None, **extra: Any) -> EventStream:
    """Stream one assistant reply: an async iterator of events whose last event carries the final message.

    ``reasoning`` is a thinking level (``"off"``/``None`` = none). ``retry`` (``True`` or a
    :class:`~pi_core.ai.RetryPolicy`) retries transient failures with backoff, emitting a ``retry`` event
    between attempts. Other keywords (``thinking_budgets``, ``cache_retention``, ``tool_choice``,
    ``metadata``, ``read_timeout``, provider-specific ones) are passed to the API implementation.
    """
    options = StreamOptions(
        api_key=api_key, signal=signal, reasoning=reasoning, max_tokens=max_tokens, temperature=temperature,
        headers=headers, session_id=session_id, on_payload=on_payload, client=client,
        thinking_budgets=extra.pop("thinking_budgets", None), cache_retention=extra.pop("cache_retention", None),
        tool_choice=extra.pop("tool_choice", None), metadata=extra.pop("metadata", None),
        read_timeout=extra.pop("read_timeout", None), observer=observer, route=extra.pop("route", None),
        extra=extra)
    if retry:
        from .retry import RetryPolicy, retrying_stream

        policy = retry if isinstance(retry, RetryPolicy) else RetryPolicy()
        return retrying_stream(lambda: _start(model, _as_context(context), options, registry), policy, signal)
    return _start(model, _as_context(context), options, registry)


def _start(model: Model, context: Context, options: StreamOptions, registry: ModelRegistry | None) -> EventStream:
    events = EventStream()
    writer = StreamWriter(model, events)

    def orphaned() -> None:
        aborted = options.signal is not None and options.signal.aborted
        writer.fail(ABORTED_MESSAGE if aborted else "The model stream stopped without a result", aborted=True)

    events._bind(lambda: _produce(model, context, options, registry, writer), orphaned)
    return events


async def _produce(model: Model, context: Context, options: StreamOptions, registry: ModelRegistry | None,
                   writer: StreamWriter) -> None:
    options = dataclasses.replace(options)  # credentials are filled in per attempt; a retry starts afresh
    signal = options.signal
    remove = None
    if signal is not None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        remove = signal.add_callback(lambda: loop.call_soon_threadsafe(task.cancel))
    try:
        if signal is not None and signal.aborted:
            raise asyncio.CancelledError
        reg = registry if registry is not None else default_registry()
        routed = reg.get_provider(model.provider)
        if routed is not None and routed.route is not None:  # a virtual model: a real one serves this request
            from .virtual import resolve_route

            model, options = await resolve_route(routed, model, context, options, reg)
            writer.model = model
            writer.message.api, writer.message.provider, writer.message.model = model.api, model.provider, model.id
            writer.message.thinking_level = options.reasoning or "off"  # the level dispatched, as pi records it
        api = reg.get_api(model.api)
        if api is None:
            raise ProviderError(f"No API provider registered for api: {model.api}")
        auth = await reg.resolve_auth(model.provider, options.api_key)
        config = reg.get_provider(model.provider)
        given = options.headers
        if config is not None and config.request_headers is not None:
            given = merge_headers(config.request_headers(context, options), given)
        prepare = config.prepare if config is not None else None
        try:
            await api.stream(_authenticated(model, options, auth, given, prepare), context, options, writer)
        except ProviderHTTPError as exc:
            if exc.status != 401 or auth is None or auth.kind != "oauth" or writer.started:
                raise
            # The token was refused before it expired (revoked, or rotated by another client): refresh once.
            auth = await reg.resolve_auth(model.provider, reject=auth)
            try:
                await api.stream(_authenticated(model, options, auth, given, prepare), context, options, writer)
            except ProviderHTTPError as again:
                if again.status != 401 or writer.started:
                    raise
                raise ProviderError(f"{again} (the {model.provider} sign-in was refused even after refreshing "
                                    f"its token; {login_hint(model.provider)})", status=401) from again
        if not writer.finished:
            writer.finish()
    except asyncio.CancelledError:
        writer.fail(ABORTED_MESSAGE, aborted=True)
    except Exception as exc:
        if isinstance(exc, MissingApiKeyError) and not exc.hint:  # name the fix: where a key can go
            registry = registry if registry is not None else default_registry()
            exc = MissingApiKeyError(exc.provider, registry.api_key_hint(exc.provider))
        aborted = signal is not None and signal.aborted
        writer.fail(ABORTED_MESSAGE if aborted else describe_exception(exc), aborted=aborted,
                    status=getattr(exc, "status", None), retry_after_ms=getattr(exc, "retry_after_ms", None))
    finally:
        if remove is not None:
            remove()


def _authenticated(model: Model, options: StreamOptions, auth: AuthResult | None,
                   given: dict[str, str] | None, prepare: Any = None) -> Model:
    """Apply ``auth`` to the options (key, headers, env) and return the model to call (with the
    credential's base URL, for providers whose endpoint depends on the account)."""
    options.auth = auth
    options.headers = given
    options.api_key = auth.api_key if auth is not None else None
    if auth is not None and auth.env:
        options.env = {**auth.env, **(options.env or {})}
    if auth is not None and auth.headers:  # model headers beat auth headers, as in pi; given headers beat both
        options.headers = merge_headers(auth.headers, model.headers, given)
    if auth is not None and auth.base_url:
        model = model.model_copy(update={"base_url": auth.base_url})
    if prepare is not None:
        model = prepare(model, options)
    return _fill_base_url(model, options)


_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


def _fill_base_url(model: Model, options: StreamOptions) -> Model:
    """``{NAME}`` in the base URL replaced by the environment value ``NAME`` (credential env first)."""
    names = _PLACEHOLDER.findall(model.base_url)
    if not names:
        return model
    missing = [n for n in names if not options.getenv(n)]
    if missing:
        raise ProviderError(f"{model.provider} needs {', '.join(missing)}: set it in the environment or in the "
                            f"\"env\" object of its auth.json entry (/login {model.provider} asks for it)")
    url = _PLACEHOLDER.sub(lambda m: options.getenv(m.group(1)) or "", model.base_url)
    return model.model_copy(update={"base_url": url})


async def complete(model: Model, context: Context | dict[str, Any], **options: Any) -> AssistantMessage:
    """The final assistant message of :func:`stream` (same options; never raises for provider failures)."""
    events = stream(model, context, **options)
    async for _ in events:
        pass
    return await events.result()


__all__ = ["complete", "stream"]
