"""What the session tells a virtual model's router about each request (pi's ``prepareRequest`` for virtual
models): why the request is made, the router state stored on the branch, the failed answer before a retry.

The model layer does the routing (:func:`pi_core.ai.virtual.resolve_route`); this module only builds the
:class:`~pi_core.ai.virtual.RouteContext` it is given as the ``route=`` stream option, and stores the state a
route returns as a ``custom`` entry of type ``pi.virtual-model-state`` on the current branch, before the
request is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..ai.types import AssistantMessage, Model
from ..ai.virtual import VIRTUAL_MODEL_STATE_ENTRY, RouteContext, RouteReason, router_state
from .events import EntryAppendedEvent


class RoutingHost(Protocol):
    """What :class:`VirtualRouting` uses of the session."""

    @property
    def messages(self) -> list[Any]: ...

    @property
    def session(self) -> Any: ...

    @property
    def models(self) -> Any: ...

    @property
    def ctx(self) -> Any: ...

    async def emit(self, event: Any) -> None: ...


class VirtualRouting:
    """One session's routing inputs: the failed answer a retry is about (set when the session hides it)."""

    def __init__(self, host: RoutingHost) -> None:
        self._host = host
        self.failed: AssistantMessage | None = None

    def is_virtual(self, model: Model) -> bool:
        config = self._host.models.get_provider(model.provider)
        return config is not None and config.route is not None

    def wrap(self, stream: Callable[..., Any]) -> Callable[..., Any]:
        """The agent loop's stream: a request to a virtual model carries its :class:`RouteContext`."""

        def routed(model: Model, context: Any, **options: Any) -> Any:
            failed, self.failed = self.failed, None
            if self.is_virtual(model):
                options["route"] = self.context(model, failed)
            return stream(model, context, **options)

        return routed

    def direct(self, model: Model, options: dict[str, Any]) -> dict[str, Any]:
        """Options for a request outside the agent loop (compaction, branch summaries)."""
        if self.is_virtual(model):
            options["route"] = RouteContext("direct", ctx=self._host.ctx)
        return options

    def context(self, model: Model, failed: AssistantMessage | None) -> RouteContext:
        host = self._host
        messages = host.messages
        last = max((i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)), default=-1)
        # only messages the user wrote start a turn; a plugin's message after them does not (pi's rule)
        user_turn = any(getattr(m, "role", None) == "user" for m in messages[last + 1:])
        reason: RouteReason = "retry" if failed is not None else "user" if user_turn else "continuation"
        state = router_state(host.session.get_custom_entries(VIRTUAL_MODEL_STATE_ENTRY), model)

        async def store(value: Any) -> None:
            data = {"provider": model.provider, "modelId": model.id, "state": value}
            entry_id = host.session.append_custom_entry(VIRTUAL_MODEL_STATE_ENTRY, data)
            await host.emit(EntryAppendedEvent(host.session.get_raw_entry(entry_id) or {"id": entry_id}))

        return RouteContext(reason, state, failed, host.ctx, store)


__all__ = ["RoutingHost", "VirtualRouting"]
