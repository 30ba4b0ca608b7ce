"""Virtual models (pi's ``registerVirtualModel``): a model in the list whose requests a plugin routes, one by
one, to real models of the same registry — a router that sends short questions to a fast model and hard ones
to a strong one, or picks a thinking level per request.

A virtual provider is a :class:`~pi_core.ai.ProviderConfig` with a ``route``; it is registered like any other
provider (``register_providers``, ``ctx.register_provider``) and selected like any model (``--model
router/auto``). Each request asks ``route`` first; the answer's model then serves that request with its own
wire protocol and credentials, and the answer says which model wrote it (``AssistantMessage.provider``/
``model``). The session keeps the virtual model selected.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .types import Context, Model

if TYPE_CHECKING:
    from .abort import AbortSignal
    from .options import StreamOptions
    from .registry import ModelRegistry, ProviderConfig

VIRTUAL_API = "virtual"


@dataclass
class RouteRequest:
    """One request to a virtual model: the ``model`` selected (the virtual one), the ``context`` about to be
    sent, the requested ``thinking_level`` (``None``: off), the run's ``signal`` and the session's
    ``registry`` (where the real models are found: ``registry.find(provider, id)``)."""

    model: Model
    context: Context
    thinking_level: str | None
    signal: AbortSignal | None
    registry: ModelRegistry

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
    """Where a request goes: a real ``model`` and, optionally, the ``thinking_level`` to use for it."""

    model: Model
    thinking_level: str | None = None


RouteFn = Callable[[RouteRequest], "Awaitable[Route] | Route"]


def virtual_provider(name: str, models: Sequence[Model | str], route: RouteFn, *,
                     display_name: str = "") -> ProviderConfig:
    """A provider whose models are virtual: each request is sent where ``route`` says. ``models`` are
    :class:`Model` objects or bare ids (a model with a 128k window and no cost)."""
    from .registry import ProviderConfig

    listed = [m if isinstance(m, Model) else Model(id=m, name=m, provider=name, api=VIRTUAL_API) for m in models]
    return ProviderConfig(name=name, api=VIRTUAL_API, models=listed, requires_api_key=False, route=route,
                          display_name=display_name)


async def resolve_route(config: ProviderConfig, model: Model, context: Context, options: StreamOptions,
                        registry: ModelRegistry) -> tuple[Model, StreamOptions]:
    """The real model (and options) serving this request to virtual ``model``."""
    assert config.route is not None
    request = RouteRequest(model, context, options.thinking, options.signal, registry)
    answer: Any = config.route(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if not isinstance(answer, Route):
        raise TypeError(f"the route of virtual provider {config.name!r} returned {type(answer).__name__}, not a Route")
    target = answer.model
    target_config = registry.get_provider(target.provider)
    if target.provider == model.provider or (target_config is not None and target_config.route is not None):
        raise ValueError(f"virtual model {model.provider}/{model.id} routed to another virtual model "
                         f"({target.provider}/{target.id})")
    if answer.thinking_level is not None:
        options = dataclasses.replace(options, reasoning=answer.thinking_level)
    return target, options


__all__ = ["Route", "RouteRequest", "VIRTUAL_API", "resolve_route", "virtual_provider"]
