"""The ``grep`` tool: search file contents, honouring ignore files, with ripgrep when available.

:func:`create_grep_tool` makes one that searches through other ``operations`` (a remote machine), with the
same arguments, limits and messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_core import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    Tool,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    capped_listing,
    count_argument,
    hookimpl,
    truncate_line,
)

if TYPE_CHECKING:
    from pi_core import GrepOperations, GrepResult

DEFAULT_LIMIT = 100

DESCRIPTION = (
    "Search the contents of files for a regular expression (or, with literal, a plain string). Each "
    "hit comes back as path:line: text, with paths relative to the searched directory. Files excluded "
    "by .gitignore (and .ignore) are skipped; hidden files are searched. At most limit matches (default "
    f"{DEFAULT_LIMIT}) and {DEFAULT_MAX_BYTES // 1024}KB are returned; lines longer than "
    f"{GREP_MAX_LINE_LENGTH} characters are shortened."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression to look for (a plain string with literal)"},
        "path": {"type": "string", "description": "Directory or single file to search (default: the working "
                 "directory)"},
        "glob": {"type": "string", "description": "Only search files matching this glob, relative to path, such "
                 "as 'src/**/*.ts'; a glob without '/' such as '*.ts' matches file names at any depth"},
        "ignoreCase": {"type": "boolean", "description": "Match regardless of letter case (default false)"},
        "literal": {"type": "boolean", "description": "Treat pattern as plain text, not a regex (default false)"},
        "context": {"type": "number", "description": "Lines of context to show before and after each match "
                    "(default 0)"},
        "limit": {"type": "number", "description": f"Most matches to return (default {DEFAULT_LIMIT})"},
    },
}


def format_lines(result: Any) -> tuple[str, bool]:
    out, cut_any = [], False
    for line in result.lines:
        text, cut = truncate_line(line.text)
        cut_any = cut_any or cut
        sep = ":" if line.is_match else "-"
        out.append(f"{line.path}{sep}{line.line}{sep} {text}")
    return "\n".join(out), cut_any


Search = Callable[..., Awaitable["GrepResult"]]
""":func:`pi_core.grep`'s signature: ``(target, pattern, *, ignore_case, literal, context, glob, limit, signal)``."""


def _executor(search: Search) -> Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core import SearchError

        pattern = params["pattern"]
        target = ctx.resolve(params.get("path") or ".")
        limit = count_argument(params.get("limit"), DEFAULT_LIMIT, 1)
        glob = params.get("glob") or None
        if glob:
            glob = glob[1:] if glob.startswith("!") and glob[1:].startswith("./") else glob
            while glob.startswith("./"):
                glob = glob[2:]
        try:
            result = await search(target, pattern, ignore_case=bool(params.get("ignoreCase")),
                                  literal=bool(params.get("literal")),
                                  context=count_argument(params.get("context"), 0, 0), glob=glob, limit=limit,
                                  signal=ctx.signal)
        except FileNotFoundError as e:
            raise ToolError(f"Path not found: {target}") from e
        except SearchError as e:
            raise ToolError(str(e)) from e
        return _answer(result, limit)

    return execute


def _answer(result: GrepResult, limit: int) -> ToolResult:
    if result.matches == 0:
        return ToolResult.text("No matches found")
    raw, lines_cut = format_lines(result)
    notices: list[str] = []
    details: dict[str, Any] = {}
    if result.limit_reached:
        notices.append(f"Stopped at {limit} matches; pass limit={limit * 2} for more, or narrow the pattern")
        details["matchLimitReached"] = limit
    if lines_cut:
        notices.append(f"Lines over {GREP_MAX_LINE_LENGTH} characters were shortened; read the file to see "
                       "them whole")
        details["linesTruncated"] = True
    return capped_listing(raw, notices, details)


def create_grep_tool(*, operations: GrepOperations | None = None, name: str = "grep") -> Tool:
    """The built-in ``grep`` tool, searching through ``operations`` (default: this machine, with ripgrep
    when available). Register it with ``register(tool, replaces="grep")`` to take the built-in's place."""
    from pi_core import grep

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=_executor(grep if operations is None else operations.grep),
        capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
        prompt_snippet="Search file contents by regex (skips .gitignore'd files)",
    )


def make_grep_tool() -> Tool:
    """A fresh ``grep`` tool."""
    return create_grep_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_grep_tool())
