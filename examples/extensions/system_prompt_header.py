"""Port of pi's ``system-prompt-header`` example: a status item with the length of the system prompt the
run uses (``ctx.get_system_prompt()``)."""

from __future__ import annotations

from pi_core import AgentStartEvent, ExtensionContext, SessionShutdownEvent, hookimpl


@hookimpl
async def agent_start(event: AgentStartEvent, ctx: ExtensionContext) -> None:
    await ctx.ui.set_status("system-prompt", f"System: {len(ctx.get_system_prompt())} chars")


@hookimpl
async def session_shutdown(event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
    await ctx.ui.set_status("system-prompt", None)
