"""Names of MCP tools as models and codemode scripts see them: ``mcp__<server>__<tool>``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

MAX_TOOL_NAME = 64
"""Providers accept tool names of at most 64 characters of ``[A-Za-z0-9_-]``."""

RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")


def tool_name(server: str, tool: str, is_taken: Callable[[str], bool] = lambda name: False) -> str:
    """Everything but ``[A-Za-z0-9_]`` becomes ``_`` (so the name is also a script identifier). A name
    that is too long, or that ``is_taken`` by another tool, gets a hash suffix of server and tool."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME and not is_taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def is_mcp_tool(name: str) -> bool:
    """A server tool or one of the resource tools."""
    return name.startswith("mcp__") or name in RESOURCE_TOOLS


def server_summary(description: str | None, instructions: str | None) -> str:
    """One line for the system prompt: the configured description, else the server's instructions."""
    text = (description or "").strip() or (instructions or "").strip()
    return text.split("\n", 1)[0].strip()
