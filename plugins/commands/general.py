"""Built-in plugin: ``/help``, ``/quit``, ``/tools``, ``/copy`` and ``/history`` — registered like any plugin's
commands."""

from __future__ import annotations

from typing import Any

from pi_core import AssistantMessage, Command, CommandContext, hookimpl


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("help", _help, "Show commands and keys"))
    register(Command("quit", _quit, "Exit pi"))
    register(Command("tools", _tools, "List the tools the model can use"))
    register(Command("copy", _copy, "Copy the last answer to the clipboard"))
    register(Command("history", _history, "Show the earlier messages of a resumed session", usage="[count]"))


async def _help(args: str, ctx: CommandContext) -> None:
    commands = ctx.get_commands(include_builtin=True)
    labels = [f"/{c.name}" + (f" {c.usage}" if c.usage else "") for c in commands]
    width = max((len(label) for label in labels), default=0) + 2
    rows = [f"  {label.ljust(width)} {c.description or '(plugin command)'}" for label, c in zip(labels, commands)]
    keys = ctx.ui.key_help()
    if keys:
        rows += ["", "Keys"] + [f"  {key.ljust(22)} {what}" for key, what in keys]
    await ctx.ui.show("Commands", rows)


async def _quit(args: str, ctx: CommandContext) -> None:
    ctx.abort()
    ctx.shutdown()


async def _tools(args: str, ctx: CommandContext) -> None:
    active = set(ctx.get_active_tools())
    rows = []
    for tool in ctx.get_all_tools():
        mark = "●" if tool.name in active else "-"
        summary = (tool.description or "").strip().split("\n")[0]
        rows.append(f"  {mark} {tool.name}  {summary[:70]}")
    rows.append(f"  {len(active)} active (shown to the model); - registered but not active")
    await ctx.ui.show("Tools", rows)


def last_answer(ctx: CommandContext) -> str:
    for message in reversed(ctx.session.build_session_context().messages):
        if isinstance(message, AssistantMessage) and message.text():
            return message.text()
    return ""


async def _copy(args: str, ctx: CommandContext) -> None:
    text = last_answer(ctx)
    if not text:
        await ctx.ui.notify("There is no answer to copy yet", "warning")
        return
    how = await ctx.ui.copy_to_clipboard(text)
    if how:
        await ctx.ui.notify(f"Copied the last answer ({len(text)} characters) {how}")
        return
    await ctx.ui.notify("No clipboard available; here is the last answer:", "warning")
    await ctx.ui.show("", text.split("\n"))


async def _history(args: str, ctx: CommandContext) -> None:
    text = args.strip()
    if text and not text.isdigit():
        await ctx.ui.notify("Usage: /history [count] (a number of messages; none: all)", "error")
        return
    printed = await ctx.ui.show_earlier_messages(int(text) if text else None)
    if printed == 0:
        await ctx.ui.notify("No earlier messages: the whole conversation is on screen")
