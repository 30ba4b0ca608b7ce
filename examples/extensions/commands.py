"""Port of pi's ``commands`` example: ``/commands [extension|prompt|skill]`` lists the session's slash
commands (``ctx.get_commands()``) grouped by source; choosing one offers to show where it comes from.
Tab after ``/commands `` offers the sources (pi's ``getArgumentCompletions``)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, SlashCommandInfo, hookimpl

SOURCES = (("extension", "Extensions"), ("prompt", "Prompts"), ("skill", "Skills"))


def _line(command: SlashCommandInfo) -> str:
    return f"/{command.name} - {command.description}" if command.description else f"/{command.name}"


async def list_commands(args: str, ctx: CommandContext) -> None:
    commands = ctx.get_commands()
    wanted = args.strip()
    shown = [c for c in commands if c.source == wanted] if wanted else commands
    if not shown:
        await ctx.ui.notify(f"No {wanted} commands found" if wanted else "No commands found", "info")
        return
    items: list[str] = []
    for key, label in SOURCES:
        group = [c for c in shown if c.source == key]
        if group:
            items += [f"--- {label} ---", *map(_line, group)]
    selected = await ctx.ui.select("Available Commands", items)
    if not selected or selected.startswith("---"):
        return
    name = selected.split(" - ")[0][1:]
    chosen = next((c for c in commands if c.name == name), None)
    if chosen is not None and chosen.source_info.path:
        if await ctx.ui.confirm(chosen.name, f"View source path?\n{chosen.source_info.path}"):
            await ctx.ui.notify(str(chosen.source_info.path), "info")


def complete_source(typed: str) -> list[tuple[str, str]]:
    """The argument's completions in the editor (pi's ``getArgumentCompletions``)."""
    return [(key, label) for key, label in SOURCES if key.startswith(typed)]


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("commands", list_commands, "List available slash commands", usage="[extension|prompt|skill]",
                     argument_completions=complete_source))
