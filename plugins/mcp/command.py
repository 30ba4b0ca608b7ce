"""``/mcp``: the servers' state, and reconnect, enable/disable and exposure from the terminal.

With a UI, ``/mcp`` opens a menu (``ctx.ui.select``): the servers, then what to do with one. The same
actions are words, for modes without dialogs and for scripts::

    /mcp                          the menu (or, without a UI, the status)
    /mcp status
    /mcp tools <server>
    /mcp reconnect <server>
    /mcp enable|disable <server> [--project]
    /mcp exposure <server> <codemode|deferred|direct|hidden>
    /mcp login <server>           OAuth sign-in (browser, or the pasted redirect URL)
    /mcp logout <server>          delete the server's stored OAuth credentials

Changes are saved to the ``mcp.json`` that defines the server (a project override stays in the
project's file; ``--project`` / "in this project" writes an override there); a plugin's server
changes for this session only.
"""

from __future__ import annotations

from typing import Any

from .config import EXPOSURES

EXPOSURE_TEXT = {
    "codemode": "not declared; codemode scripts call the tools",
    "deferred": "not declared until tool_search loads them",
    "direct": "declared to the model like built-in tools",
    "hidden": "unreachable",
}
USAGE = ("Usage: /mcp [status | tools <server> | reconnect <server> | enable <server> [--project] | "
         "disable <server> [--project] | exposure <server> <codemode|deferred|direct|hidden> | "
         "login <server> | logout <server>]")


async def run(args: str, ctx: Any, manager: Any) -> None:
    words = args.split()
    if not words:
        if ctx.has_ui:
            await _menu(ctx, manager)
        else:
            await _status(ctx, manager)
        return
    action, rest = words[0], words[1:]
    if action == "status" and not rest:
        await _status(ctx, manager)
        return
    server = manager.find(rest[0]) if rest else None
    if action not in ("tools", "reconnect", "enable", "disable", "exposure", "login", "logout") or not rest:
        await ctx.ui.notify(USAGE, "warning")
        return
    if server is None:
        await ctx.ui.notify(f'No MCP server "{rest[0]}". Servers: {", ".join(s.name for s in manager.servers) or "none"}',
                            "warning")
        return
    if action == "tools" and len(rest) == 1:
        await ctx.ui.notify(_tools_text(manager, server), "info")
    elif action in ("login", "logout") and len(rest) == 1:
        ok, message = await (manager.sign_in(server, ctx) if action == "login" else manager.sign_out(server))
        await ctx.ui.notify(message, "info" if ok else "error")
    elif action == "reconnect" and len(rest) == 1:
        await _report(ctx, server, await manager.reconnect(server), "reconnected")
    elif action in ("enable", "disable") and rest[1:] in ([], ["--project"]):
        in_project = rest[1:] == ["--project"]
        if in_project and manager.project_config is None:
            await ctx.ui.notify("This project is not trusted: it has no mcp.json of its own.", "warning")
            return
        failed = await manager.set_enabled(server, action == "enable", in_project)
        await _report(ctx, server, failed, f"{action}d" + (" in this project" if in_project else ""))
    elif action == "exposure" and len(rest) == 2 and rest[1] in EXPOSURES:
        await _report(ctx, server, manager.set_exposure(server, rest[1]), f"exposure {rest[1]}")
    else:
        await ctx.ui.notify(USAGE, "warning")


async def _status(ctx: Any, manager: Any) -> None:
    await manager.wait_for(manager.servers)
    await ctx.ui.notify("\n".join(manager.status_lines()), "info")


async def _report(ctx: Any, server: Any, failed: str | None, done: str) -> None:
    if failed:
        await ctx.ui.notify(f"{server.name}: {failed}", "error")
    else:
        await ctx.ui.notify(f"{server.name}: {done} · {server.describe()}", "info")


def _where(manager: Any, server: Any) -> str:
    target = manager.save_target(server)
    return "for this session (a plugin's server)" if target is None else f"saved to {target[0]}"


def _tools_text(manager: Any, server: Any) -> str:
    connection = server.connection
    if connection is None or connection.state != "connected":
        return f"{server.name}: {server.describe()}"
    lines = [f"Tools of {server.name} (exposure {server.entry.exposure}: {EXPOSURE_TEXT[server.entry.exposure]}):"]
    for tool in connection.tools:
        exposure = server.entry.tool_exposure(tool.name)
        summary = (tool.description or "").strip().splitlines()[0] if tool.description else ""
        marker = "" if exposure == server.entry.exposure else f"[{exposure}] "
        lines.append(f"  {tool.name}: {marker}{summary}".rstrip(": "))
    return "\n".join(lines)


def _server_label(server: Any) -> str:
    scope = "project override" if server.entry.override else server.entry.scope
    return f"{server.name} — {server.describe()} · {server.entry.exposure} · {scope}"


async def _menu(ctx: Any, manager: Any) -> None:
    """Servers, then one server's actions, until the user closes the menu."""
    while True:
        servers = sorted(manager.servers, key=lambda s: (s.state() not in ("failed", "needs-auth"), s.name))
        if not servers:
            await ctx.ui.notify("No MCP servers configured.", "info")
            return
        labels = {_server_label(s): s for s in servers}
        title = "MCP servers" + ("\n" + "\n".join(f"config error: {e}" for e in manager.errors) if manager.errors else "")
        choice = await ctx.ui.select(title, list(labels))
        if choice is None or choice not in labels:
            return
        await _server_menu(ctx, manager, labels[choice])


async def _server_menu(ctx: Any, manager: Any, server: Any) -> None:
    while True:
        where = _where(manager, server)
        in_project = server.entry.scope == "global" and not server.entry.override and manager.project_config is not None
        actions: dict[str, Any] = {}
        if not server.entry.enabled:
            actions[f"Enable ({where})"] = lambda: manager.set_enabled(server, True)
            if in_project:
                actions["Enable in this project"] = lambda: manager.set_enabled(server, True, True)
        else:
            state = server.state()
            if state == "connected":
                actions[f"Tools ({len(server.connection.tools)})"] = None
            if state == "needs-auth":
                actions["Sign in"] = "login"
            if state in ("connected", "failed", "disconnected", "needs-auth"):
                actions["Reconnect"] = lambda: manager.reconnect(server)
            if manager.has_credentials(server):
                actions["Sign out"] = "logout"
            actions[f"Exposure: {server.entry.exposure}"] = "exposure"
            actions[f"Disable ({where})"] = lambda: manager.set_enabled(server, False)
            if in_project:
                actions["Disable in this project"] = lambda: manager.set_enabled(server, False, True)
        error = f"\n{server.connection.error}" if server.connection is not None and server.connection.error \
            and server.state() != "connected" else ""
        title = f"MCP server {server.name}: {server.describe()}\n{server.entry.transport()}{error}"
        choice = await ctx.ui.select(title, list(actions))
        if choice is None or choice not in actions:
            return
        action = actions[choice]
        if action is None:
            await ctx.ui.notify(_tools_text(manager, server), "info")
        elif action in ("login", "logout"):
            ok, message = await (manager.sign_in(server, ctx) if action == "login" else manager.sign_out(server))
            await ctx.ui.notify(message, "info" if ok else "error")
        elif action == "exposure":
            options = {f"{'✓ ' if e == server.entry.exposure else '  '}{e} — {EXPOSURE_TEXT[e]}": e for e in EXPOSURES}
            picked = await ctx.ui.select(f"Exposure of {server.name} ({where})", list(options))
            if picked in options and options[picked] != server.entry.exposure:
                await _report(ctx, server, manager.set_exposure(server, options[picked]), f"exposure {options[picked]}")
        else:
            await _report(ctx, server, await action(), choice.split(" (")[0].lower())
