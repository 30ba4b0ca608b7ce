"""The ``find`` tool: find files (and directories) by glob, honouring ignore files."""

from __future__ import annotations

import os
import re
from typing import Any

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

DEFAULT_LIMIT = 1000

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


def compile_find_pattern(pattern: str, root: str) -> re.Pattern[str]:
    """The matcher for a find pattern: relative paths, smart case, ``**`` across directories."""
    from pi_core import glob_to_regex

    if pattern.startswith(root.rstrip("/") + "/"):
        pattern = pattern[len(root.rstrip("/")) + 1:]
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or "**"
    anchored = "/" in pattern
    body = glob_to_regex(pattern.lstrip("/"))
    flags = re.IGNORECASE if pattern == pattern.lower() else 0
    return re.compile(body if anchored else "(?:.*/)?" + body, flags | re.DOTALL)


def candidates(files: list[str]) -> list[tuple[str, bool]]:
    """Files plus the directories that hold them, in path order."""
    from pi_core import path_key

    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    entries = [(f, False) for f in files] + [(d, True) for d in dirs]
    return sorted(entries, key=lambda e: path_key(e[0]))


async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    from pi_core import SearchError, list_files

    root = ctx.resolve(params.get("path") or ".")
    limit = count_argument(params.get("limit"), DEFAULT_LIMIT, 1)
    if not root.exists():
        raise ToolError(f"Path not found: {root}")
    if not root.is_dir():
        raise ToolError(f"Not a directory: {root}")
    regex = compile_find_pattern(str(params["pattern"]), os.path.realpath(root))
    try:
        files = await list_files(root, signal=ctx.signal)
    except SearchError as e:
        raise ToolError(str(e)) from e
    found = [rel + ("/" if is_dir else "") for rel, is_dir in candidates(files) if regex.fullmatch(rel)]
    if not found:
        return ToolResult.text("No files found matching pattern")
    notices: list[str] = []
    details: dict[str, Any] = {}
    if len(found) > limit:
        notices.append(f"Stopped at {limit} results; pass limit={limit * 2} for more, or narrow the pattern")
        details["resultLimitReached"] = limit
    return capped_listing("\n".join(found[:limit]), notices, details)


def make_find_tool() -> Tool:
    """A fresh ``find`` tool."""
    return Tool(
        name="find",
        label="find",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute,
        capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
        prompt_snippet="Find files by glob pattern (skips .gitignore'd files)",
    )


@hookimpl
def register_tools(register: Any) -> None:
    register(make_find_tool())
