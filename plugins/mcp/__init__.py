"""MCP servers as pi tools: ``mcp.json`` in pi's format, ``pi mcp``, ``/mcp`` and ``--no-mcp``.

Servers from ``~/.pi/agent/mcp.json`` and a trusted project's ``.pi/mcp.json`` connect in the background
when a session starts (in print and JSON mode only once a request or call needs them); their tools
become ``mcp__<server>__<tool>``. Nothing of the MCP SDK is imported
unless a server is enabled (this module imports only the standard library and ``pi_core``).
Disable the plugin like any other: ``PI_DISABLE_PLUGINS=mcp``, or ``--no-mcp`` for one run.
"""

from __future__ import annotations

import weakref
from typing import Any

from pi_core import CliCommand, Command, Flag, hookimpl

_managers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
SECTION = "mcp_servers"
MAX_SECTION_CHARS = 4096
MAX_DESCRIPTION_CHARS = 250
LAZY_MODES = ("print", "json")


def _key(ctx: Any) -> Any:
    # the hook context and a command's context are different objects of one session; its event bus is shared
    return getattr(ctx, "events", None)


def manager_for(ctx: Any) -> Any:
    """The session's :class:`plugins.mcp.manager.McpManager`, or ``None`` (no servers, ``--no-mcp``)."""
    key = _key(ctx)
    return _managers.get(key) if key is not None else None


@hookimpl
def register_flags(register: Any) -> None:
    register(Flag("no-mcp", bool, False, "Disable MCP for this run: no servers connect, no MCP tools, no /mcp."))


@hookimpl
def register_cli_commands(register: Any) -> None:
    import typer

    def mcp(ctx: typer.Context) -> None:
        from pathlib import Path

        from .cli import run

        raise typer.Exit(run(list(ctx.args), Path.cwd()))

    mcp.__annotations__ = {"ctx": typer.Context, "return": None}  # typer reads them; this module defers them
    register(CliCommand("mcp", mcp, "Add, remove and check MCP servers (pi mcp --help).",
                        extra={"context_settings": {"allow_extra_args": True, "ignore_unknown_options": True},
                               "add_help_option": False}))


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("mcp", _mcp_command, "MCP servers: status, reconnect, enable, disable, exposure, login, logout"))


# Hooks that start servers, futures or timers are ``async def``: a plain ``def`` hook runs in a worker thread,
# and asyncio's loop may only be touched from its own thread.
@hookimpl
async def session_start(event: Any, ctx: Any) -> None:
    if ctx is None or ctx.get_flag("no-mcp") or manager_for(ctx) is not None:
        return
    from pathlib import Path

    project_file = Path(ctx.cwd) / ".pi" / "mcp.json"
    registered = ctx.get_mcp_servers()
    if not registered and not (session_agent_dir(ctx) / "mcp.json").exists() and not project_file.exists():
        return  # the common case costs two stat calls
    _start(ctx, registered)


def session_agent_dir(ctx: Any) -> Any:
    """The session's agent dir (an SDK session may have its own), where ``mcp.json`` and ``mcp.log`` are."""
    from pi_core import agent_dir

    settings_file = ctx.get_settings().global_path
    return settings_file.parent if settings_file is not None else agent_dir()


def _start(ctx: Any, registered: list[Any]) -> Any:
    from .config import load_config

    agents = session_agent_dir(ctx)
    loaded = load_config(agents, ctx.cwd, project_trusted=bool(ctx.is_project_trusted()), registered=registered)
    if not loaded.servers and not loaded.errors:
        return None
    from .manager import McpManager

    manager = McpManager(ctx, loaded.servers, errors=loaded.errors,
                         auto_enable_codemode=loaded.auto_enable_codemode is not False,
                         project_config=loaded.project_config, log_path=agents / "mcp.log")
    _managers[_key(ctx)] = manager
    # print and JSON mode run one prompt: a server starts only when the first request declares its tools
    # (direct ones) or a call needs it, so servers behind codemode/tool_search cost nothing unless used
    manager.start(lazy=getattr(ctx, "mode", None) in LAZY_MODES)
    return manager


@hookimpl
async def mcp_servers_change(event: Any, ctx: Any) -> None:
    """A plugin registered or unregistered a server: connect the new ones, close the removed ones."""
    if ctx is None or ctx.get_flag("no-mcp"):
        return
    manager = manager_for(ctx)
    if manager is None:
        if event.servers:
            _start(ctx, event.servers)
        return
    await manager.set_registered(event.servers)


@hookimpl
async def before_agent_start(event: Any, ctx: Any) -> None:
    manager = manager_for(ctx)
    if manager is None and ctx is not None and not ctx.get_flag("no-mcp") and ctx.get_mcp_servers():
        # registered in a session_start handler that ran after ours; its change event may still be queued
        manager = _start(ctx, ctx.get_mcp_servers())
    if manager is None:
        return
    registered = ctx.get_mcp_servers() if ctx is not None and not manager.waited_for_startup else []
    if {r.name for r in registered} - {s.name for s in manager.servers}:
        # a change event from a session_start handler may still be queued: take the current list now, so the
        # first request waits for those servers too (applying the same list again later changes nothing)
        await manager.set_registered(registered)
    await manager.retry_signed_in()
    await manager.wait_for_direct()
    _present_servers(event, ctx, servers_section(manager))


def _present_servers(event: Any, ctx: Any, section: str | None) -> None:
    """The ``mcp_servers`` section stays as the branch's first prompt had it, so the system prompt (and
    with it the provider's cache of the conversation) does not change when servers connect, are added or
    change; the model is told a changed section in a message after the prompt, as pi appends it."""
    frozen, told = _told_on_branch(ctx, section)
    options = getattr(event, "system_prompt_options", None)
    if options is not None:
        if frozen:
            options.sections[SECTION] = frozen
        else:
            options.sections.pop(SECTION, None)
    elif frozen:  # a host without prompt options: the text itself
        event.system_prompt = f"{event.system_prompt}\n\n<{SECTION}>\n{frozen}\n</{SECTION}>"
    if section != told:
        from pi_core import CustomMessage

        text = (f"The MCP servers changed. This replaces the <{SECTION}> section of the system prompt:\n"
                f"<{SECTION}>\n{section}\n</{SECTION}>" if section else
                f"The MCP servers changed: no server's tools are reached through codemode or tool_search any "
                f"more. Disregard the <{SECTION}> section of the system prompt.")
        event.messages.append(CustomMessage(custom_type=SECTION, content=text, display=False,
                                            details={"section": section}))


def _told_on_branch(ctx: Any, section: str | None) -> tuple[str | None, str | None]:
    """The section in this branch's system prompt (fixed by its first prompt, recorded then) and the one
    the model knows now: the last change message still in its context, else the prompt's."""
    view = getattr(ctx, "session", None) if ctx is not None else None
    if view is None:
        return section, section
    recorded = view.get_custom_entries(SECTION)
    if not recorded:
        ctx.append_entry(SECTION, {"section": section})
        return section, section
    data = recorded[-1].get("data")
    frozen = data.get("section") if isinstance(data, dict) and isinstance(data.get("section"), str) else None
    for message in reversed(view.build_session_context().raw_messages):
        if message.get("role") == "custom" and message.get("customType") == SECTION:
            details = message.get("details")
            return frozen, details.get("section") if isinstance(details, dict) else None
    return frozen, frozen


@hookimpl
async def after_provider_response(event: Any, ctx: Any) -> None:
    """The first request is out: the servers it did not need may start now (see ``McpManager.start``)."""
    manager = manager_for(ctx)
    if manager is not None:
        manager.begin_rest()


@hookimpl
async def before_tool_call(event: Any, ctx: Any) -> None:
    """Before a call, wait for the servers it needs: an MCP tool's own server; for a tool that reaches
    other tools (codemode, tool_search), the servers its arguments name, or all of them."""
    manager = manager_for(ctx)
    tool = getattr(event, "tool", None)
    if manager is None or tool is None:
        return
    if tool.reaches_tools is not None:
        await manager.wait_for(manager.reached(tool.reaches_tools(event.arguments)))
    elif tool.name in RESOURCE_TOOLS:
        server = event.arguments.get("server")
        await manager.wait_for([manager.find(server)] if isinstance(server, str) and manager.find(server) else
                               manager.servers)
    elif tool.name in manager.owners:
        await manager.wait_for([manager.find(manager.owners[tool.name].split("\0", 1)[0])])


@hookimpl
async def session_shutdown(event: Any, ctx: Any) -> None:
    manager = manager_for(ctx)
    if manager is not None:
        del _managers[_key(ctx)]
        await manager.close()


async def _mcp_command(args: str, ctx: Any) -> None:
    manager = manager_for(ctx)
    if manager is None:
        await ctx.ui.notify("No MCP servers configured (or MCP is off for this run)." if not ctx.get_flag("no-mcp")
                            else "MCP is off for this run (--no-mcp).", "info")
        return
    from .command import run

    manager.begin(manager.servers)  # a lazy session's servers, so /mcp shows them connecting
    await run(args, ctx, manager)


def servers_section(manager: Any) -> str | None:
    """The ``mcp_servers`` section: enabled servers whose tools are not declared to the model, how their
    tools are reached, and one line on each (the configured description, else the server's instructions)."""
    from .config import namespace
    from .naming import server_summary

    listed = sorted((s for s in manager.servers if s.entry.enabled and s.entry.exposures() & {"codemode", "deferred"}),
                    key=lambda s: s.name)
    if not listed:
        return None
    reaches = ["codemode" if "codemode" in s.entry.exposures() else "tool_search" for s in listed]
    intro = "MCP servers whose tools are not declared to you."
    if "codemode" in reaches:
        intro += " Call the tools of `codemode` servers from codemode scripts."
    if "tool_search" in reaches:
        intro += " Load the tools of `tool_search` servers with `tool_search`."
    heads = [f"- {namespace(s.name)} ({reach})" for s, reach in zip(listed, reaches)]

    def omitted(count: int) -> list[str]:
        return [f"- … {count} more server{'' if count == 1 else 's'}; find their tools with searchTools()"] if count else []

    def size(kept: int) -> int:
        return len("\n".join([intro, *heads[:kept], *omitted(len(listed) - kept)]))

    kept = len(listed)
    while kept > 0 and size(kept) > MAX_SECTION_CHARS:
        kept -= 1
    per_server = min(MAX_DESCRIPTION_CHARS, (MAX_SECTION_CHARS - size(kept)) // kept - 2) if kept else 0
    lines = []
    for server, head in zip(listed[:kept], heads):
        instructions = server.connection.instructions if server.connection is not None else None
        summary = server_summary(server.entry.config.get("description"), instructions) if per_server > 0 else ""
        if len(summary) > per_server:
            summary = summary[:per_server - 1].rstrip() + "…"
        lines.append(f"{head}: {summary}" if summary else head)
    return "\n".join([intro, *lines, *omitted(len(listed) - kept)])
