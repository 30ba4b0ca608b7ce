"""Port of pi's ``plan-mode`` example (``plan-mode/index.ts`` and ``utils.ts``): a read-only exploration mode.

* ``/plan``, Ctrl+Alt+P or ``pi --plan`` toggle it: ``edit`` and ``write`` leave the active tools and bash
  runs only commands on a read-only allowlist (``before_tool_call`` blocks the rest);
* each prompt in plan mode carries a hidden ``[PLAN MODE ACTIVE]`` instruction (``before_agent_start``),
  which the ``context`` hook drops again from requests once plan mode is off;
* when a run ends with a numbered ``Plan:`` section, pi asks what next (``ctx.ui.select``): execute it,
  stay, or refine it (``ctx.ui.editor``). Executing restores the tools and starts a run of its own
  (``send_message(..., trigger_turn=True)``); ``[DONE:n]`` markers in the answers tick the steps off
  (``turn_end``), shown as a status and a widget; ``/todos`` lists them;
* the state is kept in ``plan-mode`` entries (pi's JSON) and restored on resume.

Differences from the original: the shortcut is registered in ``session_start`` (a Python plugin has no API
handle at import); without a theme (print and JSON mode) the status and widget rows are plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pi_core import (
    AgentEndEvent,
    AgentMessage,
    AgentStartPatch,
    AssistantMessage,
    BeforeAgentStartEvent,
    BeforeToolCallEvent,
    Block,
    Command,
    CommandContext,
    ContextEvent,
    CustomMessage,
    ExtensionContext,
    Flag,
    SessionStartEvent,
    TextContent,
    ThinkingContent,
    TurnEndEvent,
    UserMessage,
    hookimpl,
)

PLAN_MODE_TOOLS = ["read", "bash", "grep", "find", "ls", "questionnaire"]
NORMAL_MODE_TOOLS = ["read", "bash", "edit", "write"]
PLAN_MODE_DISABLED_TOOLS = {"edit", "write"}
PLAN_MANAGED_TOOLS = {*PLAN_MODE_TOOLS, *NORMAL_MODE_TOOLS}

PLAN_CONTEXT = """[PLAN MODE ACTIVE]
You are in plan mode - a read-only exploration mode for safe code analysis.

Restrictions:
- Built-in edit and write tools are disabled
- Other currently active tools remain available
- Bash is restricted to an allowlist of read-only commands

Ask clarifying questions using the questionnaire tool.
Use brave-search skill via bash for web research.

Create a detailed numbered plan under a "Plan:" header:

Plan:
1. First step description
2. Second step description
...

Do NOT attempt to make changes - just describe what you would do."""

EXECUTE = "Execute the plan (track progress)"
STAY = "Stay in plan mode"
REFINE = "Refine the plan"

# -- utils.ts ---------------------------------------------------------------------------------------------

DESTRUCTIVE_PATTERNS = [re.compile(p, re.I) for p in (
    r"\brm\b", r"\brmdir\b", r"\bmv\b", r"\bcp\b", r"\bmkdir\b", r"\btouch\b", r"\bchmod\b", r"\bchown\b",
    r"\bchgrp\b", r"\bln\b", r"\btee\b", r"\btruncate\b", r"\bdd\b", r"\bshred\b", r"(^|[^<])>(?!>)", r">>",
    r"\bnpm\s+(install|uninstall|update|ci|link|publish)", r"\byarn\s+(add|remove|install|publish)",
    r"\bpnpm\s+(add|remove|install|publish)", r"\bpip\s+(install|uninstall)",
    r"\bapt(-get)?\s+(install|remove|purge|update|upgrade)", r"\bbrew\s+(install|uninstall|upgrade)",
    r"\bgit\s+(add|commit|push|pull|merge|rebase|reset|checkout|branch\s+-[dD]|stash|cherry-pick|revert|tag|init"
    r"|clone)",
    r"\bsudo\b", r"\bsu\b", r"\bkill\b", r"\bpkill\b", r"\bkillall\b", r"\breboot\b", r"\bshutdown\b",
    r"\bsystemctl\s+(start|stop|restart|enable|disable)", r"\bservice\s+\S+\s+(start|stop|restart)",
    r"\b(vim?|nano|emacs|code|subl)\b",
)]
# pi's patterns: case-sensitive except the few it marks /i
_SAFE = ["cat", "head", "tail", "less", "more", "grep", "find", "ls", "pwd", "echo", "printf", "wc", "sort", "uniq",
         "diff", "file", "stat", "du", "df", "tree", "which", "whereis", "type", "env", "printenv", "uname", "whoami",
         "id", "date", "cal", "uptime", "ps", "top", "htop", "free", "jq", "awk", "rg", "fd", "bat", "eza"]
SAFE_PATTERNS = [re.compile(rf"^\s*{word}\b") for word in _SAFE] + [re.compile(p, re.I) for p in (
    r"^\s*git\s+(status|log|diff|show|branch|remote|config\s+--get)", r"^\s*git\s+ls-",
    r"^\s*npm\s+(list|ls|view|info|search|outdated|audit)", r"^\s*yarn\s+(list|info|why|audit)",
    r"^\s*node\s+--version", r"^\s*python\s+--version", r"^\s*curl\s", r"^\s*wget\s+-O\s*-", r"^\s*sed\s+-n",
)]


def is_safe_command(command: str) -> bool:
    destructive = any(p.search(command) for p in DESTRUCTIVE_PATTERNS)
    return not destructive and any(p.search(command) for p in SAFE_PATTERNS)


def clean_step_text(text: str) -> str:
    cleaned = re.sub(r"\*{1,2}([^*]+)\*{1,2}", r"\1", text)
    cleaned = re.sub(r"`([^`]+)`", r"\1", cleaned)
    cleaned = re.sub(r"^(Use|Run|Execute|Create|Write|Read|Check|Verify|Update|Modify|Add|Remove|Delete|Install)\s+"
                     r"(the\s+)?", "", cleaned, flags=re.I)
    cleaned = re.sub(r"\s+", " ", cleaned).strip()
    return cleaned[:1].upper() + cleaned[1:]


def extract_todo_items(message: str) -> list[dict[str, Any]]:
    """The numbered steps of the last ``Plan:`` section (pi's ``TodoItem``: ``step``, ``text``, ``completed``)."""
    headers = list(re.finditer(r"\*{0,2}Plan:\*{0,2}\s*\n", message, re.I))
    if not headers:
        return []
    items: list[dict[str, Any]] = []
    for match in re.finditer(r"^\s*(\d+)[.)]\s+(.+)$", message[headers[-1].end():], re.M):
        text = re.sub(r"\*{1,2}$", "", match.group(2).strip()).strip()
        if len(text) > 5 and not text.startswith(("/", "-")):
            cleaned = clean_step_text(text)
            if len(cleaned) > 3:
                items.append({"step": len(items) + 1, "text": cleaned, "completed": False})
    return items


def extract_done_steps(message: str) -> list[int]:
    found = [int(m) for m in re.findall(r"\[DONE\s*:?\s*(\d+)\]", message, re.I)]
    found += [int(m) for m in re.findall(r"\bDone\s*:\s*(\d+)\b", message, re.I)]
    found += [int(m) for m in re.findall(r"\bStep\s*(\d+)\s+(?:is\s+)?(?:done|complete|completed|finished)\b",
                                         message, re.I)]
    return list(dict.fromkeys(found))


def mark_completed_steps(text: str, items: list[dict[str, Any]]) -> int:
    marked = 0
    for step in extract_done_steps(text):
        item = next((t for t in items if t["step"] == step and not t["completed"]), None)
        if item is not None:
            item["completed"] = True
            marked += 1
    return marked


def all_steps_complete(message: str) -> bool:
    return bool(re.search(r"(?:all|every)\s+steps?\s+(?:are|is\s+)?(?:done|complete|completed|finished)", message, re.I)
                or re.search(r"\b(?:the\s+)?plan\s+(?:is\s+)?(?:complete|completed|done)\b", message, re.I))


# -- the extension ----------------------------------------------------------------------------------------


@dataclass
class PlanState:
    enabled: bool = False
    executing: bool = False
    todos: list[dict[str, Any]] = field(default_factory=list)
    tools_before: list[str] | None = None


STATE = PlanState()


def text_of(message: AssistantMessage) -> str:
    """Text and thinking: with reasoning models the [DONE:n] tags and plan drafts often land in thinking."""
    parts = [b.text if isinstance(b, TextContent) else b.thinking if isinstance(b, ThinkingContent) else ""
             for b in message.content]
    return "\n".join(parts)


def last_assistant(messages: list[Any]) -> AssistantMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)


def styled(ctx: ExtensionContext, token: str, text: str) -> str:
    theme = ctx.ui.theme
    return text if theme is None else str(theme.fg(token, text))


async def update_status(ctx: ExtensionContext) -> None:
    if STATE.executing and STATE.todos:
        done = sum(1 for t in STATE.todos if t["completed"])
        await ctx.ui.set_status("plan-mode", styled(ctx, "accent", f"📋 {done}/{len(STATE.todos)}"))
    elif STATE.enabled:
        await ctx.ui.set_status("plan-mode", styled(ctx, "warning", "⏸ plan"))
    else:
        await ctx.ui.set_status("plan-mode", None)
    if STATE.executing and STATE.todos:
        await ctx.ui.set_widget("plan-todos", [todo_row(ctx, t) for t in STATE.todos])
    else:
        await ctx.ui.set_widget("plan-todos", None)


def todo_row(ctx: ExtensionContext, item: dict[str, Any]) -> str:
    full = str(item["text"])
    text = full if len(full) <= 60 else full[:57] + "..."
    if not item["completed"]:
        return styled(ctx, "muted", "☐ ") + text
    theme = ctx.ui.theme
    struck = str(theme.strikethrough(text)) if hasattr(theme, "strikethrough") else text
    return styled(ctx, "success", "☑ ") + styled(ctx, "muted", struck)


def plan_mode_tools(active: list[str]) -> list[str]:
    return list(dict.fromkeys([*(n for n in active if n not in PLAN_MODE_DISABLED_TOOLS), *PLAN_MODE_TOOLS]))


def normal_mode_tools(active: list[str]) -> list[str]:
    return list(dict.fromkeys([*NORMAL_MODE_TOOLS, *(n for n in active if n not in PLAN_MANAGED_TOOLS)]))


def enable_plan_mode_tools(ctx: ExtensionContext) -> None:
    if STATE.tools_before is None:
        STATE.tools_before = ctx.get_active_tools()
    ctx.set_active_tools(plan_mode_tools(STATE.tools_before))


def restore_normal_mode_tools(ctx: ExtensionContext) -> None:
    ctx.set_active_tools(STATE.tools_before if STATE.tools_before is not None
                         else normal_mode_tools(ctx.get_active_tools()))
    STATE.tools_before = None


def persist_state(ctx: ExtensionContext) -> None:
    ctx.append_entry("plan-mode", {"enabled": STATE.enabled, "todos": STATE.todos, "executing": STATE.executing,
                                   "toolsBeforePlanMode": STATE.tools_before})


async def toggle_plan_mode(ctx: ExtensionContext) -> None:
    STATE.enabled, STATE.executing, STATE.todos = not STATE.enabled, False, []
    if STATE.enabled:
        enable_plan_mode_tools(ctx)
        await ctx.ui.notify("Plan mode enabled. Built-in write tools disabled.")
    else:
        restore_normal_mode_tools(ctx)
        await ctx.ui.notify("Plan mode disabled. Full access restored.")
    await update_status(ctx)
    persist_state(ctx)


async def plan_command(args: str, ctx: CommandContext) -> None:
    await toggle_plan_mode(ctx)


async def todos_command(args: str, ctx: CommandContext) -> None:
    if not STATE.todos:
        await ctx.ui.notify("No todos. Create a plan first with /plan", "info")
        return
    rows = [f"{i}. {'✓' if t['completed'] else '○'} {t['text']}" for i, t in enumerate(STATE.todos, 1)]
    await ctx.ui.notify("Plan Progress:\n" + "\n".join(rows), "info")


@hookimpl
def register_flags(register: Any) -> None:
    register(Flag("plan", bool, False, "Start in plan mode (read-only exploration)"))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("plan", plan_command, "Toggle plan mode (read-only exploration)"))
    register(Command("todos", todos_command, "Show current plan todo list"))


@hookimpl
def before_tool_call(event: BeforeToolCallEvent, ctx: ExtensionContext) -> Block | None:
    if not STATE.enabled or event.tool_name != "bash":
        return None
    command = str(event.arguments.get("command", ""))
    if is_safe_command(command):
        return None
    return Block("Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\n"
                 f"Command: {command}")


def _plan_mode_context(message: AgentMessage) -> bool:
    if isinstance(message, CustomMessage):
        return message.custom_type == "plan-mode-context"
    if not isinstance(message, UserMessage):
        return False
    if isinstance(message.content, str):
        return "[PLAN MODE ACTIVE]" in message.content
    return any(isinstance(c, TextContent) and "[PLAN MODE ACTIVE]" in c.text for c in message.content)


@hookimpl
def context(event: ContextEvent, ctx: ExtensionContext) -> list[AgentMessage] | None:
    """Outside plan mode, the plan-mode instructions of earlier prompts no longer apply: leave them out."""
    if STATE.enabled:
        return None
    return [m for m in event.messages if not _plan_mode_context(m)]


@hookimpl
def before_agent_start(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> AgentStartPatch | None:
    # runs started by a plugin's message (plan execution, notifications) already carry their context
    if event.message_type != "user":
        return None
    if STATE.enabled:
        return AgentStartPatch(message=CustomMessage(custom_type="plan-mode-context", content=PLAN_CONTEXT,
                                                     display=False))
    if STATE.executing and STATE.todos:
        remaining = "\n".join(f"{t['step']}. {t['text']}" for t in STATE.todos if not t["completed"])
        content = (f"[EXECUTING PLAN - Full tool access enabled]\n\nRemaining steps:\n{remaining}\n\n"
                   "Execute each step in order.\nAfter completing a step, include a [DONE:n] tag in your response.")
        return AgentStartPatch(message=CustomMessage(custom_type="plan-execution-context", content=content,
                                                     display=False))
    return None


@hookimpl
async def turn_end(event: TurnEndEvent, ctx: ExtensionContext) -> None:
    if not STATE.executing or not STATE.todos or not isinstance(event.message, AssistantMessage):
        return
    mark_completed_steps(text_of(event.message), STATE.todos)
    await update_status(ctx)
    persist_state(ctx)


@hookimpl
async def agent_end(event: AgentEndEvent, ctx: ExtensionContext) -> None:
    if STATE.executing and STATE.todos:
        await finish_execution(event, ctx)
        return
    if not STATE.enabled or not ctx.has_ui:
        return
    last = last_assistant(event.messages)
    if last is not None:
        STATE.todos = extract_todo_items(text_of(last)) or STATE.todos
    if not STATE.todos:
        return
    persist_state(ctx)
    listing = "\n".join(f"{i}. ☐ {t['text']}" for i, t in enumerate(STATE.todos, 1))
    todo_list = CustomMessage(custom_type="plan-todo-list", content=f"**Plan Steps ({len(STATE.todos)}):**\n\n"
                                                                      f"{listing}", display=True)
    choice = await ctx.ui.select("Plan mode - what next?", [EXECUTE, STAY, REFINE])
    if choice == EXECUTE:
        await start_execution(ctx, todo_list)
    elif choice == REFINE:
        refinement = await ctx.ui.editor("Refine the plan:", "")
        if refinement and refinement.strip():
            ctx.send_message(todo_list, deliver_as="followUp")
            ctx.send_user_message(refinement.strip(), deliver_as="followUp")


async def start_execution(ctx: ExtensionContext, todo_list: CustomMessage) -> None:
    STATE.enabled, STATE.executing = False, True
    restore_normal_mode_tools(ctx)
    await update_status(ctx)
    persist_state(ctx)
    remaining = "\n".join(f"{t['step']}. {t['text']}" for t in STATE.todos)
    execute = (f"Execute the plan.\n\nRemaining steps:\n{remaining}\n\nStart with: {STATE.todos[0]['text']}\n"
               "After completing a step, include a [DONE:n] tag in your response.")
    ctx.send_message(todo_list, deliver_as="followUp")
    ctx.send_message(CustomMessage(custom_type="plan-mode-execute", content=execute, display=True),
                     deliver_as="followUp", trigger_turn=True)


async def finish_execution(event: AgentEndEvent, ctx: ExtensionContext) -> None:
    last = last_assistant(event.messages)
    if last is not None and all_steps_complete(text_of(last)):  # wrapped up without [DONE:n] tags
        for item in STATE.todos:
            item["completed"] = True
    if not all(t["completed"] for t in STATE.todos):
        return
    done = "\n".join(f"~~{t['text']}~~" for t in STATE.todos)
    # with the next prompt, not a (costly) turn of its own just to acknowledge the card
    ctx.send_message(CustomMessage(custom_type="plan-complete", content=f"**Plan Complete!** ✓\n\n{done}",
                                   display=True), deliver_as="nextTurn")
    STATE.executing, STATE.todos = False, []
    await update_status(ctx)
    persist_state(ctx)


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    ctx.register_shortcut("ctrl+alt+p", toggle_plan_mode, description="Toggle plan mode")
    if ctx.get_flag("plan") is True:
        STATE.enabled = True
    entries = ctx.session.get_entries()
    saved = [e for e in entries if getattr(e, "type", None) == "custom" and e.custom_type == "plan-mode"]
    if saved and isinstance(saved[-1].data, dict):
        data = saved[-1].data
        STATE.enabled = data.get("enabled", STATE.enabled)
        STATE.todos = data.get("todos") or STATE.todos
        STATE.executing = data.get("executing", STATE.executing)
        STATE.tools_before = data.get("toolsBeforePlanMode", STATE.tools_before)
        if STATE.executing and STATE.todos:
            rescan(entries)
    if STATE.enabled:
        enable_plan_mode_tools(ctx)
    await update_status(ctx)


def rescan(entries: list[Any]) -> None:
    """On resume, tick off steps from the answers since the current execution started (only those, so an
    earlier plan's [DONE:n] tags do not count)."""
    start = max((i for i, e in enumerate(entries) if getattr(e, "custom_type", None) == "plan-mode-execute"),
                default=-1)
    answers = [e.message for e in entries[start + 1:]
               if getattr(e, "type", None) == "message" and isinstance(e.message, AssistantMessage)]
    mark_completed_steps("\n".join(text_of(m) for m in answers), STATE.todos)
