"""The ``find`` tool: find files (and directories) by glob, honouring ignore files.

:func:`create_find_tool` makes one that finds through other ``operations`` (a remote machine), with the
same arguments, limits and messages.
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
)

if TYPE_CHECKING:
    from pi_core import FindOperations

DEFAULT_LIMIT = 1000
IGNORE = ["**/node_modules/**", "**/.git/**"]
"""What a custom ``glob`` is asked to leave out (pi's list; this machine's search reads the ignore files)."""

DESCRIPTION = (
    "Find files by glob pattern and list their paths relative to the searched directory (directories "
    "that match end in '/'). A pattern with a '/' such as 'src/**/*.ts' is matched against the whole "
    "relative path; one without, such as '*.ts', against names at any depth. An all-lowercase pattern "
    "ignores case. Files excluded by .gitignore (and .ignore) are skipped; hidden files are included. "
    f"At most limit results (default {DEFAULT_LIMIT}) and {DEFAULT_MAX_BYTES // 1024}KB are returned."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {"type": "string", "description": "Glob relative to the searched directory, such as "
                    "'src/**/*.ts'; without '/', such as '*.ts', it matches names at any depth"},
        "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
        "limit": {"type": "number", "description": f"Most results to return (default {DEFAULT_LIMIT})"},
    },
}


def _executor(operations: FindOperations | None) -> Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core import SearchError

        root = ctx.resolve(params.get("path") or ".")
        limit = count_argument(params.get("limit"), DEFAULT_LIMIT, 1)
        pattern = str(params["pattern"])
        try:
            if operations is None:
                found = await _find_here(root, pattern, limit, ctx)
            else:
                if not await operations.exists(root):
                    raise ToolError(f"Path not found: {root}")
                found = [_relative(p, root) for p in await operations.glob(pattern, root, ignore=IGNORE,
                                                                            limit=limit + 1, signal=ctx.signal)]
        except SearchError as e:
            raise ToolError(str(e)) from e
        return _answer(found, limit)

    return execute


async def _find_here(root: Path, pattern: str, limit: int, ctx: ToolContext) -> list[str]:
    from pi_core import LocalFileOperations

    if not root.exists():
        raise ToolError(f"Path not found: {root}")
    if not root.is_dir():
        raise ToolError(f"Not a directory: {root}")
    # one past the limit tells "exactly limit" from "more"
    return await LocalFileOperations().glob(pattern, root, limit=limit + 1, signal=ctx.signal)


def _relative(path: str, root: Path) -> str:
    """A result of a custom ``glob`` relative to the searched directory, in POSIX form, keeping a trailing ``/``."""
    directory = path.endswith("/")
    shown = os.path.relpath(path, root) if os.path.isabs(path) else path
    shown = shown.replace(os.sep, "/")
    return shown + "/" if directory and not shown.endswith("/") else shown


def _answer(found: list[str], limit: int) -> ToolResult:
    if not found:
        return ToolResult.text("No files found matching pattern")
    notices: list[str] = []
    details: dict[str, Any] = {}
    if len(found) > limit:
        notices.append(f"Stopped at {limit} results; pass limit={limit * 2} for more, or narrow the pattern")
        details["resultLimitReached"] = limit
    return capped_listing("\n".join(found[:limit]), notices, details)


def create_find_tool(*, operations: FindOperations | None = None, name: str = "find") -> Tool:
    """The built-in ``find`` tool, finding through ``operations`` (default: this machine, honouring ignore
    files). Register it with ``register(tool, replaces="find")`` to take the built-in's place."""
    from pi_core import is_local

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=_executor(None if is_local(operations) else operations),
        capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
        prompt_snippet="Find files by glob pattern (skips .gitignore'd files)",
    )


def make_find_tool() -> Tool:
    """A fresh ``find`` tool."""
    return create_find_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_find_tool())
