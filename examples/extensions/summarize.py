"""Port of pi's ``summarize`` example: ``/summarize`` asks another model for a summary of the conversation
(goals, decisions, progress, open questions, next steps) and shows it.

The model is ``openai/gpt-5.2`` as in pi, or ``$PI_SUMMARY_MODEL`` (``provider/id``). In the terminal the summary
is shown as pi shows it, rendered markdown between two rules in a ``ctx.ui.custom`` component (Enter or
Esc closes it); other UIs, where pi shows nothing, get it through ``ctx.ui.show``."""

from __future__ import annotations

import json
import os
from typing import Any

from pi_core import Command, CommandContext, TextContent, UserMessage, hookimpl
from pi_core.ai import Context
from pi_core.tui import Container, DynamicBorder, Markdown, Text, get_markdown_theme, matches_key


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [block.text for block in content or [] if getattr(block, "type", None) == "text"]


def conversation_text(entries: list[Any]) -> str:
    sections: list[str] = []
    for entry in entries:
        message = getattr(entry, "message", None) if entry.type == "message" else None
        if message is None or message.role not in ("user", "assistant"):
            continue
        lines: list[str] = []
        text = "\n".join(_texts(message.content)).strip()
        if text:
            lines.append(f"{'User' if message.role == 'user' else 'Assistant'}: {text}")
        if message.role == "assistant":
            lines += [f"Tool {block.name} was called with args {json.dumps(block.arguments)}"
                      for block in message.content if block.type == "toolCall"]
        if lines:
            sections.append("\n".join(lines))
    return "\n\n".join(sections)


def summary_prompt(conversation: str) -> str:
    return "\n".join(["Summarize this conversation so that I can pick it up again later.",
                      "Cover the goals, the decisions taken, the progress, open questions and next steps.",
                      "Keep it short and structured, with headings.", "", "<conversation>", conversation,
                      "</conversation>"])


async def summarize(args: str, ctx: CommandContext) -> None:
    conversation = conversation_text(ctx.session.get_branch())
    if not conversation.strip():
        await ctx.ui.notify("No conversation text found", "warning")
        return
    await ctx.ui.notify("Preparing summary...", "info")
    provider, _, model_id = os.environ.get("PI_SUMMARY_MODEL", "openai/gpt-5.2").partition("/")
    model = ctx.model_registry.find(provider, model_id)
    if model is None:
        await ctx.ui.notify(f"Model {provider}/{model_id} not found", "warning")
        return
    if not ctx.model_registry.has_configured_auth(model):
        await ctx.ui.notify(f"No authentication configured for {provider}/{model_id}", "warning")
        return
    response = await ctx.model_registry.complete(
        model, Context(messages=[UserMessage(content=[TextContent(text=summary_prompt(conversation))])]),
        reasoning_effort="high")
    summary = "\n".join(block.text for block in response.content if isinstance(block, TextContent))
    if ctx.mode == "tui":
        await ctx.ui.custom(lambda tui, theme, kb, done: SummaryView(summary, theme, done))
    else:
        await ctx.ui.show("Conversation Summary", summary.splitlines())


class SummaryView:
    def __init__(self, summary: str, theme: Any, done: Any) -> None:
        self.done = done
        border = DynamicBorder(lambda text: str(theme.fg("accent", text)))
        self.container = Container([border, Text(theme.fg("accent", theme.bold("Conversation Summary")), 1, 0),
                                    Markdown(summary, 1, 1, get_markdown_theme(theme)),
                                    Text(theme.fg("dim", "Press Enter or Esc to close"), 1, 0), border])

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        if matches_key(data, "enter") or matches_key(data, "escape"):
            self.done(None)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("summarize", summarize, "Summarize the current conversation"))
