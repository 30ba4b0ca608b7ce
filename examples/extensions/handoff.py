"""Port of pi's ``handoff`` example: ``/handoff <goal>`` writes a self-contained prompt for a new, focused
session from this conversation and the goal (instead of a lossy compaction), lets you edit it, then opens a
new session (its parent is this one) with the prompt in the editor.

In the terminal a cancellable loader (``BorderedLoader``, Esc stops the request) shows while the prompt is
written, as in pi. pi's needs the terminal; this port also works with other UIs that have an editor
dialog (RPC clients), with a notice instead of the loader."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pi_core import (
    AgentMessage,
    Command,
    CommandContext,
    CompactionSummaryMessage,
    SessionEntry,
    TextContent,
    UserMessage,
    convert_to_llm,
    hookimpl,
    serialize_conversation,
)
from pi_core.ai import Context
from pi_core.tui import BorderedLoader

SYSTEM_PROMPT = """You hand work over to a fresh conversation. From the conversation history and the user's
goal for the new thread, write one prompt that:

1. Sums up the context that matters (decisions, approaches, findings)
2. Names the files that were discussed or changed
3. States the next task, following the user's goal
4. Stands on its own: the new thread never sees the old conversation

Write only the prompt itself, without an introduction; brief, but with everything needed."""


def _as_message(entry: Any) -> Any:
    if entry.type == "message":
        return entry.message
    if entry.type == "compaction":
        return CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before)
    return None


def handoff_messages(branch: list[SessionEntry]) -> list[AgentMessage]:
    """The branch as the model sees it: after the last compaction, its summary and the entries it kept."""
    last = max((i for i, e in enumerate(branch) if e.type == "compaction"), default=-1)
    if last >= 0:
        compaction: Any = branch[last]
        kept = next((i for i, e in enumerate(branch) if e.id == compaction.first_kept_entry_id), None)
        branch = [compaction, *(branch[kept:last] if kept is not None else []), *branch[last + 1:]]
    return [m for m in map(_as_message, branch) if m is not None]


RUNNING: set[asyncio.Future[None]] = set()  # requests in flight (a task nobody holds may be collected)


def loader(tui: Any, theme: Any, done: Callable[[str | None], None],
           generate: Callable[[Any], Awaitable[str | None]]) -> BorderedLoader:
    """pi's loader while the prompt is written: Esc aborts the request and cancels the handoff."""
    shown = BorderedLoader(tui, theme, "Generating handoff prompt...")
    shown.on_abort = lambda: done(None)

    async def run() -> None:
        try:
            done(await generate(shown.signal))
        except Exception:  # a failed request ends the loader, as in pi
            done(None)

    task = asyncio.ensure_future(run())
    RUNNING.add(task)
    task.add_done_callback(RUNNING.discard)
    return shown


async def handoff(args: str, ctx: CommandContext) -> None:
    if not ctx.has_ui:
        await ctx.ui.notify("handoff needs a UI with an editor", "error")
        return
    if ctx.model is None:
        await ctx.ui.notify("No model selected", "error")
        return
    goal = args.strip()
    if not goal:
        await ctx.ui.notify("Usage: /handoff <goal for new thread>", "error")
        return
    messages = handoff_messages(ctx.session.get_branch())
    if not messages:
        await ctx.ui.notify("No conversation to hand off", "error")
        return
    conversation = serialize_conversation(convert_to_llm(messages))
    parent = ctx.session.session_file
    model = ctx.model

    async def generate(signal: Any) -> str | None:
        request = UserMessage(content=[TextContent(
            text=f"## Conversation History\n\n{conversation}\n\n## User's Goal for New Thread\n\n{goal}")])
        response = await ctx.model_registry.complete(model, Context(system_prompt=SYSTEM_PROMPT, messages=[request]),
                                                     signal=signal)
        if response.stop_reason in ("aborted", "error"):
            return None
        return "\n".join(block.text for block in response.content if isinstance(block, TextContent))

    if ctx.mode == "tui":
        draft = await ctx.ui.custom(lambda tui, theme, kb, done: loader(tui, theme, done, generate))
    else:
        await ctx.ui.notify("Generating handoff prompt...", "info")
        draft = await generate(ctx.signal)
    if draft is None:
        await ctx.ui.notify("Cancelled", "info")
        return
    edited = await ctx.ui.editor("Edit handoff prompt", draft)
    if edited is None:
        await ctx.ui.notify("Cancelled", "info")
        return
    result = await ctx.new_session(parent_session=parent)
    if result.cancelled:
        await ctx.ui.notify("New session cancelled", "info")
        return
    await ctx.ui.set_editor_text(edited)  # the same ctx now speaks for the new session
    await ctx.ui.notify("Handoff ready. Submit when ready.", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("handoff", handoff, "Transfer context to a new focused session", usage="<goal>"))
