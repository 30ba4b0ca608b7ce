"""Port of pi's ``trigger-compact`` example: compact once the context grows past 100k tokens (checked after
each turn), or at once with ``/trigger-compact [instructions]``."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, CompactionResult, ExtensionContext, TurnEndEvent, hookimpl

COMPACT_THRESHOLD_TOKENS = 100_000
_previous: dict[str, int | None] = {}


async def trigger_compaction(ctx: ExtensionContext, custom_instructions: str | None = None) -> None:
    async def completed(result: CompactionResult) -> None:
        if ctx.has_ui:
            await ctx.ui.notify("Compaction completed", "info")

    async def failed(error: Exception) -> None:
        if ctx.has_ui:
            await ctx.ui.notify(f"Compaction failed: {error}", "error")

    if ctx.has_ui:
        await ctx.ui.notify("Compaction started", "info")
    ctx.compact(custom_instructions=custom_instructions, on_complete=completed, on_error=failed)


@hookimpl
async def turn_end(event: TurnEndEvent, ctx: ExtensionContext) -> None:
    tokens = ctx.get_context_usage().tokens
    if tokens is None:
        return
    previous = _previous.get("tokens")
    _previous["tokens"] = tokens
    if previous is not None and previous <= COMPACT_THRESHOLD_TOKENS < tokens:
        await trigger_compaction(ctx)


async def trigger_compact(args: str, ctx: CommandContext) -> None:
    await trigger_compaction(ctx, args.strip() or None)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("trigger-compact", trigger_compact, "Compact the session now", usage="[instructions]"))
