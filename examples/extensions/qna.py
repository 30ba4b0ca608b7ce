"""Port of pi's ``qna`` example: ``/qna`` takes the last answer of the model, asks the model to pull the
questions out of it (``Q: ...`` / ``A: ``), and puts them into the editor for you to answer. A cancellable
loader (``BorderedLoader``, Esc stops the request) shows meanwhile. It needs the terminal."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core import AssistantMessage, Command, CommandContext, TextContent, UserMessage, hookimpl
from pi_core.ai import Context
from pi_core.tui import BorderedLoader

SYSTEM_PROMPT = """You are a question extractor. Given text from a conversation, extract any questions that need \
answering and format them for the user to fill in.

Output format:
- List each question on its own line, prefixed with "Q: "
- After each question, add a blank line for the answer prefixed with "A: "
- If no questions are found, output "No questions found in the last message."

Example output:
Q: What is your preferred database?
A: 

Q: Should we use TypeScript or JavaScript?
A: 

Keep questions in the order they appeared. Be concise."""
RUNNING: set[asyncio.Future[None]] = set()  # requests in flight (a task nobody holds may be collected)


def last_answer(ctx: CommandContext) -> tuple[str | None, str | None]:
    """The text of the branch's last answer, or why there is none."""
    for entry in reversed(ctx.session.get_branch()):
        message = getattr(entry, "message", None)
        if entry.type != "message" or not isinstance(message, AssistantMessage):
            continue
        if message.stop_reason != "stop":
            return None, f"Last assistant message incomplete ({message.stop_reason})"
        texts = [block.text for block in message.content if isinstance(block, TextContent)]
        if texts:
            return "\n".join(texts), None
    return None, "No assistant messages found"


async def qna(args: str, ctx: CommandContext) -> None:
    if ctx.mode != "tui":
        await ctx.ui.notify("qna requires interactive mode", "error")
        return
    model = ctx.model
    if model is None:
        await ctx.ui.notify("No model selected", "error")
        return
    text, problem = last_answer(ctx)
    if text is None:
        await ctx.ui.notify(problem or "No assistant messages found", "error")
        return

    async def extract(signal: Any) -> str | None:
        request = Context(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=text)])])
        response = await ctx.model_registry.complete(model, request, signal=signal)
        if response.stop_reason == "aborted":
            return None
        return "\n".join(block.text for block in response.content if isinstance(block, TextContent))

    def loading(tui: Any, theme: Any, keybindings: Any, done: Any) -> BorderedLoader:
        loader = BorderedLoader(tui, theme, f"Extracting questions using {model.id}...")
        loader.on_abort = lambda: done(None)

        async def run() -> None:
            try:
                done(await extract(loader.signal))
            except Exception:  # a failed request ends the loader, as in pi
                done(None)

        task = asyncio.ensure_future(run())
        RUNNING.add(task)
        task.add_done_callback(RUNNING.discard)
        return loader

    result = await ctx.ui.custom(loading)
    if result is None:
        await ctx.ui.notify("Cancelled", "info")
        return
    await ctx.ui.set_editor_text(result)
    await ctx.ui.notify("Questions loaded. Edit and submit when ready.", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("qna", qna, "Extract questions from last assistant message into editor"))
