"""Built-in plugin: ``/export [path]`` (the session as HTML, or its branch as JSONL) and ``/import <path>``
(continue a session file from elsewhere, keeping its id) — registered like any plugin's commands."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pi_core import (
    Command,
    CommandContext,
    SessionManager,
    default_export_name,
    default_session_dir,
    export_branch_jsonl,
    export_manager_html,
    hookimpl,
)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("export", _export, "Export the session as HTML (or as JSONL: a path ending in .jsonl)",
                     usage="[path]"))
    register(Command("import", _import, "Import a JSONL session, keeping its id, and continue it", usage="<path>",
                     idle_only=True))


def path_argument(args: str) -> str | None:
    """pi's path argument: the first word, or a quoted path (``"my file.html"``); ``None`` when absent or the
    quote is not closed."""
    text = args.strip()
    if not text:
        return None
    if text[0] in "\"'":
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else None
    return text.split()[0]


def _resolve(ctx: CommandContext, given: str) -> Path:
    path = Path(given).expanduser()
    return path if path.is_absolute() else Path(ctx.cwd) / path


async def _export(args: str, ctx: CommandContext) -> None:
    given = path_argument(args)
    manager = ctx.session
    try:
        if given is not None and given.endswith(".jsonl"):
            path = export_branch_jsonl(manager, _resolve(ctx, given))
        else:
            active = set(ctx.get_active_tools())
            tools = [t for t in ctx.get_all_tools() if t.name in active]
            target = _resolve(ctx, given or default_export_name(manager))
            # the terminal's current theme; elsewhere ctx.ui.theme is a colourless stand-in, so pi's default
            theme = ctx.ui.theme if ctx.mode == "tui" else None
            path = export_manager_html(manager, target, system_prompt=ctx.get_system_prompt(), tools=tools,
                                       theme=theme)
    except (OSError, ValueError) as exc:
        await ctx.ui.notify(f"Failed to export session: {exc}", "error")
        return
    await ctx.ui.notify(f"Session exported to: {path}")


def _destination(folder: Path, source: Path) -> Path:
    """``folder/<source name>``, or ``<name>-1``, ``-2``, ... when that exists (never overwritten)."""
    target = folder / source.name
    counter = 1
    while target.exists():
        target = folder / f"{source.stem}-{counter}{source.suffix}"
        counter += 1
    return target


async def _import(args: str, ctx: CommandContext) -> None:
    given = path_argument(args)
    if not given:
        await ctx.ui.notify("Usage: /import <path.jsonl>", "error")
        return
    source = _resolve(ctx, given).resolve()
    if not source.is_file():
        await ctx.ui.notify(f"Failed to import session: no session file at {source}", "error")
        return
    try:
        SessionManager.open(source, read_only=True).close()  # not a session: say so before anything changes
    except Exception as exc:  # noqa: BLE001 - the reader's message says what is wrong with the file
        await ctx.ui.notify(f"Failed to import session: {exc}", "error")
        return
    if not await ctx.ui.confirm("Import session", f"Replace current session with {given}?"):
        await ctx.ui.notify("Import cancelled")
        return
    folder = ctx.session.session_dir or default_session_dir(ctx.cwd)
    folder = Path(folder)
    stored = source.parent == folder.resolve()
    target = source if stored else _destination(folder, source)
    if not stored:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    try:
        result = await ctx.switch_session(target)
    except Exception:
        if not stored:
            target.unlink(missing_ok=True)
        raise
    if result.cancelled:
        if not stored:
            target.unlink(missing_ok=True)  # the import did not happen: leave no stray copy
        await ctx.ui.notify("Import cancelled")
        return
    if not stored and Path(ctx.session.session_file or "") != target:
        target.unlink(missing_ok=True)  # forked into this folder (its own folder is gone): the fork is the copy
    await ctx.ui.notify(f"Session imported from: {given}")
