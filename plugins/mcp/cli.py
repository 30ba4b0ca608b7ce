"""``pi mcp add|list|remove``: change and check ``mcp.json`` from a shell, without a session.

The files are pi's, so a server added here works in the TypeScript pi too and the other way round.
``pi mcp list`` connects to every enabled server and exits 1 when an entry is invalid or an enabled
server did not connect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_core import agent_dir, is_project_trusted

from .config import LoadedConfig, add_server, global_path, load_config, project_path, remove_server, validate_server

USAGE = """Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Options for add and remove:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --oauth-client-id <id>  OAuth client registered with the server (${VAR} allowed)
  --oauth-client-secret <secret>
                          Its secret (${VAR} or !command allowed)
  --oauth-callback-port <port>
                          Port of the sign-in redirect http://127.0.0.1:<port>/callback
  --oauth-client-name <name>
                          Name to register the client under (instead of "pi")
  --oauth-client-registration <mode>
                          auto (default), cimd (pi's client ID metadata document), or dcr (register)
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Limit of the whole sign-in (default 300)

login signs in to an OAuth server (HTTP servers without an Authorization header): it prints the
authorization URL (and opens it with $BROWSER), then waits for the browser's redirect to
http://127.0.0.1:<port>/callback; when the browser runs elsewhere, paste the redirected URL.
Credentials are stored in ~/.pi/agent/mcp-auth.json; logout deletes them."""
HINT = 'Use "pi mcp --help" for usage.'
OAUTH_OPTIONS = {"client-id": "clientId", "client-secret": "clientSecret", "callback-port": "callbackPort",
                 "client-name": "clientName", "client-registration": "clientRegistration"}
Out = Callable[[str], None]


def _out(line: str) -> None:
    print(line)


def _err(line: str) -> None:
    print(line, file=sys.stderr)


def run(args: list[str], cwd: Path, agents: Path | None = None, out: Out = _out, err: Out = _err) -> int:
    """``pi mcp <args>``; returns the exit code."""
    agents = agents or agent_dir()
    if not args or args[0] in ("help", "--help", "-h") or "--help" in args:
        out(USAGE)
        return 0
    command, rest = args[0], args[1:]
    if command == "add":
        return _add(rest, cwd, agents, out, err)
    if command == "remove":
        return _remove(rest, cwd, agents, out, err)
    if command in ("login", "logout"):
        return _auth(command, rest, cwd, agents, out, err)
    if command == "list":
        parsed = _parse(rest, {"json": "flag"}, err)
        if parsed is None:
            return 1
        if parsed[0]:
            err(f"Usage: pi mcp list [--json]\n{HINT}")
            return 1
        trusted = is_project_trusted(cwd, agents) is True
        loaded = load_config(agents, cwd, project_trusted=trusted)
        note = (f"{project_path(cwd)} is ignored because the project is not trusted. Start pi in the project "
                "to trust it." if not trusted and project_path(cwd).exists() else None)
        return asyncio.run(_list(loaded, "json" in parsed[1], note, cwd, agents, out))
    err(f'Unknown mcp command "{command}".\n{HINT}')
    return 1


def _parse(args: list[str], known: dict[str, str], err: Out, max_positional: int | None = None
           ) -> tuple[list[str], dict[str, Any]] | None:
    """``--name value`` options; ``--`` (or reaching ``max_positional`` words) ends them, so a
    server command's own options pass through."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    index = 0
    while index < len(args):
        arg = {"-l": "--local"}.get(args[index], args[index])
        if arg == "--" or (max_positional is not None and len(positional) >= max_positional):
            positional += args[index + 1 if arg == "--" else index:]
            break
        if not arg.startswith("--"):
            positional.append(arg)
            index += 1
            continue
        name = arg[2:]
        kind = known.get(name)
        if kind is None:
            err(f"Unknown option {args[index]}.\n{HINT}")
            return None
        if kind == "flag":
            values[name] = True
            index += 1
            continue
        if index + 1 >= len(args):
            err(f"{arg} needs a value.")
            return None
        value = args[index + 1]
        if kind == "list":
            values.setdefault(name, []).append(value)
        else:
            values[name] = value
        index += 2
    return positional, values


def _pairs(option: str, pairs: list[str], err: Out) -> dict[str, str] | None:
    record: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            err(f'--{option} expects KEY=VALUE, got "{pair}".')
            return None
        record[key] = value
    return record


def _add(args: list[str], cwd: Path, agents: Path, out: Out, err: Out) -> int:
    parsed = _parse(args, {"local": "flag", "url": "value", "env": "list", "cwd": "value", "header": "list",
                           "bearer-token-env-var": "value", "exposure": "value", "description": "value",
                           **{f"oauth-{o}": "value" for o in OAUTH_OPTIONS}}, err, 2)
    if parsed is None:
        return 1
    positional, values = parsed
    name, command = (positional[0], positional[1:]) if positional else ("", [])
    url = values.get("url")
    if not name or (url is None) == (not command):
        err(f"Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HINT}")
        return 1
    wrong = (("header", "bearer-token-env-var", *(f"oauth-{o}" for o in OAUTH_OPTIONS)) if url is None
             else ("env", "cwd"))
    misplaced = next((o for o in wrong if o in values), None)
    if misplaced:
        err(f"--{misplaced} only applies to {'HTTP servers (--url)' if url is None else 'stdio servers'}.")
        return 1
    config: dict[str, Any]
    if url is not None:
        headers = _pairs("header", values.get("header", []), err)
        if headers is None:
            return 1
        if "bearer-token-env-var" in values:
            headers["Authorization"] = f"Bearer ${{{values['bearer-token-env-var']}}}"
        oauth: dict[str, Any] = {}
        for option, key in OAUTH_OPTIONS.items():
            if f"oauth-{option}" in values:
                value = values[f"oauth-{option}"]
                if key == "callbackPort":
                    if not value.isdigit() or not 0 < int(value) < 65536:
                        err(f"--oauth-callback-port expects a port number, got \"{value}\".")
                        return 1
                    value = int(value)
                oauth[key] = value
        config = {"url": url, **({"headers": headers} if headers else {}), **({"oauth": oauth} if oauth else {})}
    else:
        env = _pairs("env", values.get("env", []), err)
        if env is None:
            return 1
        config = {"command": command[0], **({"args": command[1:]} if command[1:] else {}),
                  **({"env": env} if env else {}), **({"cwd": values["cwd"]} if "cwd" in values else {})}
    for key in ("exposure", "description"):
        if key in values:
            config[key] = values[key]
    validated = validate_server(name, config)
    if isinstance(validated, str):
        err(validated)
        return 1
    local = "local" in values
    path = project_path(cwd) if local else global_path(agents)
    scope = "project" if local else "global"
    try:
        replaced = add_server(path, name, validated)
    except (OSError, ValueError) as exc:
        err(f"Could not update {path}: {exc}")
        return 1
    out(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    if local and is_project_trusted(cwd, agents) is not True:
        out(f"The project is not trusted, so {path} is ignored until you start pi in the project and trust it.")
    out("Check it with: pi mcp list")
    return 0


def _remove(args: list[str], cwd: Path, agents: Path, out: Out, err: Out) -> int:
    parsed = _parse(args, {"local": "flag"}, err)
    if parsed is None:
        return 1
    positional, values = parsed
    if len(positional) != 1:
        err(f"Usage: pi mcp remove <server> [-l]\n{HINT}")
        return 1
    name, local = positional[0], "local" in values
    path = project_path(cwd) if local else global_path(agents)
    scope = "project" if local else "global"
    try:
        removed = remove_server(path, name)
    except (OSError, ValueError) as exc:
        err(f"Could not update {path}: {exc}")
        return 1
    if removed:
        out(f'Removed {scope} MCP server "{name}" from {path}.')
        return 0
    other = next((s for s in load_config(agents, cwd, project_trusted=True).servers
                  if s.name == name and s.scope != scope), None)
    hint = f" It is defined in {other.source}{'; use --local' if other.scope == 'project' else '; omit --local'}." \
        if other else ""
    err(f'No {scope} MCP server named "{name}" in {path}.{hint}')
    return 1


async def _list(loaded: LoadedConfig, as_json: bool, note: str | None, cwd: Path, agents: Path, out: Out) -> int:
    from .log import ServerLog

    connection_module: Any = None
    if any(s.enabled for s in loaded.servers):
        from . import connection as connection_module
    log = ServerLog(agents / "mcp.log")

    async def report(entry: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"name": entry.name, "scope": entry.scope, "source": entry.source,
                               **({"override": entry.override} if entry.override else {}),
                               "enabled": entry.enabled, "exposure": entry.exposure,
                               "transport": entry.transport(), "state": "disabled", "tools": []}
        if not entry.enabled:
            return row
        conn = connection_module.Connection(entry, cwd, log, on_change=lambda c: None, on_tools=lambda c: None,
                                            auth_dir=agents)
        try:
            await conn.client()
        except Exception:  # noqa: BLE001 - the state says why
            pass
        row["state"], row["tools"] = conn.state, [t.name for t in conn.tools]
        overrides = {t: entry.tool_exposure(t) for t in row["tools"] if entry.tool_exposure(t) != entry.exposure}
        if overrides:
            row["toolExposure"] = overrides
        if conn.has_resources:
            row["resources"] = True
        if conn.state != "connected" and conn.error:
            row["error"] = conn.error
        await conn.close()
        return row

    rows = await asyncio.gather(*(report(entry) for entry in loaded.servers))
    failed = bool(loaded.errors) or any(r["enabled"] and r["state"] != "connected" for r in rows)
    if as_json:
        out(json.dumps({"servers": rows, "errors": loaded.errors, **({"note": note} if note else {})}, indent=2))
        return 1 if failed else 0
    if not rows and not loaded.errors:
        out(f"No MCP servers configured. Add them to {global_path(agents)} or .pi/mcp.json.")
    for row in rows:
        count = len(row["tools"])
        state = f"connected, {count} tool{'' if count == 1 else 's'}" if row["state"] == "connected" else \
            "needs sign-in" if row["state"] == "needs-auth" else row["state"]
        out(f"{row['name']}: {state} ({row['exposure']}, {row['scope']})")
        out(f"  {row['transport']}")
        if row.get("override"):
            out(f"  project override: {row['override']}")
        if row["state"] == "needs-auth":
            out(f"  sign in with: pi mcp login {row['name']}")
        if row["tools"]:
            marked = [f"{t} [{row['toolExposure'][t]}]" if t in row.get("toolExposure", {}) else t for t in row["tools"]]
            out(f"  tools: {', '.join(marked)}")
        if row.get("resources"):
            out("  offers resources")
        if row.get("error"):
            out("  " + row["error"].replace("\n", "\n  "))
    for error in loaded.errors:
        out(f"config error: {error}")
    if note:
        out(note)
    return 1 if failed else 0


def _auth(command: str, args: list[str], cwd: Path, agents: Path, out: Out, err: Out) -> int:
    """``pi mcp login|logout <server> [-l]``."""
    parsed = _parse(args, {"local": "flag", **({"timeout": "value"} if command == "login" else {})}, err)
    if parsed is None:
        return 1
    positional, values = parsed
    if len(positional) != 1:
        extra = " [--timeout <seconds>]" if command == "login" else ""
        err(f"Usage: pi mcp {command} <server> [-l]{extra}\n{HINT}")
        return 1
    name, local = positional[0], "local" in values
    timeout = 300.0
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])
        except ValueError:
            timeout = -1
        if not timeout > 0:
            err(f'--timeout expects a positive number of seconds, got "{values["timeout"]}".')
            return 1
    trusted = is_project_trusted(cwd, agents) is True
    loaded = load_config(agents, cwd, project_trusted=trusted or local)
    entry = next((s for s in loaded.servers if s.name == name and (not local or s.scope == "project"
                                                                   or s.override)), None)
    if entry is None:
        where = project_path(cwd) if local else "mcp.json"
        err(f'No MCP server named "{name}" in {where}.')
        return 1
    if not entry.is_http:
        err(f'MCP server "{name}" is a stdio server: OAuth sign-in applies only to HTTP servers.')
        return 1
    from .auth_store import AuthStore

    store = AuthStore(agents)
    if command == "logout":
        try:
            removed = store.remove(name, entry.config["url"])
        except (OSError, ValueError) as exc:
            err(f"Could not update {store.path}: {exc}")
            return 1
        out(f'Signed out of MCP server "{name}".' if removed else f'No stored credentials for MCP server "{name}".')
        return 0
    if any(k.lower() == "authorization" for k in entry.config.get("headers") or {}):
        err(f'MCP server "{name}" has an Authorization header: OAuth applies only to servers without one.')
        return 1
    return asyncio.run(_login(entry, store, timeout, cwd, agents, out, err))


async def _login(entry: Any, store: Any, timeout: float, cwd: Path, agents: Path, out: Out, err: Out) -> int:
    """Connect first (signed in already? does the server ask for sign-in?), sign in, connect again."""
    from .connection import Connection
    from .log import ServerLog
    from .oauth import SignInError, open_browser, sign_in

    name = entry.name
    connection = Connection(entry, cwd, ServerLog(agents / "mcp.log"), on_change=lambda c: None,
                            on_tools=lambda c: None, auth_dir=agents)
    try:
        try:
            await connection.client()
            count = len(connection.tools)
            out(f'Already signed in to MCP server "{name}" ({count} tool{"" if count == 1 else "s"}).')
            return 0
        except Exception:  # noqa: BLE001 - the state says why
            if connection.state != "needs-auth":
                err(f'MCP server "{name}" failed to connect: {connection.error or "unknown error"}')
                return 1
        await connection.close()

        async def show(url: str) -> None:
            out(f'Sign in to MCP server "{name}" in your browser:\n{url}')
            sys.stdout.flush()
            open_browser(url)

        paste = _read_line if sys.stdin is not None and sys.stdin.isatty() else None
        try:
            await sign_in(entry, store, show_url=show, paste=paste, timeout=timeout)
        except SignInError as exc:
            err(f'Sign-in to MCP server "{name}" failed: {exc}')
            return 1
        connection = Connection(entry, cwd, ServerLog(agents / "mcp.log"), on_change=lambda c: None,
                                on_tools=lambda c: None, auth_dir=agents)
        try:
            await connection.client()
        except Exception:  # noqa: BLE001
            err(f"Signed in, but {connection.error or 'the server did not connect'}")
            return 1
        count = len(connection.tools)
        out(f'Signed in to MCP server "{name}" ({count} tool{"" if count == 1 else "s"}).')
        return 0
    finally:
        await connection.close()


async def _read_line() -> str | None:
    """The pasted redirect URL, read in a daemon thread (it may never come: the browser's redirect wins)."""
    import threading

    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            sys.stderr.write("If the browser cannot reach this machine, paste the URL it was redirected to: ")
            sys.stderr.flush()
            line: str | None = sys.stdin.readline()
        except (OSError, ValueError):
            line = None

        def settle() -> None:
            if not future.done():
                future.set_result(line)

        with contextlib.suppress(RuntimeError):  # the sign-in ended and its loop closed meanwhile
            loop.call_soon_threadsafe(settle)

    threading.Thread(target=read, daemon=True, name="pi-mcp-paste").start()
    return await future
