"""Port of pi's ``question`` example: a ``question`` tool the model calls to ask the user to pick one of a
few answers, drawn as a component (↑/↓ and Enter, Esc cancels) that returns the choice."""

from __future__ import annotations

from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.tui import matches_key, truncate_to_width


class Picker:
    def __init__(self, theme: Any, question: str, options: list[str], done: Any) -> None:
        self.theme, self.question, self.options, self.done = theme, question, options, done
        self.cursor = 0

    def render(self, width: int) -> list[str]:
        rows = [self.theme.bold(self.question)]
        for index, option in enumerate(self.options):
            mark = "›" if index == self.cursor else " "
            text = f"{mark} {index + 1}. {option}"
            rows.append(self.theme.fg("accent", text) if index == self.cursor else text)
        rows.append(self.theme.fg("dim", "↑↓ move · Enter choose · Esc cancel"))
        return [truncate_to_width(row, width) for row in rows]

    def handle_input(self, data: str) -> None:
        if matches_key(data, "up"):
            self.cursor = (self.cursor - 1) % len(self.options)
        elif matches_key(data, "down"):
            self.cursor = (self.cursor + 1) % len(self.options)
        elif matches_key(data, "enter"):
            self.done(self.options[self.cursor])
        elif matches_key(data, "escape"):
            self.done(None)

    def invalidate(self) -> None:
        return None


async def ask(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    question = str(params.get("question", ""))
    options = [str(o) for o in params.get("options", [])] or ["Yes", "No"]
    if ctx.session is None or not ctx.session.has_ui:
        return ToolResult.text("Error: UI not available (running in non-interactive mode)", is_error=True)
    answer = await ctx.session.ui.custom(lambda tui, theme, keybindings, done: Picker(theme, question, options, done))
    if answer is None:
        return ToolResult.text("User cancelled the selection")
    return ToolResult.text(f"User selected: {answer}")


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="question", description="Ask the user a question and let them pick an option.",
                  parameters={"type": "object", "required": ["question", "options"], "properties": {
                      "question": {"type": "string"}, "options": {"type": "array", "items": {"type": "string"}}}},
                  execute=ask))
