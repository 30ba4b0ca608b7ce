"""Port of pi's ``jev-router`` example: a virtual model ``router/auto`` that plans on a strong model and
implements on a cheap one (pi's ``registerVirtualModel``). Use it with ``pi -e model_router.py --model
router/auto``.

* Planning: the *complex* model for demanding work, the *plan* model otherwise. A classifier rates the first
  user message; planning stays on the model it chose. A session that already answered on one of the two
  planning models keeps it (switching to ``router/auto`` then costs no prompt-cache miss).
* Implementation: after the first successful ``edit`` or ``write`` of a turn, the next request goes to the
  *build* model, and the session stays there: it switches once.

The phase is router state: pi stores it on the session branch, so it follows the tree and survives
compaction. The selected thinking level passes through to the chosen model. Requests outside the agent loop
(compaction summaries) go to the build model. The status line shows where the last request went and why;
``/router`` tells the same.

The models are ``provider/id`` names in ``PI_ROUTER_COMPLEX``, ``PI_ROUTER_PLAN`` and ``PI_ROUTER_BUILD``
(default: Anthropic's Opus, Sonnet and Haiku). pi's classifier is a dedicated classifier model (Jev, through
``modelRegistry.classify``); this port asks the chat model named in ``PI_ROUTER_CLASSIFIER`` to answer
``standard`` or ``complex`` through ``ctx.model_registry.complete``. Without one (pi: without Jev) planning
uses the plan model.
"""

from __future__ import annotations

import os
from typing import Any

from pi_core import AssistantMessage, Command, CommandContext, ExtensionContext, MessageEndEvent, hookimpl
from pi_core.ai import Context, Model, Route, RouteRequest, UserMessage, virtual_provider

EDIT_TOOLS = frozenset({"edit", "write"})
"""Tools whose successful result means implementation has started."""
DEFAULTS = {"PI_ROUTER_COMPLEX": "anthropic/claude-opus-4-5", "PI_ROUTER_PLAN": "anthropic/claude-sonnet-4-5",
            "PI_ROUTER_BUILD": "anthropic/claude-haiku-4-5"}
CLASSIFY = ("Rate how demanding the software engineering work requested below is. Answer with one word: "
            "`standard` (ordinary features, fixes, reviews or questions) or `complex` (subtle design, "
            "cross-cutting changes or hard debugging).")
last_route: list[str] = []


def _name(variable: str) -> str:
    return os.environ.get(variable) or DEFAULTS[variable]


def _model(request: RouteRequest, variable: str) -> Model:
    provider, _, model_id = _name(variable).partition("/")
    model = request.registry.find(provider, model_id)
    if model is None:
        raise ValueError(f"router: {variable}={_name(variable)} is not a known model")
    return model


def _route(request: RouteRequest, variable: str, state: dict[str, str] | None = None) -> Route:
    model = _model(request, variable)
    last_route[:] = [request.reason, (state or request.state or {}).get("phase", "-")]
    return Route(model, thinking_level=request.thinking_level, state=state)


def _edited_this_turn(request: RouteRequest) -> bool:
    """Whether a tool call since the last user message edited a file successfully."""
    messages = request.messages
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    after = messages[users[-1] + 1:] if users else messages
    return any(m.role == "toolResult" and m.tool_name in EDIT_TOOLS and not m.is_error for m in after)


async def _planning_variable(request: RouteRequest, ctx: ExtensionContext | None) -> str:
    """The planning model of a new session: the complex one for demanding work, the plan one otherwise."""
    previous = request.previous.model if request.previous else None
    for variable in ("PI_ROUTER_COMPLEX", "PI_ROUTER_PLAN"):  # keep a planning model the session already uses
        if previous is not None and f"{previous.provider}/{previous.id}" == _name(variable):
            return variable
    classifier_name = os.environ.get("PI_ROUTER_CLASSIFIER")
    provider, _, model_id = (classifier_name or "").partition("/")
    classifier = request.registry.find(provider, model_id) if classifier_name else None
    if classifier is None or ctx is None:
        return "PI_ROUTER_PLAN"
    answer = await ctx.model_registry.complete(
        classifier, Context(system_prompt=CLASSIFY, messages=[UserMessage(content=request.last_user_text[:16_000])]),
        max_tokens=8, signal=request.signal)
    text = "".join(getattr(part, "text", "") for part in answer.content).lower()
    return "PI_ROUTER_COMPLEX" if answer.stop_reason == "stop" and "complex" in text else "PI_ROUTER_PLAN"


async def route(request: RouteRequest, ctx: ExtensionContext | None) -> Route:
    if request.reason == "direct":
        return _route(request, "PI_ROUTER_BUILD")
    state = request.state
    if not state:
        variable = await _planning_variable(request, ctx)
        return _route(request, variable, {"phase": "planning", "model": variable})
    if state["phase"] == "planning" and _edited_this_turn(request):  # the planner made the first edit
        return _route(request, "PI_ROUTER_BUILD", {"phase": "implementation", "model": "PI_ROUTER_BUILD"})
    return _route(request, state["model"])


AUTO = Model(id="auto", name="Auto (router)", provider="router", api="virtual", reasoning=True,
             thinking_level_map={"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high",
                                 "xhigh": "xhigh"},
             context_window=200_000, max_tokens=64_000)


@hookimpl
def register_providers(register: Any) -> None:
    register(virtual_provider("router", [AUTO], route))


@hookimpl
async def message_end(event: MessageEndEvent, ctx: ExtensionContext) -> None:
    message = event.message
    if isinstance(message, AssistantMessage) and ctx.model is not None and ctx.model.provider == "router" \
            and last_route:
        reason, phase = last_route[:2]
        last_route[2:] = [f"{message.provider}/{message.model}"]
        await ctx.ui.set_status("router", f"router → {message.provider}/{message.model} ({reason}, {phase})")


async def show_route(args: str, ctx: CommandContext) -> None:
    if len(last_route) < 3:
        await ctx.ui.notify("no request routed yet", "info")
        return
    reason, phase, target = last_route
    await ctx.ui.notify(f"last request went to {target} ({reason} request, {phase} phase)", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("router", show_route, "Show which model served the last request, and why"))
