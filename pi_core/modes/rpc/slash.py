"""``get_commands`` data: what a host may offer as ``/`` commands (pi's ``RpcSlashCommand``).

Plugin commands, prompt templates and skills (as ``skill:<name>``); interactive-only built-ins
such as ``/model`` are not listed, as in pi.
"""

from __future__ import annotations

from typing import Any

_SCOPES = {"user": "user", "project": "project", "path": "temporary"}


def slash_commands(session: Any) -> list[dict[str, Any]]:
    commands = list(session.command_list())
    for template in getattr(session, "templates", None) or []:
        commands.append(_resource(template.name, template, "prompt"))
    for skill in getattr(session, "skills", None) or []:
        commands.append(_resource(f"skill:{skill.name}", skill, "skill"))
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
