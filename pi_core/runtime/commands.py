"""The ``/`` commands a session knows (``ctx.get_commands()``, RPC ``get_commands``): plugin commands,
then prompt templates, then skills as ``skill:<name>``, each with where it comes from."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from ..extensions.results import SlashCommandInfo, SourceInfo

if TYPE_CHECKING:
    from .agent_session import AgentSession

_SCOPES = {"user": "user", "project": "project", "path": "temporary"}


def command_infos(session: AgentSession, *, include_builtin: bool = False) -> list[SlashCommandInfo]:
    infos = [_plugin_command(session, name) for name in session.host.commands.names()]
    if not include_builtin:  # pi's own commands are not listed to plugins and RPC clients
        infos = [i for i in infos if i.source_info.source != "builtin"]
    infos += [_resource(t.name, t, "prompt") for t in session.templates]
    infos += [_resource(f"skill:{s.name}", s, "skill") for s in session.skills]
    return infos


def _plugin_command(session: AgentSession, name: str) -> SlashCommandInfo:
    entry = session.host.commands.entries[name]
    record = session.host.records.get(entry.plugin)
    path = record.path if record is not None else None
    source = record.source if record is not None else "sdk"
    scope = {"builtin": "builtin", "entrypoint": "user", "global": "user", "project": "project"}.get(source,
                                                                                                  "temporary")
    return SlashCommandInfo(entry.item.name, entry.item.description or None, "extension",
                            SourceInfo(path, source, scope), plugin=entry.plugin,
                            usage=getattr(entry.item, "usage", "") or "")


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
