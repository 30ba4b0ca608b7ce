"""The built-in toolsets: ``default`` (read, bash, edit, write), ``readonly`` and ``all``."""

from __future__ import annotations

from typing import Any

from pi_core import Toolset, hookimpl

BUILTIN_TOOLSETS = (
    Toolset("default", ["read", "bash", "edit", "write"], "Read, run commands, edit and write files (pi's default)"),
    Toolset("readonly", ["read", "grep", "find", "ls"], "Look but do not touch: read, grep, find, ls"),
    Toolset("all", ["read", "bash", "edit", "write", "grep", "find", "ls"], "All seven built-in tools"),
)


@hookimpl
def register_toolsets(register: Any) -> None:
    for toolset in BUILTIN_TOOLSETS:
        register(Toolset(toolset.name, list(toolset.tools), toolset.description))
