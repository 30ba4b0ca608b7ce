"""Built-in plugin: the session commands — ``/name``, ``/session``, ``/new``, ``/resume``, ``/compact``,
``/tree``, ``/fork``, ``/clone`` and ``/reload`` — on the public command context, like any plugin's commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core import (
    AssistantMessage,
    Command,
    CommandContext,
    CompactionError,
    CompactionResult,
    ForkPoint,
    SessionManager,
    default_session_dir,
    hookimpl,
)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("name", _name, "Set the session's display name (no argument: show it)", usage="[name]"))
    register(Command("session", _session, "Show the session file, id, message counts, tokens and cost"))
    register(Command("new", _new, "Start a new session", idle_only=True))
    register(Command("resume", _resume, "Resume an earlier session of this project", idle_only=True))
    register(Command("compact", _compact, "Summarise the older conversation to free context", usage="[focus]",
                     idle_only=True))
    register(Command("tree", _tree, "Go back to an earlier message and continue from there (optionally summarising)",
                     idle_only=True))
    register(Command("fork", _fork, "Copy the conversation before a message into a new session", idle_only=True))
    register(Command("clone", _clone, "Copy this branch into a new session and continue there", idle_only=True))
    register(Command("reload", _reload, "Reload keybindings, extensions, skills, prompt templates, themes and "
                                        "context files", idle_only=True))


async def _name(args: str, ctx: CommandContext) -> None:
    if not args:
        current = ctx.get_session_name()
        await ctx.ui.notify(f"Session name: {current}" if current else "This session has no name (/name <name>)")
        return
    ctx.set_session_name(args)
    await ctx.ui.notify(f"Session name set: {args}")


async def _session(args: str, ctx: CommandContext) -> None:
    manager = ctx.session
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    calls, cost = 0, 0.0
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for message in manager.build_session_context().messages:
        role = getattr(message, "role", None)
        if role in counts:
            counts[role] += 1
        if isinstance(message, AssistantMessage):
            calls += len(message.tool_calls())
            for key in tokens:
                tokens[key] += getattr(message.usage, key)
            cost += float(message.usage.cost.total or 0)
    file = manager.session_file if manager.is_persisted else None
    rows = [f"  File:    {file or '(not saved)'}", f"  ID:      {manager.session_id}"]
    if manager.get_session_name():
        rows.append(f"  Name:    {manager.get_session_name()}")
    rows += ["", "Messages",
             f"  User: {counts['user']}   Assistant: {counts['assistant']}   Tool calls: {calls}   "
             f"Tool results: {counts['toolResult']}   Total: {sum(counts.values())}",
             "", "Tokens",
             f"  Input: {tokens['input']:,}   Output: {tokens['output']:,}   Cache read: {tokens['cache_read']:,}   "
             f"Cache write: {tokens['cache_write']:,}   Total: {sum(tokens.values()):,}",
             "", "Cost", f"  ${cost:.4f}"]
    await ctx.ui.show("Session", rows)


async def _new(args: str, ctx: CommandContext) -> None:
    result = await ctx.new_session()
    if result.cancelled:
        await ctx.ui.notify("Not switched: a plugin cancelled the switch (session_before_switch)", "warning")
    else:
        await ctx.ui.notify("New session started")


async def _resume(args: str, ctx: CommandContext) -> None:
    manager = ctx.session

    def load(all_projects: bool) -> list[Any]:
        if all_projects:  # every project's sessions: the default folder, or a custom one that holds them all
            own = manager.session_dir
            custom = own is not None and Path(own) != default_session_dir(ctx.cwd)
            return list(SessionManager.list_all(session_dir=own if custom else None))
        return list(SessionManager.list(ctx.cwd, session_dir=manager.session_dir))

    if not ctx.has_ui and not [i for i in load(False) if str(i.path) != str(manager.session_file)]:
        await ctx.ui.notify("No other sessions for this project")
        return
    info = await ctx.ui.select_session(load, exclude=manager.session_file)
    if info is None:
        return
    try:
        SessionManager.open(info.path, read_only=True).close()  # a broken file fails here, before anything changes
    except Exception as exc:  # noqa: BLE001 - the file's own error is the message
        await ctx.ui.notify(f"Not switched: {exc}", "error")
        return
    if (await ctx.switch_session(info.path)).cancelled:  # a plugin said no, or the user when asked
        await ctx.ui.notify("Resume cancelled")
        return
    await ctx.ui.notify(f"Resumed {info.name or info.id}")


async def _compact(args: str, ctx: CommandContext) -> None:
    import asyncio

    done: asyncio.Future[CompactionResult | Exception] = asyncio.get_running_loop().create_future()
    ctx.compact(custom_instructions=args or None, on_complete=done.set_result, on_error=done.set_result)
    outcome = await done
    if isinstance(outcome, CompactionError) and str(outcome) == "Compaction cancelled":
        await ctx.ui.notify("Compaction cancelled by a plugin", "warning")
    elif isinstance(outcome, Exception):
        return  # the compaction_end event already told the user why
    else:
        await ctx.ui.notify(f"Compacted: {outcome.tokens_before} tokens before, "
                            f"about {outcome.estimated_tokens_after} now")


def fork_points(ctx: CommandContext) -> list[ForkPoint]:
    """The user messages of the active branch, oldest first."""
    points = []
    for entry in ctx.session.get_raw_branch():
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(entry.get("id"), str):
            content = message.get("content")  # as stored: another program may have written anything here
            text = content if isinstance(content, str) else "".join(
                b["text"] for b in (content if isinstance(content, list) else [])
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
            points.append(ForkPoint(entry["id"], text))
    return points


async def _pick(ctx: CommandContext, title: str) -> ForkPoint | None:
    points = fork_points(ctx)
    if not points:
        await ctx.ui.notify("No user messages in this branch yet")
        return None
    return await ctx.ui.select_fork_point(points, title=title)


SUMMARY_CHOICES = ("No summary", "Summarize the branch", "Summarize with my instructions")


async def _tree(args: str, ctx: CommandContext) -> None:
    manager = ctx.session
    if manager.get_leaf_id() is None:
        await ctx.ui.notify("The session has no entries yet")
        return
    entry_id = await ctx.ui.select_tree_entry(manager)
    if entry_id is None:
        return
    if entry_id == manager.get_leaf_id():
        await ctx.ui.notify("That is where the session is now")
        return
    choice = await ctx.ui.select("Summarise the branch you are leaving?", list(SUMMARY_CHOICES))
    if choice is None:
        return
    instructions = await ctx.ui.input("Instructions for the summary") if choice == SUMMARY_CHOICES[2] else None
    outcome = await ctx.navigate_tree(entry_id, summarize=choice != SUMMARY_CHOICES[0],
                                      custom_instructions=instructions)
    if outcome.cancelled:
        await ctx.ui.notify("Navigation cancelled by a plugin", "warning")
        return
    text = outcome.editor_text
    if text and not ctx.ui.get_editor_text().strip():
        await ctx.ui.set_editor_text(text)
    await ctx.ui.notify("Moved to the selected point" + ("; the message is in the editor to change and resend"
                                                         if text else ""))


async def _fork(args: str, ctx: CommandContext) -> None:
    chosen = await _pick(ctx, "Fork before which message?")
    if chosen is None:
        return
    result = await ctx.fork(chosen.entry_id)
    if result.cancelled:
        await ctx.ui.notify("Fork cancelled by a plugin", "warning")
        return
    await ctx.ui.set_editor_text(result.text)
    await ctx.ui.notify(f"Forked into {ctx.session.session_file}")


async def _clone(args: str, ctx: CommandContext) -> None:
    leaf = ctx.session.get_leaf_id()
    if leaf is None:
        await ctx.ui.notify("Nothing to clone yet", "warning")
        return
    if (await ctx.fork(leaf, position="at")).cancelled:
        await ctx.ui.notify("Clone cancelled by a plugin", "warning")
    else:
        await ctx.ui.notify(f"Cloned into {ctx.session.session_file}")


async def _reload(args: str, ctx: CommandContext) -> None:
    await ctx.reload()  # the terminal re-reads keybindings.json and the themes when the session says it is done
    await ctx.ui.notify("Reloaded keybindings, extensions, skills, prompt templates, themes and context files")
