"""Port of pi's ``todo`` example: state kept in the session itself. A ``todo`` tool (``list``, ``add``,
``toggle``, ``clear``) returns the whole list in each result's ``details``; on ``session_start`` and
``session_tree`` the list is rebuilt from the tool results on the current branch, so after a resume, a fork
or a ``/tree`` move it is what it was at that point. The terminal draws the calls and results compactly
(``render_call`` / ``render_result``), and ``/todos`` shows the list in a component (Esc closes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_core import (
    CommandContext,
    Command,
    ExtensionContext,
    SessionStartEvent,
    SessionTreeEvent,
    Tool,
    ToolContext,
    ToolResult,
    ToolResultMessage,
    hookimpl,
)
from pi_core.tui import Text, matches_key, truncate_to_width

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["action"],
    "properties": {
        "action": {"type": "string", "enum": ["list", "add", "toggle", "clear"]},
        "text": {"type": "string", "description": "Todo text (for add)"},
        "id": {"type": "number", "description": "Todo ID (for toggle)"},
    },
}


@dataclass
class Todos:
    items: list[dict[str, Any]] = field(default_factory=list)  # pi's Todo: id, text, done
    next_id: int = 1


STATE = Todos()


def details(action: str, error: str | None = None) -> dict[str, Any]:
    """pi's ``TodoDetails``: the whole list after the call, so any point of the branch knows it."""
    out: dict[str, Any] = {"action": action, "todos": [dict(t) for t in STATE.items], "nextId": STATE.next_id}
    if error is not None:
        out["error"] = error
    return out


def reconstruct(ctx: ExtensionContext) -> None:
    STATE.items, STATE.next_id = [], 1
    for entry in ctx.session.get_branch():
        message = getattr(entry, "message", None)
        if isinstance(message, ToolResultMessage) and message.tool_name == "todo" and isinstance(message.details,
                                                                                                   dict):
            STATE.items = [dict(t) for t in message.details.get("todos", [])]
            STATE.next_id = int(message.details.get("nextId", 1))


@hookimpl
def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    reconstruct(ctx)


@hookimpl
def session_tree(event: SessionTreeEvent, ctx: ExtensionContext) -> None:
    reconstruct(ctx)


async def run_todo(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    action = params.get("action")
    if action == "list":
        listing = "\n".join(f"[{'x' if t['done'] else ' '}] #{t['id']}: {t['text']}" for t in STATE.items)
        return ToolResult.text(listing or "No todos", details=details("list"))
    if action == "add":
        if not params.get("text"):
            return ToolResult.text("Error: text required for add", details=details("add", "text required"))
        todo = {"id": STATE.next_id, "text": str(params["text"]), "done": False}
        STATE.next_id += 1
        STATE.items.append(todo)
        return ToolResult.text(f"Added todo #{todo['id']}: {todo['text']}", details=details("add"))
    if action == "toggle":
        return toggle(params.get("id"))
    if action == "clear":
        count = len(STATE.items)
        STATE.items, STATE.next_id = [], 1
        return ToolResult.text(f"Cleared {count} todos", details=details("clear"))
    return ToolResult.text(f"Unknown action: {action}", details=details("list", f"unknown action: {action}"))


def toggle(todo_id: Any) -> ToolResult:
    if todo_id is None:
        return ToolResult.text("Error: id required for toggle", details=details("toggle", "id required"))
    todo = next((t for t in STATE.items if t["id"] == todo_id), None)
    if todo is None:
        return ToolResult.text(f"Todo #{todo_id} not found", details=details("toggle", f"#{todo_id} not found"))
    todo["done"] = not todo["done"]
    return ToolResult.text(f"Todo #{todo['id']} {'completed' if todo['done'] else 'uncompleted'}",
                           details=details("toggle"))


def render_call(args: dict[str, Any], theme: Any) -> Text:
    text = theme.fg("toolTitle", theme.bold("todo ")) + theme.fg("muted", str(args.get("action", "")))
    if args.get("text"):
        text += " " + theme.fg("dim", f'"{args["text"]}"')
    if args.get("id") is not None:
        text += " " + theme.fg("accent", f"#{args['id']}")
    return Text([text])


def render_result(result: Any, options: dict[str, Any], theme: Any) -> Text:
    info = getattr(result, "details", None)
    message = "".join(getattr(part, "text", "") for part in getattr(result, "content", None) or [])
    if not isinstance(info, dict):
        return Text([message])
    if info.get("error"):
        return Text([theme.fg("error", f"Error: {info['error']}")])
    todos = info.get("todos", [])
    action = info.get("action")
    if action == "list":
        if not todos:
            return Text([theme.fg("dim", "No todos")])
        shown = todos if options.get("expanded") else todos[:5]
        rows = [theme.fg("muted", f"{len(todos)} todo(s):")] + [todo_row(theme, t) for t in shown]
        if not options.get("expanded") and len(todos) > 5:
            rows.append(theme.fg("dim", f"... {len(todos) - 5} more"))
        return Text(rows)
    if action == "add" and todos:
        added = todos[-1]
        return Text([theme.fg("success", "✓ Added ") + theme.fg("accent", f"#{added['id']}") + " "
                     + theme.fg("muted", added["text"])])
    if action == "clear":
        return Text([theme.fg("success", "✓ ") + theme.fg("muted", "Cleared all todos")])
    return Text([theme.fg("success", "✓ ") + theme.fg("muted", message)])


def todo_row(theme: Any, todo: dict[str, Any]) -> str:
    check = theme.fg("success", "✓") if todo["done"] else theme.fg("dim", "○")
    text = theme.fg("dim" if todo["done"] else "muted", todo["text"])
    return f"{check} {theme.fg('accent', '#' + str(todo['id']))} {text}"


class TodoList:
    """The ``/todos`` component: the list with what is done; Escape (or Ctrl+C) closes it."""

    def __init__(self, todos: list[dict[str, Any]], theme: Any, close: Any) -> None:
        self.todos, self.theme, self.close = todos, theme, close

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape") or matches_key(data, "ctrl+c"):
            self.close(None)

    def render(self, width: int) -> list[str]:
        th = self.theme
        header = th.fg("borderMuted", "─" * 3) + th.fg("accent", " Todos ") + th.fg("borderMuted",
                                                                                  "─" * max(0, width - 10))
        rows = ["", header, ""]
        if not self.todos:
            rows.append("  " + th.fg("dim", "No todos yet. Ask the agent to add some!"))
        else:
            done = sum(1 for t in self.todos if t["done"])
            rows += ["  " + th.fg("muted", f"{done}/{len(self.todos)} completed"), ""]
            for todo in self.todos:
                check = th.fg("success", "✓") if todo["done"] else th.fg("dim", "○")
                text = th.fg("dim" if todo["done"] else "text", todo["text"])
                rows.append(f"  {check} {th.fg('accent', '#' + str(todo['id']))} {text}")
        rows += ["", "  " + th.fg("dim", "Press Escape to close"), ""]
        return [truncate_to_width(row, width) for row in rows]

    def invalidate(self) -> None:
        return None


async def show_todos(args: str, ctx: CommandContext) -> None:
    if ctx.mode != "tui":
        await ctx.ui.notify("/todos requires interactive mode", "error")
        return
    todos = [dict(t) for t in STATE.items]
    await ctx.ui.custom(lambda tui, theme, keybindings, done: TodoList(todos, theme, done))


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="todo", label="Todo", description="Manage a todo list. Actions: list, add (text), toggle "
                  "(id), clear", parameters=PARAMETERS, execute=run_todo, render_call=render_call,
                  render_result=render_result))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("todos", show_todos, "Show all todos on the current branch"))
