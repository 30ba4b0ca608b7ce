"""``get_commands`` data: what a host may offer as ``/`` commands (pi's ``RpcSlashCommand``).

Plugin commands (with the commands of the extensions pi ships, ``/mcp`` and ``/llama``), prompt templates and
skills (as ``skill:<name>``), each with pi's ``sourceInfo``; pi's own commands such as ``/model`` are not
listed, as in pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...extensions.results import SlashCommandInfo
    from ...runtime.agent_session import AgentSession


def slash_commands(session: AgentSession) -> list[dict[str, Any]]:
    return [_to_json(info) for info in session.get_commands()]


def _to_json(info: SlashCommandInfo) -> dict[str, Any]:
    record: dict[str, Any] = {"name": info.name}
    if info.description:
        record["description"] = info.description
    record["source"] = info.source
    where = info.source_info
    data: dict[str, Any] = {"path": str(where.path), "source": where.source, "scope": where.scope,
                            "origin": where.origin}
    if where.base_dir is not None:
        data["baseDir"] = str(where.base_dir)
    record["sourceInfo"] = data
    return record


__all__ = ["slash_commands"]
