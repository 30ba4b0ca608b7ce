"""``get_commands`` data: what a host may offer as ``/`` commands (pi's ``RpcSlashCommand``).

Plugin commands, prompt templates and skills (as ``skill:<name>``); interactive-only built-ins
such as ``/model`` are not listed, as in pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

_SCOPES = {"user": "user", "project": "project", "path": "temporary"}


def slash_commands(session: AgentSession) -> list[dict[str, Any]]:
    commands = _plugin_commands(session)
    for template in session.templates:
        commands.append(_resource(template.name, template, "prompt"))
    for skill in session.skills:
        commands.append(_resource(f"skill:{skill.name}", skill, "skill"))
    return commands


def _plugin_commands(session: AgentSession) -> list[dict[str, Any]]:
    commands = []
    for entry in session.host.commands.entries.values():
        record = session.host.records.get(entry.plugin)
        item: dict[str, Any] = {"name": entry.item.name, "description": entry.item.description or None,
                                "source": "extension"}
        if record is not None and record.path is not None:
            item["path"] = str(record.path)
        commands.append({k: v for k, v in item.items() if v is not None})
    return commands


def _resource(name: str, item: Any, source: str) -> dict[str, Any]:
    record: dict[str, Any] = {"name": name}
    if getattr(item, "description", None):
        record["description"] = item.description
    record["source"] = source
    origin = getattr(item, "source", "path")
    info: dict[str, Any] = {"path": str(item.file_path), "source": "cli" if origin == "path" else "local",
                            "scope": _SCOPES.get(origin, "temporary"), "origin": "top-level"}
    base = getattr(item, "base_dir", None)
    if base is not None:
        info["baseDir"] = str(base)
    record["sourceInfo"] = info
    return record


__all__ = ["slash_commands"]
