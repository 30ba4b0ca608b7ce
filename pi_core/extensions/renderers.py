"""How plugins restyle the conversation in the terminal: message renderers by ``custom_type``
(``ctx.register_message_renderer``), entry renderers for their ``custom`` session entries
(``ctx.register_entry_renderer``), and tool renderers (a tool's own ``render_call`` / ``render_result``,
or any tool's through ``ctx.register_tool_renderer``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MessageRenderer = Callable[[Any, dict[str, Any], Any], Any]
"""``(message, options, theme) -> component | lines | None`` (``options["expanded"]``; ``None``: pi's
default row)."""


EntryRenderer = Callable[[Any, dict[str, Any], Any], Any]
"""``(entry, options, theme) -> component | lines | None`` for a ``custom`` entry (``entry.custom_type``,
``entry.data``, ``entry.id``, ``entry.timestamp``); ``None`` draws nothing, as without a renderer."""


@dataclass
class ToolRenderers:
    """How calls to a tool are drawn (pi's ``ToolRenderers``): ``render_call(args, theme, context)`` draws the
    call's header row(s), ``render_result(result, options, theme, context)`` its result; either may be
    ``None`` (pi's default) or return ``None`` for pi's default. A :class:`pi_core.Tool` has the same two
    attributes, so a resolver may return one."""

    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None


ToolRendererResolver = Callable[[str, Callable[[], Any]], Any]
"""``(tool_name, next) -> ToolRenderers | None``: ``next()`` gives what the resolvers registered after this
one, then the tool itself, would use (pi's ``ToolRendererResolver``)."""


@dataclass
class ToolRenderContext:
    """The last argument of a tool's renderers (pi's ``ToolRenderContext``, snake_cased): the call's
    ``args`` and ``tool_call_id``; ``state``, a dict kept across the call's renders; ``last_component``, what
    this renderer returned last time; ``execution_started``, ``args_complete``, ``is_partial`` (the result
    is still coming: ``tool_execution_update``), ``expanded`` (Ctrl+O), ``is_error``, ``duration_ms`` (once
    it finished); ``cwd``; ``invalidate()`` asks for a redraw of the call while it runs."""

    args: dict[str, Any]
    tool_call_id: str
    state: dict[str, Any] = field(default_factory=dict)
    last_component: Any = None
    cwd: str = ""
    execution_started: bool = False
    args_complete: bool = True
    is_partial: bool = False
    expanded: bool = False
    show_images: bool = False
    is_error: bool = False
    duration_ms: float | None = None
    output_pad: int = 0
    invalidate: Callable[[], None] = lambda: None


def call_renderer(render: Callable[..., Any], *args: Any, context: ToolRenderContext) -> Any:
    """``render(*args, context)``, or ``render(*args)`` for a renderer written without pi's context
    parameter."""
    try:
        parameters = inspect.signature(render).parameters.values()
    except (TypeError, ValueError):
        return render(*args, context)
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return render(*args, context)
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return render(*args, context) if len(positional) > len(args) else render(*args)


class RendererRegistry:
    def __init__(self) -> None:
        self.messages: dict[str, MessageRenderer] = {}
        self.entries: dict[str, EntryRenderer] = {}
        self.tools: list[ToolRendererResolver] = []

    def register_tool(self, resolver: ToolRendererResolver) -> None:
        if not callable(resolver):
            raise ValueError("register_tool_renderer: the resolver is not callable")
        if resolver not in self.tools:  # registered again from a later session_start: once is enough
            self.tools.append(resolver)

    def resolve_tool(self, name: str, base: Callable[[], Any]) -> Any:
        """The renderers for calls to ``name``: the resolvers in the order they were registered, each able
        to defer to the next; ``base()`` (the tool itself) last."""
        def resolve(index: int) -> Any:
            if index >= len(self.tools):
                return base()
            return self.tools[index](name, lambda: resolve(index + 1))

        return resolve(0)

    def register_entry(self, custom_type: str, renderer: EntryRenderer) -> None:
        if not callable(renderer):
            raise ValueError(f"register_entry_renderer({custom_type!r}): the renderer is not callable")
        self.entries[custom_type] = renderer

    def register_message(self, custom_type: str, renderer: MessageRenderer) -> None:
        if not callable(renderer):
            raise ValueError(f"register_message_renderer({custom_type!r}): the renderer is not callable")
        self.messages[custom_type] = renderer


__all__ = ["EntryRenderer", "MessageRenderer", "RendererRegistry", "ToolRenderContext", "ToolRendererResolver",
           "ToolRenderers", "call_renderer"]
