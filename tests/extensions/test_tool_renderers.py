"""``ctx.register_tool_renderer``: resolvers chosen in the order they were registered, each able to defer to
the next and to the tool's own renderers; pi's context argument for renderers that take it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core import ExtensionContext, ToolRenderContext, ToolRenderers
from pi_core.extensions.renderers import call_renderer


def test_resolvers_chain_to_the_tool_and_fill_in() -> None:
    ctx = ExtensionContext(Path("."))
    own = ToolRenderers(render_call=lambda args, theme: "own call")
    mine = ToolRenderers(render_call=lambda args, theme: "mine")

    def only_mcp(name: str, next_renderers: Any) -> Any:
        return next_renderers() if not name.startswith("mcp__") else (next_renderers() or mine)

    def shout(name: str, next_renderers: Any) -> Any:
        found = next_renderers()
        return ToolRenderers(render_call=lambda args, theme: f"{found.render_call(args, theme)}!") if found else None

    ctx.register_tool_renderer(shout)
    ctx.register_tool_renderer(only_mcp)
    ctx.register_tool_renderer(only_mcp)  # again (a later session_start): kept once
    resolve = ctx._renderers.resolve_tool
    assert len(ctx._renderers.tools) == 2
    assert resolve("read", lambda: own).render_call({}, None) == "own call!"
    assert resolve("mcp__x", lambda: None).render_call({}, None) == "mine!"  # not registered: filled in
    assert resolve("bash", lambda: None) is None  # nothing: pi's default drawing


def test_the_context_goes_to_renderers_that_take_it() -> None:
    context = ToolRenderContext(args={"path": "a"}, tool_call_id="call-1", is_partial=True)
    seen: list[Any] = []

    def with_context(result: Any, options: dict[str, Any], theme: Any, ctx: ToolRenderContext) -> str:
        seen.append(ctx.tool_call_id)
        ctx.state["renders"] = ctx.state.get("renders", 0) + 1
        return "drawn"

    def without(result: Any, options: dict[str, Any], theme: Any) -> str:
        return "plain"

    assert call_renderer(with_context, None, {}, None, context=context) == "drawn"
    assert call_renderer(without, None, {}, None, context=context) == "plain"
    assert call_renderer(lambda *parts: len(parts), None, {}, None, context=context) == 4
    assert seen == ["call-1"] and context.state == {"renders": 1}
