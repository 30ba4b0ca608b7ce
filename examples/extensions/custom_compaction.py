"""Port of pi's ``custom-compaction`` example: compaction summarizes *everything* (the messages to
summarize and the split turn's prefix) with a cheaper model, and the summary replaces the whole history.

The summarizer is ``google/gemini-2.5-flash`` as in pi, or ``$PI_SUMMARY_MODEL`` (``provider/id``)."""

from __future__ import annotations

import os

from pi_core import (
    CompactionOverride,
    ExtensionContext,
    SessionBeforeCompactEvent,
    TextContent,
    UserMessage,
    convert_to_llm,
    hookimpl,
    serialize_conversation,
)
from pi_core.ai import Context

INSTRUCTIONS = """Summarize this conversation so that it can replace the whole history. Capture:{previous}

1. The goals and what was asked
2. Decisions taken and why
3. Code changes, files touched and technical details that matter
4. Where the work stands now
5. Problems, blockers and open questions
6. The next steps that were planned

Be complete but brief; write structured markdown with sections.

<conversation>
{conversation}
</conversation>"""


def summary_model() -> tuple[str, str]:
    provider, _, model_id = os.environ.get("PI_SUMMARY_MODEL", "google/gemini-2.5-flash").partition("/")
    return provider, model_id


@hookimpl
async def session_before_compact(event: SessionBeforeCompactEvent, ctx: ExtensionContext) -> CompactionOverride | None:
    await ctx.ui.notify("Custom compaction extension triggered", "info")
    preparation = event.preparation
    model = ctx.model_registry.find(*summary_model())
    if model is None:
        await ctx.ui.notify("Could not find the summary model, using the default compaction", "warning")
        return None
    messages = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
    await ctx.ui.notify(f"Custom compaction: summarizing {len(messages)} messages "
                        f"({preparation.tokens_before:,} tokens) with {model.id}...", "info")
    previous = (f"\n\nThe previous summary of this session, for context:\n{preparation.previous_summary}"
                if preparation.previous_summary else "")
    prompt = INSTRUCTIONS.format(previous=previous, conversation=serialize_conversation(convert_to_llm(messages)))
    try:
        response = await ctx.model_registry.complete(
            model, Context(messages=[UserMessage(content=[TextContent(text=prompt)])]), max_tokens=8192,
            signal=event.signal)
    except Exception as exc:
        await ctx.ui.notify(f"Compaction failed: {exc}", "error")
        return None
    summary = "\n".join(block.text for block in response.content if isinstance(block, TextContent))
    if response.stop_reason == "error" or not summary.strip():
        if not (event.signal and event.signal.aborted):
            await ctx.ui.notify("The summary was empty, using the default compaction", "warning")
        return None
    return CompactionOverride(summary, preparation.first_kept_entry_id, tokens_before=preparation.tokens_before,
                              usage=response.usage)
