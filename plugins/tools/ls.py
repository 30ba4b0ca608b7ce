"""The ``ls`` tool: one directory's entries, sorted, directories marked with '/'.

:func:`create_ls_tool` makes one that lists through other ``operations`` (a remote machine), with the same
arguments, limits and messages.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import (
    DEFAULT_MAX_BYTES,
    Tool,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    capped_listing,
    count_argument,
    hookimpl,
    run_blocking,
)

if TYPE_CHECKING:
    from pi_core import LsOperations

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List the entries of one directory in alphabetical order (ignoring case), hidden ones included; "
    "directories end in '/'. At most limit entries (default "
    f"{DEFAULT_LIMIT}) and {DEFAULT_MAX_BYTES // 1024}KB are returned."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: the working directory)"},
        "limit": {"type": "number", "description": f"Most entries to return (default {DEFAULT_LIMIT})"},
    },
}

# Unicode collation (as in pi's localeCompare) puts spaces and punctuation before digits and letters,
# in this order.
_PUNCTUATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_RANK = {ch: i for i, ch in enumerate(_PUNCTUATION)}


def sort_key(name: str) -> tuple[tuple[tuple[int, Any], ...], str]:
    """Case-insensitive order close to pi's (Unicode collation): punctuation, digits, letters."""
    key = []
    for ch in name.lower():
        if ch in _RANK:
            key.append((0, _RANK[ch]))
        elif ch.isdigit():
            key.append((1, ch))
        elif ch.isalpha():
            key.append((2, ch))
        else:
            key.append((3, ch))
    return tuple(key), name


def _list(path: Path, limit: int) -> tuple[list[str], bool]:
    try:
        names = os.listdir(path)
    except PermissionError as e:
        raise ToolError(f"Cannot read directory {path}: permission denied") from e
    except OSError as e:
        raise ToolError(f"Cannot read directory {path}: {e.strerror}") from e
    out: list[str] = []
    for name in sorted(names, key=sort_key):
        if len(out) >= limit:
            return out, True
        try:
            suffix = "/" if (path / name).is_dir() else ""
            (path / name).stat()
        except OSError:
            continue  # a broken link or an entry that vanished
        out.append(name + suffix)
    return out, False


async def _list_through(operations: LsOperations, path: Path, limit: int) -> tuple[list[str], bool]:
    if not await operations.exists(path):
        raise ToolError(f"Path not found: {path}")
    if not await operations.is_dir(path):
        raise ToolError(f"Not a directory: {path}")
    try:
        names = await operations.readdir(path)
    except OSError as e:
        raise ToolError(f"Cannot read directory {path}: {e.strerror or e}") from e
    out: list[str] = []
    for name in sorted(names, key=sort_key):
        if len(out) >= limit:
            return out, True
        try:
            suffix = "/" if await operations.is_dir(path / name) else ""
        except OSError:
            continue  # an entry that cannot be looked at (a broken link, one that vanished)
        out.append(name + suffix)
    return out, False


def _executor(operations: LsOperations | None) -> Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(params.get("path") or ".")
        limit = count_argument(params.get("limit"), DEFAULT_LIMIT, 1)
        if operations is not None:
            entries, limited = await _list_through(operations, path, limit)
        elif not path.exists():
            raise ToolError(f"Path not found: {path}")
        elif not path.is_dir():
            raise ToolError(f"Not a directory: {path}")
        else:
            entries, limited = await run_blocking(_list, path, limit, signal=ctx.signal, name="ls")
        if not entries:
            return ToolResult.text("(empty directory)")
        notices: list[str] = []
        details: dict[str, Any] = {}
        if limited:
            notices.append(f"Stopped at {limit} entries; pass limit={limit * 2} for more")
            details["entryLimitReached"] = limit
        return capped_listing("\n".join(entries), notices, details)

    return execute


def create_ls_tool(*, operations: LsOperations | None = None, name: str = "ls") -> Tool:
    """The built-in ``ls`` tool, listing through ``operations`` (default: this machine's files). Register it
    with ``register(tool, replaces="ls")`` to take the built-in's place."""
    from pi_core import is_local

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=_executor(None if is_local(operations) else operations),
        capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
        prompt_snippet="List a directory's entries",
    )


def make_ls_tool() -> Tool:
    """A fresh ``ls`` tool."""
    return create_ls_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_ls_tool())
