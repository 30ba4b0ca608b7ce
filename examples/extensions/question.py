"""Port of pi's ``question`` example: a ``question`` tool the model calls to ask the user to pick one of a few
options, drawn as a component: ↑/↓ and Enter pick, Esc cancels; the last choice, "Type something.", opens
an inline editor (``pi_core.tui.Editor``) for a written answer (Enter submits, Esc goes back to the
options). The call and the answer are drawn compactly in the conversation (``render_call`` /
``render_result``). Without a terminal it answers "UI not available"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolContext, ToolRenderContext, ToolResult, hookimpl
from pi_core.tui import Editor, EditorTheme, Key, SelectListTheme, Text, matches_key, visible_width, wrap_text_with_ansi

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["question", "options"],
    "properties": {
        "question": {"type": "string", "description": "The question to ask the user"},
        "options": {"type": "array", "description": "Options for the user to choose from", "items": {
            "type": "object", "required": ["label"], "properties": {
                "label": {"type": "string", "description": "Display label for the option"},
                "description": {"type": "string", "description": "Optional description shown below label"}}}},
    },
}
OTHER = "Type something."


@dataclass
class Option:
    label: str
    description: str | None = None
    is_other: bool = False


def add_wrapped(lines: list[str], prefix: str, text: str, width: int) -> None:
    """``text`` wrapped after ``prefix``, later rows indented as far (pi's ``addWrappedWithPrefix``)."""
    room = width - visible_width(prefix)
    if room <= 0:
        lines.extend(wrap_text_with_ansi(prefix + text, width))
        return
    for index, row in enumerate(wrap_text_with_ansi(text, room)):
        lines.append((prefix if index == 0 else " " * visible_width(prefix)) + row)


def editor_theme(theme: Any) -> EditorTheme:
    return EditorTheme(border_color=lambda s: str(theme.fg("accent", s)), select_list=SelectListTheme(
        selected_prefix=lambda t: str(theme.fg("accent", t)), selected_text=lambda t: str(theme.fg("accent", t)),
        description=lambda t: str(theme.fg("muted", t)), scroll_info=lambda t: str(theme.fg("dim", t)),
        no_match=lambda t: str(theme.fg("warning", t))))


class QuestionComponent:
    def __init__(self, tui: Any, theme: Any, question: str, options: list[Option], done: Any) -> None:
        self.tui, self.theme, self.question, self.options, self.done = tui, theme, question, options, done
        self.index = 0
        self.editing = False
        self.cached: list[str] | None = None
        self.editor = Editor(tui, editor_theme(theme))
        self.editor.on_submit = self.submitted

    def submitted(self, value: str) -> None:
        answer = value.strip()
        if answer:
            self.done({"answer": answer, "was_custom": True})
        else:
            self.editing = False
            self.editor.set_text("")
            self.refresh()

    def refresh(self) -> None:
        self.cached = None
        self.tui.request_render()

    def handle_input(self, data: str) -> None:
        if self.editing:
            if matches_key(data, Key.escape):
                self.editing = False
                self.editor.set_text("")
            else:
                self.editor.handle_input(data)
            self.refresh()
            return
        if matches_key(data, Key.up) or matches_key(data, Key.down):
            step = -1 if matches_key(data, Key.up) else 1
            self.index = max(0, min(len(self.options) - 1, self.index + step))
            self.refresh()
        elif matches_key(data, Key.enter):
            chosen = self.options[self.index]
            if chosen.is_other:
                self.editing = True
                self.refresh()
            else:
                self.done({"answer": chosen.label, "was_custom": False, "index": self.index + 1})
        elif matches_key(data, Key.escape):
            self.done(None)

    def render(self, width: int) -> list[str]:
        if self.cached is not None:
            return self.cached
        th, width = self.theme, max(1, width)
        lines = [th.fg("accent", "─" * width)]
        add_wrapped(lines, " ", th.fg("text", self.question), width)
        lines.append("")
        for index, option in enumerate(self.options):
            selected = index == self.index
            prefix = th.fg("accent", "> ") if selected else "  "
            label = f"{index + 1}. {option.label}" + (" ✎" if option.is_other and self.editing else "")
            add_wrapped(lines, prefix, th.fg("accent" if selected or (option.is_other and self.editing) else "text",
                                            label), width)
            if option.description:
                add_wrapped(lines, "     ", th.fg("muted", option.description), width)
        if self.editing:
            lines.append("")
            add_wrapped(lines, " ", th.fg("muted", "Your answer:"), width)
            lines += [f" {row}" for row in self.editor.render(max(1, width - 2))]
        lines.append("")
        hint = "Enter to submit • Esc to go back" if self.editing else "↑↓ navigate • Enter to select • Esc to cancel"
        add_wrapped(lines, " ", th.fg("dim", hint), width)
        lines.append(th.fg("accent", "─" * width))
        self.cached = lines
        return lines

    def invalidate(self) -> None:
        self.cached = None


async def ask(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    question = str(params.get("question", ""))
    given = [Option(str(o.get("label", "")), o.get("description")) for o in params.get("options", [])]
    labels = [o.label for o in given]
    if ctx.session is None or ctx.session.mode != "tui":
        return ToolResult.text("Error: UI not available (running in non-interactive mode)",
                               details={"question": question, "options": labels, "answer": None})
    if not given:
        return ToolResult.text("Error: No options provided", details={"question": question, "options": [], "answer": None})
    options = [*given, Option(OTHER, is_other=True)]
    result = await ctx.session.ui.custom(
        lambda tui, theme, keybindings, done: QuestionComponent(tui, theme, question, options, done))
    if result is None:
        return ToolResult.text("User cancelled the selection",
                               details={"question": question, "options": labels, "answer": None})
    details = {"question": question, "options": labels, "answer": result["answer"], "wasCustom": result["was_custom"]}
    if result["was_custom"]:
        return ToolResult.text(f"User wrote: {result['answer']}", details=details)
    return ToolResult.text(f"User selected: {result['index']}. {result['answer']}", details=details)


def render_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    text = theme.fg("toolTitle", theme.bold("question ")) + theme.fg("muted", str(args.get("question", "")))
    given = args.get("options")
    options: list[Any] = given if isinstance(given, list) else []
    if options:
        numbered = [f"{i + 1}. {label}" for i, label in enumerate([str(o.get("label")) for o in options] + [OTHER])]
        text += "\n" + theme.fg("dim", f"  Options: {', '.join(numbered)}")
    return Text(text)


def render_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    details = getattr(result, "details", None)
    if not isinstance(details, dict):
        content = getattr(result, "content", None) or []
        return Text(str(getattr(content[0], "text", "")) if content else "")
    answer = details.get("answer")
    if answer is None:
        return Text(theme.fg("warning", "Cancelled"))
    if details.get("wasCustom"):
        return Text(theme.fg("success", "✓ ") + theme.fg("muted", "(wrote) ") + theme.fg("accent", answer))
    listed = details.get("options") or []
    shown = f"{listed.index(answer) + 1}. {answer}" if answer in listed else answer
    return Text(theme.fg("success", "✓ ") + theme.fg("accent", shown))


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="question", label="Question", parameters=PARAMETERS, execute=ask,
                  description="Ask the user a question and let them pick from options. Use when you need user "
                              "input to proceed.",
                  capabilities=ToolCapabilities(sequential=True), render_call=render_call,
                  render_result=render_result))
