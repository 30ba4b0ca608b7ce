"""``tool_search``: find deferred tools (MCP tools with ``deferred`` or ``codemode`` exposure) and
declare the matches for the next model request.

Registered inactive, like pi's: turn it on with ``--tools +tool_search``, ``defaultTools``, or let the MCP
plugin activate it for a server with ``deferred`` exposure. Loading activates the tools; the runtime then
records the change before the next request as pi does (a system message with ``toolsAdded``), so a resumed
session or a branch the tree returns to declares them again, once they are registered (an MCP server may
still be connecting). ``tool_search`` custom entries written by earlier versions are still read.
"""

from __future__ import annotations

import weakref
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolError, ToolResult, hookimpl

NAME = "tool_search"
ENTRY_TYPE = "tool_search"
"""Custom entries of earlier versions (``{"loaded": [names]}``); read, no longer written."""
DESCRIPTION = (
    "Search tools that are not declared to you yet (such as the tools of MCP servers) by what they do, "
    "and make the best matches available from your next call on. Use it whenever a task needs a tool "
    "you do not have; describe the capability in a few words."
)
PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the tool should do, in a few words."},
        "limit": {"type": "integer", "description": "How many tools to load at most (default 8)."},
    },
    "required": ["query"],
}

_pending: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""Per session: loaded tool names recorded on the branch but not registered yet."""


def searchable(tool: Any, active: set[str]) -> bool:
    return getattr(tool, "exposure", "direct") == "deferred" and tool.name not in active


async def _execute(params: dict[str, Any], tool_ctx: Any) -> ToolResult:
    from .ranking import DEFAULT_LIMIT, rank, tool_document

    query = str(params.get("query", "")).strip()
    limit = params.get("limit", DEFAULT_LIMIT)
    if not query:
        raise ToolError("query must not be empty")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        raise ToolError("limit must be a positive integer")
    ctx = tool_ctx.session
    if ctx is None:
        raise ToolError("tool_search needs a session")
    active = ctx.get_active_tools()
    candidates = [t for t in ctx.get_all_tools() if searchable(t, set(active))]
    matches = rank(query, [tool_document(t) for t in candidates], limit)
    names = [name for name, _ in matches]
    if not names:
        return ToolResult.text("No matching tools found.", details={"loaded": []})
    ctx.set_active_tools([*active, *names])  # recorded as toolsAdded before the next request
    by_name = {t.name: t for t in candidates}
    lines = [f"- {n}: {(by_name[n].description or '').strip().splitlines()[0] if by_name[n].description else ''}"
             for n in names]
    noun = "tool" if len(names) == 1 else "tools"
    return ToolResult.text(f"Loaded {len(names)} {noun}. They are available from your next call:\n" + "\n".join(lines),
                           details={"loaded": names})


def tool_search_tool() -> Tool:
    return Tool(name=NAME, label=NAME, description=DESCRIPTION, parameters=PARAMETERS, execute=_execute,
                exposure="model-only", reaches_tools=lambda arguments: "all",
                capabilities=ToolCapabilities(reads=True),
                prompt_snippet="Search for tools that are not loaded yet and load the matches")


@hookimpl
def register_tools(register: Any) -> None:
    register(tool_search_tool())


def _loaded_on_branch(ctx: Any) -> list[str]:
    """Deferred tools the current branch declared last (its transcript's ``toolsAdded``), and those
    earlier versions recorded as ``tool_search`` entries, oldest first. Names not registered yet count
    (their server may still be connecting)."""
    names: list[str] = []
    try:
        entries = ctx.session.get_custom_entries(ENTRY_TYPE)  # only these are read, not the whole branch
    except Exception:  # noqa: BLE001 - no session view: nothing recorded
        entries = []
    for entry in entries:
        data = entry.get("data")
        if isinstance(data, dict):
            names += [n for n in data.get("loaded") or [] if isinstance(n, str)]
    registered = {t.name: t for t in ctx.get_all_tools()}
    names += [n for n in ctx.get_declared_tools()
              if getattr(registered.get(n), "exposure", "deferred") == "deferred"]
    return list(dict.fromkeys(names))


def _restore(ctx: Any) -> None:
    loaded = _loaded_on_branch(ctx)
    # a tool loaded on the branch left behind (a /tree move, a resume of another session) is not declared
    stale = [n for n in ctx.get_active_tools() if n not in loaded and _is_deferred(ctx, n)]
    if stale:
        ctx.set_active_tools([n for n in ctx.get_active_tools() if n not in stale])
    if not loaded:
        _pending.pop(ctx, None)
        return
    _pending[ctx] = set(loaded)
    _activate_pending(ctx)


def _is_deferred(ctx: Any, name: str) -> bool:
    return any(t.name == name and getattr(t, "exposure", "direct") == "deferred" for t in ctx.get_all_tools())


def _activate_pending(ctx: Any) -> None:
    pending = _pending.get(ctx)
    if not pending:
        return
    registered = {t.name for t in ctx.get_all_tools() if getattr(t, "exposure", "direct") == "deferred"}
    ready = [n for n in pending if n in registered]
    if ready:
        active = ctx.get_active_tools()
        ctx.set_active_tools([*active, *(n for n in ready if n not in active)])
        pending.difference_update(ready)


# ``async def``: a plain ``def`` hook runs in a worker thread, and these change the session's active tools.
@hookimpl
async def session_start(event: Any, ctx: Any) -> None:
    if ctx is not None:
        _restore(ctx)


@hookimpl
async def session_tree(event: Any, ctx: Any) -> None:
    if ctx is not None:
        _restore(ctx)


@hookimpl
async def turn_start(event: Any, ctx: Any) -> None:
    """Before each request: declare recorded tools that were registered since (a server connected).

    (``turn_start``, not ``context``: a ``context`` handler makes every request copy the conversation.)
    """
    if ctx is not None and _pending.get(ctx):
        _activate_pending(ctx)
