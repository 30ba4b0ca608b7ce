"""Port of pi's ``bash-spawn-hook`` example: the built-in ``bash`` tool, with every command changed before it
runs (``~/.profile`` sourced first, ``PI_SPAWN_HOOK=1`` in its environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core import create_bash_tool, hookimpl


def spawn_hook(command: str, cwd: Path, env: dict[str, str]) -> tuple[str, Path, dict[str, str]]:
    return f"[ -f ~/.profile ] && . ~/.profile\n{command}", cwd, {**env, "PI_SPAWN_HOOK": "1"}


@hookimpl
def register_tools(register: Any) -> None:
    register(create_bash_tool(spawn_hook=spawn_hook), replaces="bash")
