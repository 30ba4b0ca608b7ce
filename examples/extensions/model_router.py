"""Port of pi's ``jev-router`` example, without its Jev classifier: a virtual model ``router/auto`` whose
requests are routed one by one to real models (pi's ``registerVirtualModel``).

A request whose newest user message is short or plain goes to the fast model; a long one, or one asking to
think, plan or debug, goes to the strong model with ``high`` thinking. Use it with ``pi --model router/auto``.
The status line shows which model answered the last request; ``/router`` tells the same.

The models are ``provider/id`` names in ``PI_ROUTER_FAST`` and ``PI_ROUTER_STRONG`` (default: Anthropic's Haiku
and Sonnet). pi's version asks a classifier model (``modelRegistry.classify``); this one decides by the text.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pi_core import AssistantMessage, Command, CommandContext, ExtensionContext, MessageEndEvent, hookimpl
from pi_core.ai import Model, Route, RouteRequest, virtual_provider

HARD = re.compile(r"\b(think|plan|design|debug|prove|why)\b", re.IGNORECASE)
LONG = 400
last_route: list[str] = []


def _model(request: RouteRequest, variable: str, default: str) -> Model:
    name = os.environ.get(variable, default)
    provider, _, model_id = name.partition("/")
    model = request.registry.find(provider, model_id)
    if model is None:
        raise ValueError(f"router: {variable}={name} is not a known model")
    return model


def route(request: RouteRequest) -> Route:
    text = request.last_user_text
    if len(text) > LONG or HARD.search(text):
        return Route(_model(request, "PI_ROUTER_STRONG", "anthropic/claude-sonnet-4-5"), thinking_level="high")
    return Route(_model(request, "PI_ROUTER_FAST", "anthropic/claude-haiku-4-5"))


@hookimpl
def register_providers(register: Any) -> None:
    register(virtual_provider("router", [Model(id="auto", name="Auto (routed per request)", provider="router",
                                               api="virtual", reasoning=True)], route))


@hookimpl
async def message_end(event: MessageEndEvent, ctx: ExtensionContext) -> None:
    message = event.message
    if isinstance(message, AssistantMessage) and ctx.model is not None and ctx.model.provider == "router":
        last_route[:] = [f"{message.provider}/{message.model}"]
        await ctx.ui.set_status("router", f"router → {last_route[0]}")


async def show_route(args: str, ctx: CommandContext) -> None:
    await ctx.ui.notify(f"last request went to {last_route[0]}" if last_route else "no request routed yet", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("router", show_route, "Show which model served the last request"))
