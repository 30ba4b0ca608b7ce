"""``codemode``: the model writes JavaScript that calls other tools; only the script's output comes back.

pi's tool and script contract (``docs/codemode.md``), so prompts and skills written for pi work:
the script runs as an async function body in a V8 isolate (mini-racer, the ``codemode`` extra) with
no file system, network or timers; it reaches tools as ``tools.<name>(args)``, every call going
through the session's tool pipeline (``ToolContext.execute_tool``), so policies apply to them.

Registered inactive: turn it on with ``--tools +codemode``, ``defaultTools``, or let the MCP plugin
activate it for servers with ``codemode`` exposure. ``codemode.mode`` (``on``, ``only``) and
``codemode.inlineBudget`` in settings decide how other tools are presented. Nothing of the sandbox is
imported until a script runs.
"""

from __future__ import annotations

import re
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolResult, hookimpl

NAME = "codemode"
PARAMETERS = {"type": "object", "properties": {"code": {"type": "string", "description": "JavaScript source."}},
              "required": ["code"]}
_DISCOVERY = re.compile(r"\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b")


def script_reach(arguments: dict[str, Any]) -> Any:
    """The tools a script may call: all of them when it looks tools up, else the words of its source
    (``tools.mcp__docs__search`` and ``tools["mcp__docs__" + name]`` both name ``mcp__docs``)."""
    code = arguments.get("code")
    if not isinstance(code, str):
        return []
    return "all" if _DISCOVERY.search(code) else re.findall(r"\w+", code)


class _Options:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def guidelines(self) -> dict[str, list[str]]:
        if self.ctx is None:
            return {}
        return {t.name: list(t.prompt_guidelines or []) for t in self.ctx.get_all_tools()}


async def _execute(params: dict[str, Any], tool_ctx: Any) -> ToolResult:
    import importlib.util

    from pi_core import ToolError

    if importlib.util.find_spec("py_mini_racer") is None:  # the engine is an extra
        raise ToolError("codemode needs the JavaScript sandbox: pip install 'pi-core-agent[codemode]' "
                        "(py_mini_racer is missing)")
    from .execute import execute

    return await execute(params, tool_ctx, _Options(tool_ctx.session))


def codemode_tool() -> Tool:
    from .description import codemode_description

    return Tool(name=NAME, label=NAME, description=codemode_description([], {}), parameters=PARAMETERS,
                execute=_execute, exposure="model-only", reaches_tools=script_reach, default_active=False,
                capabilities=ToolCapabilities(executes=True),
                prompt_snippet="Run JavaScript that calls other tools",
                prompt_guidelines=["Use codemode to run independent tool calls together (Promise.allSettled), to "
                                   "chain calls, or to filter large results, rather than making many separate calls."])


@hookimpl
def register_tools(register: Any) -> None:
    register(codemode_tool())


def _setting(ctx: Any, key: str) -> Any:
    return ctx.get_settings().get(key)


def presentation(ctx: Any) -> tuple[str, int | None]:
    """``codemode.mode`` (``on`` unless ``only``) and ``codemode.inlineBudget`` (estimated tokens)."""
    from .description import DEFAULT_INLINE_BUDGET

    mode = "only" if _setting(ctx, "codemode.mode") == "only" else "on"
    budget = _setting(ctx, "codemode.inlineBudget")
    valid = isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget >= 0
    return mode, int(budget) if valid else DEFAULT_INLINE_BUDGET


@hookimpl
def context_with_system(event: Any, ctx: Any) -> None:
    """Before each request with codemode declared: its description lists the callable tools of the
    loadout; with ``on`` declared tools say how scripts call them, with ``only`` they are not declared
    (scripts call them)."""
    if ctx is None or not any(d.name == NAME for d in event.tools or ()):
        return
    from .description import codemode_description, script_call_note

    registered = {t.name: t for t in ctx.get_all_tools()}
    if getattr(registered.get(NAME), "execute", None) is not _execute:
        return  # a plugin took the name over (register(..., replaces="codemode")): its tool, its description
    mode, budget = presentation(ctx)
    active = set(ctx.get_active_tools())
    callable_tools = [t for t in registered.values() if t.name != NAME and (
        t.exposure == "deferred" or (t.exposure == "direct" and t.name in active))]
    declared_direct = {t.name for t in callable_tools if t.exposure == "direct"}
    listed = callable_tools if mode == "only" else [t for t in callable_tools if t.exposure != "direct"]
    guidelines = {t.name: list(t.prompt_guidelines or []) for t in listed}
    kept = []
    for declaration in event.tools:
        if declaration.name == NAME:
            declaration.description = codemode_description(listed, guidelines, budget)
        elif declaration.name in declared_direct:
            if mode == "only":
                continue
            declaration.description = declaration.description + script_call_note(registered[declaration.name])
        kept.append(declaration)
    event.tools = kept
