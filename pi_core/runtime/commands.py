"""The ``/`` commands a session knows (``ctx.get_commands()``, RPC ``get_commands``): plugin commands,
then prompt templates, then skills as ``skill:<name>``, each with where it comes from."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..extensions.results import SlashCommandInfo, SourceInfo

if TYPE_CHECKING:
    from .agent_session import AgentSession

_SCOPES = {"user": "user", "project": "project", "path": "temporary"}


def command_infos(session: AgentSession, *, include_builtin: bool = False) -> list[SlashCommandInfo]:
    infos = [_plugin_command(session, name) for name in session.host.commands.names()]
    if not include_builtin:  # pi's own commands (/model, /tree, ...) are not listed to plugins and RPC clients
        infos = [i for i in infos if not _pi_builtin(session, i.plugin)]
    infos += [_resource(t.name, t, "prompt") for t in session.templates]
    infos += [_resource(f"skill:{s.name}", s, "skill") for s in session.skills]
    return infos


def _pi_builtin(session: AgentSession, plugin: str | None) -> bool:
    """A command of pi itself, not of one of the extensions pi ships (``/mcp`` and ``/llama`` are listed)."""
    from ..extensions.manager import BUILTIN_EXTENSIONS

    record = session.host.records.get(plugin or "")
    return record is not None and record.source == "builtin" and plugin not in BUILTIN_EXTENSIONS


def _plugin_command(session: AgentSession, name: str) -> SlashCommandInfo:
    entry = session.host.commands.entries[name]
    return SlashCommandInfo(entry.item.name, entry.item.description or None, "extension",
                            plugin_source(session, entry.plugin), plugin=entry.plugin,
                            usage=getattr(entry.item, "usage", "") or "")


def plugin_source(session: AgentSession, plugin: str) -> SourceInfo:
    """Where a plugin comes from, as pi describes an extension (its ``sourceInfo``). Plugins without a file
    get pi's synthetic paths: ``builtin:<name>``, ``<sdk:name>``, ``<entrypoint:distribution>``."""
    host = session.host
    record = host.records.get(plugin)
    if record is None or record.source == "sdk":
        return SourceInfo(Path(f"<sdk:{plugin}>"), "sdk")
    if record.source == "builtin":
        return SourceInfo(Path(f"builtin:{plugin}"), "builtin")
    package = next((p for p in (host.packages.packages if host.packages is not None else ())
                    if record.dist is not None and record.dist in (p.source.text, p.dist)), None)
    path = record.path or Path(f"<entrypoint:{record.dist or plugin}>")
    if package is not None:
        return SourceInfo(path, package.source.text, package.scope, "package", package.root)
    if record.source == "cli":
        return SourceInfo(path, "cli", "temporary", "top-level", path.parent)
    if record.source == "global":
        return SourceInfo(path, "local", "user", "top-level", host.agent_dir / "extensions")
    if record.source == "project":
        return SourceInfo(path, "local", "project", "top-level", host.cwd / ".pi" / "extensions")
    return SourceInfo(path, "entrypoint", "user", "package")  # pip-installed without a settings entry


def _resource(name: str, item: Any, source: str) -> SlashCommandInfo:
    origin = getattr(item, "source", "path")
    info = SourceInfo(item.file_path, "cli" if origin == "path" else "local", _SCOPES.get(origin, "temporary"),
                      "top-level", getattr(item, "base_dir", None))
    return SlashCommandInfo(name, getattr(item, "description", None) or None, source, info)  # type: ignore[arg-type]


async def argument_completions(session: AgentSession, name: str, prefix: str) -> list[tuple[str, str]] | None:
    """``(value, description)`` pairs a command offers for its argument typed so far (its
    ``Command.argument_completions``, pi's ``getArgumentCompletions``, which may be ``async``); ``None``
    when the command offers none.

    :raises KeyError: no command of that name.
    :raises Exception: whatever the plugin's completer raised.
    """
    entry = session.host.commands.entries.get(name)
    if entry is None:
        raise KeyError(name)
    complete = getattr(entry.item, "argument_completions", None)
    items = complete(prefix) if complete is not None else None
    if inspect.isawaitable(items):
        items = await items
    if items is None:
        return None
    return [(item, "") if isinstance(item, str) else (str(item[0]), str(item[1])) for item in items]


__all__ = ["argument_completions", "command_infos"]
