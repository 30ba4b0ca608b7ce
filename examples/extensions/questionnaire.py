"""Port of pi's ``questionnaire`` example: a ``questionnaire`` tool that asks one question (a list of options)
or several (a tab per question and a Submit tab: Tab/←→ move between them, ↑↓ choose, Enter answers and
moves on). Each question may end in "Type something." (``allowOther``, on by default), which opens an
inline editor (``pi_core.tui.Editor``). Esc cancels; the answers go to the model and are drawn compactly
in the conversation. Without a terminal it answers "UI not available"."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pi_core import Tool, ToolContext, ToolRenderContext, ToolResult, hookimpl
from pi_core.tui import Editor, EditorTheme, Key, SelectListTheme, Text, matches_key, visible_width, wrap_text_with_ansi

OPTION = {"type": "object", "required": ["value", "label"], "properties": {
    "value": {"type": "string", "description": "The value returned when selected"},
    "label": {"type": "string", "description": "Display label for the option"},
    "description": {"type": "string", "description": "Optional description shown below label"}}}
QUESTION = {"type": "object", "required": ["id", "prompt", "options"], "properties": {
    "id": {"type": "string", "description": "Unique identifier for this question"},
    "label": {"type": "string", "description": "Short contextual label for tab bar, e.g. 'Scope', 'Priority' "
                                               "(defaults to Q1, Q2)"},
    "prompt": {"type": "string", "description": "The full question text to display"},
    "options": {"type": "array", "items": OPTION, "description": "Available options to choose from"},
    "allowOther": {"type": "boolean", "description": "Allow 'Type something' option (default: true)"}}}
PARAMETERS: dict[str, Any] = {"type": "object", "required": ["questions"], "properties": {
    "questions": {"type": "array", "items": QUESTION, "description": "Questions to ask the user"}}}


@dataclass
class Option:
    value: str
    label: str
    description: str | None = None
    is_other: bool = False


@dataclass
class Question:
    id: str
    label: str
    prompt: str
    options: list[Option]
    allow_other: bool


@dataclass
class Answer:
    id: str
    value: str
    label: str
    was_custom: bool
    index: int | None = None


@dataclass
class Outcome:
    questions: list[Question]
    answers: list[Answer] = field(default_factory=list)
    cancelled: bool = False

    def details(self) -> dict[str, Any]:
        """pi's ``QuestionnaireResult`` (camelCase, as pi stores it in the session)."""
        questions = [{**asdict(q), "allowOther": q.allow_other} for q in self.questions]
        answers = [{**asdict(a), "wasCustom": a.was_custom} for a in self.answers]
        for item in questions:
            del item["allow_other"]
        for item in answers:
            del item["was_custom"]
        return {"questions": questions, "answers": answers, "cancelled": self.cancelled}


def add_wrapped(lines: list[str], prefix: str, text: str, width: int) -> None:
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


class Questionnaire:
    def __init__(self, tui: Any, theme: Any, questions: list[Question], done: Any) -> None:
        self.tui, self.theme, self.questions, self.done = tui, theme, questions, done
        self.multi = len(questions) > 1
        self.tab = 0
        self.option = 0
        self.typing_for: str | None = None  # the question the inline editor answers
        self.answers: dict[str, Answer] = {}
        self.cached: list[str] | None = None
        self.editor = Editor(tui, editor_theme(theme))
        self.editor.on_submit = self.submitted

    def current(self) -> Question | None:
        return self.questions[self.tab] if self.tab < len(self.questions) else None

    def options(self) -> list[Option]:
        question = self.current()
        if question is None:
            return []
        return [*question.options, *([Option("__other__", "Type something.", is_other=True)] if question.allow_other
                                     else [])]

    def all_answered(self) -> bool:
        return all(q.id in self.answers for q in self.questions)

    def refresh(self) -> None:
        self.cached = None
        self.tui.request_render()

    def submit(self, cancelled: bool) -> None:
        self.done(Outcome(self.questions, list(self.answers.values()), cancelled))

    def advance(self) -> None:
        if not self.multi:
            self.submit(False)
            return
        self.tab = min(self.tab + 1, len(self.questions))
        self.option = 0
        self.refresh()

    def submitted(self, value: str) -> None:
        if self.typing_for is None:
            return
        text = value.strip() or "(no response)"
        self.answers[self.typing_for] = Answer(self.typing_for, text, text, True)
        self.typing_for = None
        self.editor.set_text("")
        self.advance()

    def handle_input(self, data: str) -> None:
        if self.typing_for is not None:
            if matches_key(data, Key.escape):
                self.typing_for = None
                self.editor.set_text("")
            else:
                self.editor.handle_input(data)
            self.refresh()
            return
        tabs = len(self.questions) + 1
        if self.multi and (matches_key(data, Key.tab) or matches_key(data, Key.right)):
            self.tab, self.option = (self.tab + 1) % tabs, 0
            self.refresh()
        elif self.multi and (matches_key(data, Key.shift("tab")) or matches_key(data, Key.left)):
            self.tab, self.option = (self.tab - 1) % tabs, 0
            self.refresh()
        elif self.tab == len(self.questions):
            if matches_key(data, Key.enter) and self.all_answered():
                self.submit(False)
            elif matches_key(data, Key.escape):
                self.submit(True)
        else:
            self.choose(data)

    def choose(self, data: str) -> None:
        question, options = self.current(), self.options()
        if matches_key(data, Key.up) or matches_key(data, Key.down):
            step = -1 if matches_key(data, Key.up) else 1
            self.option = max(0, min(len(options) - 1, self.option + step))
            self.refresh()
        elif matches_key(data, Key.enter) and question is not None:
            chosen = options[self.option]
            if chosen.is_other:
                self.typing_for = question.id
                self.editor.set_text("")
                self.refresh()
                return
            self.answers[question.id] = Answer(question.id, chosen.value, chosen.label, False, self.option + 1)
            self.advance()
        elif matches_key(data, Key.escape):
            self.submit(True)

    def render(self, width: int) -> list[str]:
        if self.cached is not None:
            return self.cached
        th, width = self.theme, max(1, width)
        lines = [th.fg("accent", "─" * width)]
        if self.multi:
            add_wrapped(lines, " ", self.tab_bar(), width)
            lines.append("")
        question = self.current()
        if self.typing_for is not None and question is not None:
            add_wrapped(lines, " ", th.fg("text", question.prompt), width)
            lines.append("")
            self.render_options(lines, width)
            lines.append("")
            add_wrapped(lines, " ", th.fg("muted", "Your answer:"), width)
            lines += [f" {row}" for row in self.editor.render(max(1, width - 2))]
            lines.append("")
            add_wrapped(lines, " ", th.fg("dim", "Enter to submit • Esc to cancel"), width)
        elif question is None:
            self.render_summary(lines, width)
        else:
            add_wrapped(lines, " ", th.fg("text", question.prompt), width)
            lines.append("")
            self.render_options(lines, width)
        lines.append("")
        if self.typing_for is None:
            hint = "Tab/←→ navigate • ↑↓ select • Enter confirm • Esc cancel" if self.multi \
                else "↑↓ navigate • Enter select • Esc cancel"
            add_wrapped(lines, " ", th.fg("dim", hint), width)
        lines.append(th.fg("accent", "─" * width))
        self.cached = lines
        return lines

    def tab_bar(self) -> str:
        th = self.theme
        parts = ["← "]
        for index, question in enumerate(self.questions):
            answered = question.id in self.answers
            text = f" {'■' if answered else '□'} {question.label} "
            styled = th.bg("selectedBg", th.fg("text", text)) if index == self.tab \
                else th.fg("success" if answered else "muted", text)
            parts.append(f"{styled} ")
        submit = " ✓ Submit "
        styled = th.bg("selectedBg", th.fg("text", submit)) if self.tab == len(self.questions) \
            else th.fg("success" if self.all_answered() else "dim", submit)
        return "".join(parts) + f"{styled} →"

    def render_options(self, lines: list[str], width: int) -> None:
        th = self.theme
        for index, option in enumerate(self.options()):
            selected = index == self.option
            typing = option.is_other and self.typing_for is not None
            label = f"{index + 1}. {option.label}" + (" ✎" if typing else "")
            add_wrapped(lines, th.fg("accent", "> ") if selected else "  ",
                        th.fg("accent" if selected or typing else "text", label), width)
            if option.description:
                add_wrapped(lines, "     ", th.fg("muted", option.description), width)

    def render_summary(self, lines: list[str], width: int) -> None:
        th = self.theme
        add_wrapped(lines, " ", th.fg("accent", th.bold("Ready to submit")), width)
        lines.append("")
        for question in self.questions:
            answer = self.answers.get(question.id)
            if answer is not None:
                written = "(wrote) " if answer.was_custom else ""
                add_wrapped(lines, " ", th.fg("muted", f"{question.label}: ") + th.fg("text", written + answer.label),
                            width)
        lines.append("")
        if self.all_answered():
            add_wrapped(lines, " ", th.fg("success", "Press Enter to submit"), width)
        else:
            missing = ", ".join(q.label for q in self.questions if q.id not in self.answers)
            add_wrapped(lines, " ", th.fg("warning", f"Unanswered: {missing}"), width)

    def invalidate(self) -> None:
        self.cached = None


def normalized(params: dict[str, Any]) -> list[Question]:
    return [Question(str(q.get("id", "")), str(q.get("label") or f"Q{i + 1}"), str(q.get("prompt", "")),
                     [Option(str(o.get("value", "")), str(o.get("label", "")), o.get("description"))
                      for o in q.get("options", [])], q.get("allowOther") is not False)
            for i, q in enumerate(params.get("questions", []))]


def error(message: str) -> ToolResult:
    return ToolResult.text(message, details=Outcome([], cancelled=True).details())


async def run(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if ctx.session is None or ctx.session.mode != "tui":
        return error("Error: UI not available (running in non-interactive mode)")
    questions = normalized(params)
    if not questions:
        return error("Error: No questions provided")
    outcome: Outcome = await ctx.session.ui.custom(
        lambda tui, theme, keybindings, done: Questionnaire(tui, theme, questions, done))
    if outcome is None or outcome.cancelled:
        return ToolResult.text("User cancelled the questionnaire",
                               details=(outcome or Outcome(questions, cancelled=True)).details())
    labels = {q.id: q.label for q in questions}
    rows = [f"{labels.get(a.id, a.id)}: user wrote: {a.label}" if a.was_custom
            else f"{labels.get(a.id, a.id)}: user selected: {a.index}. {a.label}" for a in outcome.answers]
    return ToolResult.text("\n".join(rows), details=outcome.details())


def render_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    given = args.get("questions")
    questions: list[Any] = given if isinstance(given, list) else []
    labels = ", ".join(str(q.get("label") or q.get("id")) for q in questions)
    text = theme.fg("toolTitle", theme.bold("questionnaire ")) + theme.fg(
        "muted", f"{len(questions)} question{'s' if len(questions) != 1 else ''}")
    return Text(text + (theme.fg("dim", f" ({labels})") if labels else ""))


def render_result(result: Any, options: dict[str, Any], theme: Any, context: ToolRenderContext) -> Text:
    details = getattr(result, "details", None)
    if not isinstance(details, dict):
        content = getattr(result, "content", None) or []
        return Text(str(getattr(content[0], "text", "")) if content else "")
    if details.get("cancelled"):
        return Text(theme.fg("warning", "Cancelled"))
    rows = []
    for answer in details.get("answers", []):
        if answer.get("wasCustom"):
            rows.append(f"{theme.fg('success', '✓ ')}{theme.fg('accent', answer['id'])}: "
                        f"{theme.fg('muted', '(wrote) ')}{answer['label']}")
        else:
            shown = f"{answer['index']}. {answer['label']}" if answer.get("index") else answer["label"]
            rows.append(f"{theme.fg('success', '✓ ')}{theme.fg('accent', answer['id'])}: {shown}")
    return Text("\n".join(rows))


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="questionnaire", label="Questionnaire", parameters=PARAMETERS, execute=run,
                  description="Ask the user one or more questions. Use for clarifying requirements, getting "
                              "preferences, or confirming decisions. For single questions, shows a simple option "
                              "list. For multiple questions, shows a tab-based interface.",
                  render_call=render_call, render_result=render_result))
