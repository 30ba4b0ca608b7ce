"""MCP servers that plugins register for a session (``ctx.register_mcp_server``), pi's
``pi.registerMcpServer``.

The core only checks and keeps the registrations and announces every change through the
``mcp_servers_change`` hook; the MCP plugin (or another plugin that handles that hook) connects them
next to the servers of ``mcp.json``, whose entries win over a registration of the same name.
Registrations are not saved: a plugin registers its servers again in every session.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class RegisteredMcpServer:
    """A server a plugin registered: ``config`` has the shape of an ``mcpServers`` entry of ``mcp.json``."""

    name: str
    config: dict[str, Any]


def check_server(name: str, config: Any) -> dict[str, Any]:
    """A copy of ``config``, or :class:`ValueError` saying what is wrong with it.

    Only the shape is checked here (a name, and ``command`` or ``url``); the MCP plugin validates the
    fields when it connects the server and reports problems like those of ``mcp.json``.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f'invalid MCP server name "{name}" (use letters, digits, "_" and "-")')
    if not isinstance(config, dict):
        raise ValueError(f'MCP server "{name}": the config must be a dict like an mcpServers entry of mcp.json')
    if not isinstance(config.get("command"), str) and not isinstance(config.get("url"), str):
        raise ValueError(f'MCP server "{name}" needs "command" (stdio) or "url" (streamable HTTP)')
    return copy.deepcopy(config)


class McpServerRegistry:
    """The registered servers of one session, in registration order."""

    def __init__(self) -> None:
        self._servers: dict[str, RegisteredMcpServer] = {}

    def register(self, name: str, config: Any) -> None:
        """Add a server, or replace the one registered under ``name``."""
        checked = check_server(name, config)
        self._servers.pop(name, None)
        self._servers[name] = RegisteredMcpServer(name, checked)

    def unregister(self, name: str) -> bool:
        return self._servers.pop(name, None) is not None

    def list(self) -> list[RegisteredMcpServer]:
        """Copies of the registrations (changing them changes nothing)."""
        return [RegisteredMcpServer(s.name, copy.deepcopy(s.config)) for s in self._servers.values()]


__all__ = ["McpServerRegistry", "RegisteredMcpServer", "check_server"]
