"""Built-in slash commands of the interactive mode.

Built-ins are matched before plugin commands (``session.host.commands``), as in pi. Each is a
:class:`BuiltinCommand` in :data:`BUILTINS`; other parts of pi add theirs with the same decorator
from their own module, e.g.::

    from pi_core.modes.interactive.commands import builtin

    @builtin("compact", "Summarise the conversation to free context", usage="[instructions]")
    async def compact(host, args):
        ...

``host`` is the running app (:class:`CommandHost`): the current session, the renderer (printing), the
UI (dialogs) and session switching.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_core.runtime.agent_session import ForkPoint

    from .render import Renderer
    from .style import Palette
    from .ui import InteractiveUI

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


class CommandHost(Protocol):
    """What a command handler can use."""

    session: Any
    renderer: Renderer
    ui: InteractiveUI
    palette: Palette

    async def switch_session(self, target: Any, reason: str) -> bool: ...
    def request_exit(self) -> None: ...


Handler = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True)
class BuiltinCommand:
    name: str
    handler: Handler
    description: str
    usage: str = ""
    while_running: bool = False
    """May run while the agent works (otherwise the user is asked to wait or press Esc)."""


class CommandTable:
    """Built-in commands by name; a later registration of a name replaces the earlier one."""

    def __init__(self) -> None:
        self._commands: dict[str, BuiltinCommand] = {}

    def add(self, command: BuiltinCommand) -> None:
        self._commands[command.name] = command

    def get(self, name: str) -> BuiltinCommand | None:
        return self._commands.get(name)

    def __iter__(self) -> Iterator[BuiltinCommand]:
        return iter(sorted(self._commands.values(), key=lambda c: c.name))


BUILTINS = CommandTable()


def builtin(name: str, description: str, *, usage: str = "",
            while_running: bool = False) -> Callable[[Handler], Handler]:
    """Register a built-in command (see the module docstring)."""
    def decorate(handler: Handler) -> Handler:
        BUILTINS.add(BuiltinCommand(name, handler, description, usage, while_running))
        return handler
    return decorate


def parse(text: str) -> tuple[str, str] | None:
    """``"/name args"`` → ``("name", "args")``; ``None`` for text that is not a command."""
    if not text.startswith("/") or text.startswith("//") or len(text) < 2 or text[1].isspace():
        return None
    name, _, args = text[1:].partition(" ")
    return name, args.strip()


def all_commands(session: Any) -> list[tuple[str, str]]:
    """``(name, description)`` of every command: built-ins, then plugin commands."""
    names = [(c.name, c.description) for c in BUILTINS]
    seen = {n for n, _ in names}
    for command in session.host.commands:
        if command.name not in seen:
            names.append((command.name, command.description or "(plugin command)"))
    return names


# ---------------------------------------------------------------------------------------------
# the commands

KEYS = (
    ("Enter", "send (while the agent works: queue as steering)"),
    ("Alt+Enter", "queue as follow-up while the agent works; otherwise a new line"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Esc, Ctrl+C", "interrupt the agent (queued messages come back into the editor)"),
    ("Ctrl+C", "clear the editor; twice on an empty editor: exit"),
    ("Ctrl+D", "exit (on an empty editor)"),
    ("Tab", "complete /commands and @file paths"),
    ("Up/Down", "history"),
)


@builtin("help", "Show commands and keys", while_running=True)
async def _help(host: CommandHost, args: str) -> None:
    p = host.palette
    commands = all_commands(host.session)
    width = max(len(n) for n, _ in commands) + 2
    rows = [p("Commands", "bold")]
    for name, description in commands:
        usage = BUILTINS.get(name).usage if BUILTINS.get(name) else ""
        label = f"/{name}" + (f" {usage}" if usage else "")
        rows.append(f"  {p(label.ljust(width + 10), 'cyan')} {description}")
    rows += ["", p("Keys", "bold")]
    rows += [f"  {p(key.ljust(22), 'cyan')} {what}" for key, what in KEYS]
    host.renderer.print_block(rows)


@builtin("quit", "Exit pi", while_running=True)
async def _quit(host: CommandHost, args: str) -> None:
    host.request_exit()


@builtin("name", "Set the session's display name (no argument: show it)", usage="[name]", while_running=True)
async def _name(host: CommandHost, args: str) -> None:
    manager = host.session.session
    if not args:
        current = manager.get_session_name()
        host.renderer.notice(f"Session name: {current}" if current else "This session has no name (/name <name>)")
        return
    manager.append_session_info(args)
    host.renderer.notice(f"Session name set: {args}")


@builtin("session", "Show the session file, id, message counts, tokens and cost", while_running=True)
async def _session(host: CommandHost, args: str) -> None:
    host.renderer.print_block(session_rows(host.palette, host.session))


def session_rows(p: Palette, session: Any) -> list[str]:
    manager = session.session
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    calls = 0
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    cost = 0.0
    for message in session.messages:
        role = getattr(message, "role", None)
        if role in counts:
            counts[role] += 1
        if role == "assistant":
            calls += len(message.tool_calls())
            for key in tokens:
                tokens[key] += getattr(message.usage, key)
            cost += float(message.usage.cost.total or 0)
    file = manager.session_file if manager.is_persisted else None
    rows = [p("Session", "bold"),
            f"  File:    {file or '(not saved)'}",
            f"  ID:      {manager.session_id}"]
    if manager.get_session_name():
        rows.append(f"  Name:    {manager.get_session_name()}")
    rows += ["", p("Messages", "bold"),
             f"  User: {counts['user']}   Assistant: {counts['assistant']}   Tool calls: {calls}   "
             f"Tool results: {counts['toolResult']}   Total: {sum(counts.values())}",
             "", p("Tokens", "bold"),
             f"  Input: {tokens['input']:,}   Output: {tokens['output']:,}   Cache read: {tokens['cache_read']:,}   "
             f"Cache write: {tokens['cache_write']:,}   Total: {sum(tokens.values()):,}",
             "", p("Cost", "bold"), f"  ${cost:.4f}"]
    return rows


@builtin("tools", "List the tools the model can use", while_running=True)
async def _tools(host: CommandHost, args: str) -> None:
    p = host.palette
    active = set(host.session.active_tool_names())
    rows = [p("Tools", "bold")]
    for tool in host.session.host.tools:
        mark = p(p.glyphs.tool, "green") if tool.name in active else p("-", "gray")
        summary = (tool.description or "").strip().split("\n")[0]
        plugin = host.session.host.tools.plugin_of(tool.name) or ""
        rows.append(f"  {mark} {p(tool.name, 'bold')}  {summary[:70]}  {p(f'[{plugin}]', 'gray')}")
    rows.append(p(f"  {len(active)} active (shown to the model); - registered but not active", "gray"))
    host.renderer.print_block(rows)


@builtin("copy", "Copy the last answer to the clipboard", while_running=True)
async def _copy(host: CommandHost, args: str) -> None:
    text = last_answer(host.session) or host.renderer.last_answer
    if not text:
        host.renderer.notice("There is no answer to copy yet", "warning")
        return
    how = await asyncio.to_thread(copy_to_clipboard, text)
    if how:
        host.renderer.notice(f"Copied the last answer ({len(text)} characters) {how}")
        return
    host.renderer.notice("No clipboard available; here is the last answer:", "warning")
    host.renderer.print_block(text.split("\n"))


def last_answer(session: Any) -> str:
    for message in reversed(session.messages):
        if getattr(message, "role", None) == "assistant" and message.text():
            return message.text()
    return ""


def copy_to_clipboard(text: str) -> str | None:
    """Copy with the platform's clipboard program, else the terminal's OSC 52; how it was done, or None."""
    candidates = [["pbcopy"], ["wl-copy"], ["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"],
                  ["clip.exe"]]
    for argv in candidates:
        if shutil.which(argv[0]) is None or (argv[0] in ("xclip", "xsel") and not os.environ.get("DISPLAY")):
            continue
        try:
            subprocess.run(argv, input=text.encode(), check=True, timeout=5, capture_output=True)
            return f"with {argv[0]}"
        except (OSError, subprocess.SubprocessError):
            continue
    if sys.stdout.isatty() and os.environ.get("PI_NO_OSC52") is None:
        sys.stdout.write(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")
        sys.stdout.flush()
        return "through the terminal (OSC 52; not every terminal supports it)"
    return None


@builtin("thinking", "Set the thinking level (no argument: choose)", usage="[level]", while_running=True)
async def _thinking(host: CommandHost, args: str) -> None:
    session = host.session
    level = args.lower()
    if not level:
        picked = await host.ui.select(f"Thinking level (now {session.thinking_level})", list(THINKING_LEVELS))
        if picked is None:
            return
        level = picked
    if level not in THINKING_LEVELS:
        host.renderer.notice(f"Unknown thinking level {level!r}; choose one of {', '.join(THINKING_LEVELS)}", "error")
        return
    if level != "off" and not session.model.reasoning:
        host.renderer.notice(f"{session.model.id} does not support thinking; the level stays off", "warning")
        level = "off"
    session.set_thinking_level(level)
    host.renderer.notice(f"Thinking level: {level}")


@builtin("model", "Switch the model (a pattern, provider/id, or choose from a list)", usage="[pattern]")
async def _model(host: CommandHost, args: str) -> None:
    session = host.session
    models = available_models(session)
    matches = match_models(models, args) if args else models
    if not matches:
        close = _close_names(session, args)
        hint = f"; close: {', '.join(close)}" if close else ""
        host.renderer.notice(f"No model matches {args!r}{hint}", "error")
        return
    chosen = matches[0] if len(matches) == 1 and args else await _pick_model(host, matches)
    if chosen is None:
        return
    await session.set_model(chosen)
    if not chosen.reasoning and session.thinking_level != "off":
        session.set_thinking_level("off")
    host.renderer.notice(f"Model: {chosen.provider}/{chosen.id}" +
                         ("" if chosen.reasoning else " (no thinking)"))


async def _pick_model(host: CommandHost, models: list[Any]) -> Any:
    current = host.session.model
    labels = [f"{m.provider}/{m.id}" + (f"  {m.name}" if m.name and m.name != m.id else "")
              + ("  (current)" if (m.provider, m.id) == (current.provider, current.id) else "") for m in models]
    index = await host.ui.select_index("Model", labels)
    return None if index is None else models[index]


def available_models(session: Any) -> list[Any]:
    """Models of the session's registry (with usable credentials first), else of the providers' lists."""
    registry = session.models
    models = list(registry.get_models())
    try:
        authed = list(registry.available_models())
    except Exception:  # a broken credentials file must not break the command
        authed = []
    models = authed or models
    current = session.model
    if not any((m.provider, m.id) == (current.provider, current.id) for m in models):
        models.insert(0, current)
    return models


def match_models(models: list[Any], pattern: str) -> list[Any]:
    """Exact ``provider/id`` or id first; else every model whose ``provider/id`` or name contains the
    pattern (case-insensitive)."""
    wanted = pattern.strip().lower()
    exact = [m for m in models if wanted in (m.id.lower(), f"{m.provider}/{m.id}".lower())]
    if exact:
        return exact[:1] if len(exact) == 1 else exact
    return [m for m in models if wanted in f"{m.provider}/{m.id}".lower() or wanted in (m.name or "").lower()]


def _close_names(session: Any, text: str) -> list[str]:
    try:
        return list(session.models.close_names(text))
    except Exception:
        return []


@builtin("new", "Start a new session")
async def _new(host: CommandHost, args: str) -> None:
    if await host.switch_session(None, "new"):
        host.renderer.notice("New session started")


@builtin("resume", "Resume another session (search, all folders, sort, rename, delete)")
async def _resume(host: CommandHost, args: str) -> None:
    from pi_core import SessionManager

    from .session_picker import PickerState, move_to_trash

    manager = host.session.session

    def load(all_folders: bool) -> list[Any]:
        if all_folders:  # every project's sessions: the default root, or a custom folder that holds them all
            from pi_core.session.locations import default_session_dir

            own = manager.session_dir
            custom = own is not None and Path(own) != default_session_dir(host.session.cwd)
            return list(SessionManager.list_all(session_dir=own if custom else None))
        return list(SessionManager.list(host.session.cwd, session_dir=manager.session_dir))

    state = PickerState(load, exclude=str(manager.session_file) if manager.session_file else None)
    starting = getattr(host, "starting", False)
    while True:
        picked = await host.ui.pick_session_ui(state)
        if picked is None:
            if starting:  # Esc in `pi -r` leaves, as pi does, instead of opening an empty session
                host.request_exit()
            return
        action, info = picked
        if action == "resume":
            break
        if action == "rename":
            name = await host.ui.input_prefilled("New name for the session", info.name or "")
            if name and name.strip():
                other = SessionManager.open(info.path)
                try:
                    other.append_session_info(name.strip())
                finally:
                    other.close()
                host.renderer.notice(f"Renamed to {name.strip()}")
        elif action == "delete":
            title = info.name or " ".join(info.first_message.split())[:60]
            if await host.ui.confirm("Delete this session?", f"{title} (moved to the trash)"):
                where = move_to_trash(Path(info.path))
                host.renderer.notice(f"Moved to the trash: {where}")
        state.refresh(reload=True)
    if await host.switch_session(info.path, "resume"):
        host.renderer.notice(f"Resumed {info.name or info.id}")


@builtin("compact", "Summarise the older conversation to free context", usage="[focus]")
async def _compact(host: CommandHost, args: str) -> None:
    from pi_core.runtime.compaction import CompactionError

    try:
        result = await host.session.compact(args or None)
    except CompactionError:
        return  # the compaction_end event already told the user why
    if result is None:
        host.renderer.notice("Compaction cancelled by a plugin", "warning")
        return
    host.renderer.notice(f"Compacted: {result.tokens_before} tokens before, about {result.estimated_tokens_after} now")


async def _pick_user_message(host: CommandHost, title: str) -> ForkPoint | None:
    messages = host.session.get_fork_messages()
    if not messages:
        host.renderer.notice("No user messages in this branch yet")
        return None
    labels = [" ".join(m.text.split())[:70] or "(empty)" for m in messages]
    index = await host.ui.select_index(title, labels)
    return None if index is None else messages[index]


SUMMARY_CHOICES = ("No summary", "Summarize the branch", "Summarize with my instructions")


@builtin("tree", "Navigate the session tree: continue from any entry (optionally summarising the branch left)")
async def _tree(host: CommandHost, args: str) -> None:
    from .tree_view import TreeState

    manager = host.session.session
    setting = _setting(host, "treeFilterMode", "default")
    state = TreeState(manager.get_tree(), manager.get_leaf_id(), setting if isinstance(setting, str) else "default")
    if not state.rows:
        host.renderer.notice("The session has no entries yet")
        return
    while True:
        picked = await host.ui.navigate_tree_ui(state, getattr(host, "keymap", None))
        if picked is None:
            return
        action, entry_id = picked
        if action != "label":
            break
        label = await host.ui.input_prefilled("Label (empty removes it)", manager.get_label(entry_id) or "")
        if label is not None:
            manager.append_label_change(entry_id, label.strip() or None)
            state.roots = manager.get_tree()
            state.rebuild(select=entry_id)
    if entry_id == manager.get_leaf_id():
        host.renderer.notice("That is where the session is now")
        return
    choice = await host.ui.select_index("Summarise the branch you are leaving?", list(SUMMARY_CHOICES))
    if choice is None:
        return
    instructions = await host.ui.input("Instructions for the summary") if choice == 2 else None
    outcome = await host.session.navigate_tree(entry_id, summarize=choice > 0, custom_instructions=instructions)
    if outcome.get("cancelled"):
        host.renderer.notice("Navigation cancelled by a plugin", "warning")
        return
    text = outcome.get("editor_text")
    if text and not host.ui.get_editor_text().strip():
        await host.ui.set_editor_text(text)
    host.renderer.notice("Moved to the selected point" + ("; the message is in the editor to change and resend"
                                                          if text else ""))


def _setting(host: CommandHost, key: str, default: Any) -> Any:
    settings = getattr(host.session, "settings", None)
    value = settings.get(key, None) if settings is not None and hasattr(settings, "get") else None
    return default if value is None else value


@builtin("fork", "Copy the conversation before a message into a new session")
async def _fork(host: CommandHost, args: str) -> None:
    chosen = await _pick_user_message(host, "Fork before which message?")
    if chosen is None:
        return
    cancelled, text = await host.session.fork(chosen.entry_id)
    if cancelled:
        host.renderer.notice("Fork cancelled by a plugin", "warning")
        return
    await host.ui.set_editor_text(text)
    host.renderer.notice(f"Forked into {host.session.session.session_file}")


@builtin("clone", "Copy this branch into a new session and continue there")
async def _clone(host: CommandHost, args: str) -> None:
    if await host.session.clone():
        host.renderer.notice(f"Cloned into {host.session.session.session_file}")
    else:
        host.renderer.notice("Clone cancelled by a plugin", "warning")


__all__ = ["BUILTINS", "BuiltinCommand", "CommandHost", "CommandTable", "all_commands", "builtin", "parse"]
