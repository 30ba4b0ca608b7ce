"""Virtual models (pi's ``registerVirtualModel``): a model in the list whose requests a plugin routes, one by
one, to real models of the same registry — a router that sends short questions to a fast model and hard ones
to a strong one, plans on one model and implements on another, or picks a thinking level per request.

A virtual provider is a :class:`~pi_core.ai.ProviderConfig` with a ``route``; it is registered like any other
provider (``register_providers``, ``ctx.register_provider``) and selected like any model (``--model
router/auto``). Each request asks ``route(request)`` (or ``route(request, ctx)``) first; the answer's model
then serves that request with its own wire protocol and credentials, and the answer says which model wrote
it (``AssistantMessage.provider``/``model``/``thinking_level``). The session keeps the virtual model selected.

As in pi, the request says *why* it is made (:attr:`RouteRequest.reason`: ``user``, ``continuation``,
``retry``, ``direct``), which model answered last (``previous``), what failed before a retry (``failed``),
and the router's own ``state``: whatever a :class:`Route` returned as ``state`` is stored on the session
branch (a ``custom`` entry of type ``pi.virtual-model-state``), so it follows forks and ``/tree``
navigation and survives compaction.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .types import AssistantMessage, Context, Model

if TYPE_CHECKING:
    from .abort import AbortSignal
    from .options import StreamOptions
    from .registry import ModelRegistry, ProviderConfig

VIRTUAL_API = "virtual"
#: The ``custom`` entry type that keeps router state on the session branch (pi's name).
VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state"

RouteReason = Literal["user", "continuation", "retry", "direct"]
"""Why a request is made: the first request after a message the user wrote (steering and follow-ups
included) is ``user``; any other request of the agent loop (after tool results or a plugin's message) is
``continuation``; an automatic retry (also after compaction for a context overflow) is ``retry``; a request
outside the agent loop (a compaction summary, a plugin calling ``ctx.model_registry.complete``) is
``direct``."""


@dataclass
class RoutedModel:
    """A real model that served (or failed) a request: ``model``, the ``thinking_level`` it was asked for,
    and (for :attr:`RouteRequest.failed`) the failed ``message`` with its ``stop_reason`` and
    ``error_message``."""

    model: Model
    thinking_level: str | None = None
    message: AssistantMessage | None = None


@dataclass
class RouteRequest:
    """One request to a virtual model: the ``model`` selected (the virtual one), the ``context`` about to be
    sent, the requested ``thinking_level`` (``None``: off), the run's ``signal`` and the session's
    ``registry`` (where the real models are found: ``registry.find(provider, id)``).

    :ivar reason: why the request is made (:data:`RouteReason`).
    :ivar previous: the model and thinking level of the newest successful answer in the context.
    :ivar failed: for ``retry``: the model, thinking level and message of the failed request (no longer in
        the context); ``None`` otherwise.
    :ivar state: the router state last returned on this session branch (``None`` at first, and always for
        ``direct`` requests).
    :ivar ctx: the session's plugin context when a session makes the request; ``None`` for a bare registry
        call.
    """

    model: Model
    context: Context
    thinking_level: str | None
    signal: AbortSignal | None
    registry: ModelRegistry
    reason: RouteReason = "direct"
    previous: RoutedModel | None = None
    failed: RoutedModel | None = None
    state: Any = None
    ctx: Any = None

    @property
    def messages(self) -> list[Any]:
        """The conversation of this request (pi's ``request.messages``)."""
        return list(self.context.messages)

    @property
    def last_user_text(self) -> str:
        """The text of the newest user message ("" when there is none)."""
        for message in reversed(self.context.messages):
            if getattr(message, "role", None) == "user":
                content = message.content
                if isinstance(content, str):
                    return content
                return "".join(getattr(part, "text", "") for part in content)
        return ""


@dataclass
class Route:
    """Where a request goes: a real ``model`` and, optionally, the ``thinking_level`` to use for it (clamped
    to what the model supports; ``None``: the level selected) and new router ``state`` (JSON; ``None`` or
    the request's own ``state`` keeps the stored state)."""

    model: Model
    thinking_level: str | None = None
    state: Any = None


@dataclass
class RouteContext:
    """What a session tells the router about a request (passed as the ``route=`` stream option): the
    ``reason``, the stored ``state``, the ``failed`` answer before a retry, the plugin ``ctx``, and
    ``on_state``, called with new state before the request is sent."""

    reason: RouteReason = "direct"
    state: Any = None
    failed: AssistantMessage | None = None
    ctx: Any = None
    on_state: Callable[[Any], Awaitable[None] | None] | None = None


RouteFn = Callable[..., "Awaitable[Route] | Route"]
"""``route(request)`` or ``route(request, ctx)``, sync or async, returning a :class:`Route`."""


def virtual_provider(name: str, models: Sequence[Model | str], route: RouteFn, *,
                     display_name: str = "") -> ProviderConfig:
    """A provider whose models are virtual: each request is sent where ``route`` says. ``models`` are
    :class:`Model` objects or bare ids (a model with a 128k window and no cost)."""
    from .registry import ProviderConfig

    listed = [m if isinstance(m, Model) else Model(id=m, name=m, provider=name, api=VIRTUAL_API) for m in models]
    return ProviderConfig(name=name, api=VIRTUAL_API, models=listed, requires_api_key=False, route=route,
                          display_name=display_name)


def latest_response(messages: Sequence[Any]) -> AssistantMessage | None:
    """The newest answer that neither failed nor was aborted."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
            return message
    return None


def router_state(entries: Sequence[dict[str, Any]], model: Model) -> Any:
    """The newest router state of ``model`` among ``custom`` entries (as stored, oldest first)."""
    for entry in reversed(entries):
        data = entry.get("data")
        if entry.get("customType") == VIRTUAL_MODEL_STATE_ENTRY and isinstance(data, dict) \
                and data.get("provider") == model.provider and data.get("modelId") == model.id:
            return data.get("state")
    return None


def _physical(registry: ModelRegistry, provider: str, model_id: str) -> Model | None:
    found = registry.find(provider, model_id)
    if found is None:
        return None
    config = registry.get_provider(found.provider)
    return None if config is not None and config.route is not None else found


def _takes_ctx(route: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(route).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


async def resolve_route(config: ProviderConfig, model: Model, context: Context, options: StreamOptions,
                        registry: ModelRegistry) -> tuple[Model, StreamOptions]:
    """The real model (and options) serving this request to virtual ``model``; the session's
    :class:`RouteContext` comes as ``options.route``."""
    assert config.route is not None
    info: RouteContext = options.route if isinstance(options.route, RouteContext) else RouteContext()
    direct = info.reason == "direct"
    latest = latest_response(context.messages)
    previous_model = _physical(registry, latest.provider, latest.model) if latest is not None else None
    failed = info.failed
    failed_model = _physical(registry, failed.provider, failed.model) if failed is not None else None
    state = None if direct else info.state
    request = RouteRequest(
        model, context, options.thinking, options.signal, registry, reason=info.reason,
        previous=RoutedModel(previous_model, latest.thinking_level) if previous_model and latest else None,
        failed=RoutedModel(failed_model, failed.thinking_level, failed) if failed_model and failed else None,
        state=state, ctx=info.ctx)
    answer: Any = config.route(request, info.ctx) if _takes_ctx(config.route) else config.route(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if not isinstance(answer, Route):
        raise TypeError(f"the route of virtual provider {config.name!r} returned {type(answer).__name__}, not a Route")
    name = f"virtual model {model.provider}/{model.id} routed to {answer.model.provider}/{answer.model.id}"
    target_config = registry.get_provider(answer.model.provider)
    if answer.model.provider == model.provider or (target_config is not None and target_config.route is not None):
        raise ValueError(f"{name}, another virtual model")
    target = registry.find(answer.model.provider, answer.model.id) or answer.model
    if not registry.has_configured_auth(target):
        raise ValueError(f"{name}, which has no credentials")
    if not direct and answer.state is not None and answer.state is not state and info.on_state is not None:
        stored = info.on_state(answer.state)  # before the request is sent; it stays if the request fails
        if inspect.isawaitable(stored):
            await stored
    from .request import clamp_thinking_level

    level = clamp_thinking_level(target, answer.thinking_level or options.thinking or "off")
    options = dataclasses.replace(options, reasoning=None if level == "off" else level, route=None)
    return target, options


__all__ = ["RouteContext", "RouteReason", "Route", "RouteRequest", "RoutedModel", "VIRTUAL_API",
           "VIRTUAL_MODEL_STATE_ENTRY", "latest_response", "resolve_route", "router_state", "virtual_provider"]
