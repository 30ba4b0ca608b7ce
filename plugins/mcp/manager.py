"""A session's MCP servers: connecting them in the background, their tools, their state.

The SDK is imported only here, lazily, in a worker thread, once a server is enabled: a session without
servers never loads it, and ``pi -p`` does not wait for it. Tools are registered as
``mcp__<server>__<tool>`` through ``ctx.register_tool``; their ``exposure`` decides whether the model sees
them (``direct``), reaches them through ``codemode``/``tool_search`` (``deferred``) or not at all.
A tool object stays registered for the session; when its server changes or withdraws it, the object is
updated in place (a withdrawn tool becomes ``hidden``), so every name keeps meaning one server tool.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolNamespace, ToolResult, agent_dir

from .config import ServerEntry, namespace
from .log import ServerLog
from .naming import RESOURCE_TOOLS, tool_name

CODEMODE, TOOL_SEARCH = "codemode", "tool_search"
STARTUP_WAIT_SECONDS = 10.0
BACKGROUND_DELAY_SECONDS = 2.0
"""Servers the first request does not need start once it is out, or this long after the session started."""
CONTENT_BLOCK_SCHEMA = {
    "type": "object",
    "properties": {"type": {"enum": ["text", "image", "audio", "resource_link", "resource"]},
                   "text": {"type": "string"}, "data": {"type": "string"}, "mimeType": {"type": "string"}},
    "required": ["type"], "additionalProperties": True,
}


def result_schema(structured: dict[str, Any] | None) -> dict[str, Any]:
    """What codemode scripts receive from an MCP tool: the whole ``CallToolResult``."""
    return {"type": "object", "properties": {
        "content": {"type": "array", "items": CONTENT_BLOCK_SCHEMA},
        "structuredContent": structured or {}, "isError": {"type": "boolean"}},
        "required": ["content"], "additionalProperties": True}


def tool_exposure(mcp_exposure: str) -> str:
    """``codemode`` and ``deferred`` MCP tools are both deferred tools: not declared to the model."""
    return "deferred" if mcp_exposure in ("codemode", "deferred") else mcp_exposure


class Server:
    """A configured server and, once started, its connection."""

    def __init__(self, entry: ServerEntry) -> None:
        self.entry = entry
        self.connection: Any = None
        self.ready: asyncio.Future[None] | None = None
        self.tools: dict[str, str] = {}
        """pi tool name -> the server's tool name, for the tools it offers now."""
        self.tried_tokens: Any = None
        """The stored OAuth tokens a connection that needed sign-in was last retried with."""

    @property
    def name(self) -> str:
        return self.entry.name

    def state(self) -> str:
        if not self.entry.enabled:
            return "disabled"
        if self.connection is None and self.ready is None:
            return "not started"
        if self.connection is None:
            return "starting"
        return str(self.connection.state)

    def describe(self) -> str:
        state = self.state()
        if state == "connected":
            count = len(self.connection.tools)
            resources = " · resources" if self.connection.has_resources else ""
            return f"connected · {count} tool{'' if count == 1 else 's'}{resources}"
        if state in ("failed", "disconnected") and self.connection.error:
            return f"{state}: {self.connection.error.splitlines()[0]}"
        return {"connecting": "connecting…", "needs-auth": "needs sign-in",
                "not started": "not started (starts when a call needs it)"}.get(state, state)


class McpManager:
    def __init__(self, ctx: Any, entries: Iterable[ServerEntry], *, errors: list[str],
                 auto_enable_codemode: bool = True, log_path: Path | None = None,
                 project_config: Path | None = None) -> None:
        self.ctx = ctx
        self.cwd = Path(ctx.cwd)
        self.servers = [Server(entry) for entry in entries]
        self.errors = errors
        self.auto_enable_codemode = auto_enable_codemode
        self.project_config = project_config
        """The trusted project's ``mcp.json`` (where per-project changes are saved), if any."""
        self.log = ServerLog(log_path or agent_dir() / "mcp.log")
        self.tools: dict[str, Tool] = {}
        self.owners: dict[str, str] = {}
        """pi tool name -> ``<server>\\0<tool>``: a name never changes owner within a session."""
        self.waited_for_startup = False
        self.warned_unreachable = False
        self.warned_engine = False
        self._closed = False
        self._module: Any = None
        self._started: list[asyncio.Task[None]] = []
        self.lazy = False
        self._reported_errors = False
        self._resources: Any = None
        self._registering = asyncio.Lock()
        self._deferred: asyncio.TimerHandle | None = None

    def find(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.name == name), None)

    # -- starting ------------------------------------------------------------------------------

    def start(self, lazy: bool = False) -> None:
        """Connect every enabled server in the background: those whose tools the first request declares
        at once, the others once that request is out (:meth:`begin_rest`) or a moment later, so that
        importing the SDK and starting servers does not slow down pi's start and first request; ``lazy``
        (print and JSON mode): none yet, each starts once a request declares its tools or a call reaches
        it (:meth:`begin`)."""
        self.lazy = lazy
        self.ensure_reachable()
        if lazy:
            return
        first = self.needed_first()
        self.begin(first)
        if any(s not in first for s in self.servers):
            self._deferred = asyncio.get_running_loop().call_later(BACKGROUND_DELAY_SECONDS, self.begin_rest)

    def begin_rest(self) -> None:
        """Start the servers :meth:`start` left for after the first request."""
        if self._deferred is None:
            return
        self._deferred.cancel()
        self._deferred = None
        self.begin(self.servers)

    def needed_first(self) -> list[Server]:
        """Servers whose tools the first request declares: ``direct`` ones, and those with tools the
        branch loaded."""
        loaded = loaded_on_branch(self.ctx)
        return [s for s in self.servers if "direct" in s.entry.exposures()
                or any(n.startswith(namespace(s.name) + "__") for n in loaded)]

    def begin(self, servers: Iterable[Server]) -> None:
        """Start connecting those of these enabled servers that have not started yet."""
        todo = [s for s in servers if s.entry.enabled and s.ready is None and s.connection is None]
        if not todo or self._closed:
            return
        for server in todo:
            server.ready = asyncio.get_running_loop().create_future()
        self._started.append(asyncio.ensure_future(self._start_all(todo)))

    async def _load(self) -> None:
        if self._module is None:
            self._module = await asyncio.to_thread(importlib.import_module, "plugins.mcp.connection")

    async def _start_all(self, servers: list[Server]) -> None:
        try:
            await asyncio.sleep(0)  # let the caller's start-up go first
            await self._load()
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            for server in servers:
                _settle(server.ready)
            await self._notify(f"MCP failed to load: {type(exc).__name__}: {exc}", "error")
            return
        await asyncio.gather(*(self._connect(server) for server in servers))
        first, self._reported_errors = not self._reported_errors, True
        await self.report_problems(None if first else servers)

    async def _connect(self, server: Server) -> None:
        if self._closed:
            _settle(server.ready)
            return
        if server.connection is None:
            server.connection = self._module.Connection(server.entry, self.cwd, self.log,
                                                        on_change=lambda c: None, on_tools=self._on_tools,
                                                        auth_dir=self.log.path.parent)
        try:
            await server.connection.client()
        except Exception:  # noqa: BLE001 - the state says why
            pass
        finally:
            _settle(server.ready)

    async def wait_for(self, servers: Iterable[Server], timeout: float | None = None) -> bool:
        """Wait until these servers connected or failed (starting those not started yet); ``False`` when
        ``timeout`` ran out first."""
        servers = list(servers)
        self.begin(servers)
        pending = [s.ready for s in servers if s.entry.enabled and s.ready is not None and not s.ready.done()]
        if not pending:
            return True
        done, _ = await asyncio.wait(pending, timeout=timeout)
        return len(done) == len(pending)

    async def wait_for_direct(self) -> None:
        """The first prompt waits (up to 10 s) for servers with ``direct`` tools: its request declares them."""
        if self.waited_for_startup:
            return
        self.waited_for_startup = True
        if not await self.wait_for(self.needed_first(), STARTUP_WAIT_SECONDS):
            await self._notify("MCP servers are still connecting; their tools become available once connected.")

    def reached(self, reach: Any) -> list[Server]:
        """The servers a call that reaches ``reach`` (``"all"`` or words of its arguments) needs."""
        if reach == "all":
            return list(self.servers)
        words = [str(w) for w in reach or ()]
        if any(w in RESOURCE_TOOLS for w in words):  # the resource tools reach every server
            return list(self.servers)
        return [s for s in self.servers if any(namespace(s.name) in w for w in words)]

    # -- servers plugins register ----------------------------------------------------------------

    async def set_registered(self, registrations: list[Any]) -> None:
        """Make the plugin-registered servers these (``mcp_servers_change``)."""
        async with self._registering:  # each change carries the whole list: apply them in order
            await self._set_registered(registrations)

    async def _set_registered(self, registrations: list[Any]) -> None:
        from .config import registered_entry

        files = {s.name: s.entry for s in self.servers if s.entry.scope != "plugin"}
        wanted: dict[str, ServerEntry] = {}
        for registration in registrations:
            entry = registered_entry(registration, files)
            if isinstance(entry, str):
                await self._notify(f"MCP: {entry}", "warning")
            elif entry is not None:
                wanted[entry.name] = entry
        for server in [s for s in self.servers if s.entry.scope == "plugin"]:
            if server.name not in wanted or wanted[server.name].config != server.entry.config:
                await self.remove(server)
        known = {s.name for s in self.servers}
        added = [Server(entry) for name, entry in wanted.items() if name not in known]
        for server in added:
            await self.add(server)

    async def add(self, server: Server) -> None:
        """Start one more server in the background."""
        self.servers.append(server)
        self.ensure_reachable()
        if server.entry.enabled and not self.lazy:
            server.ready = asyncio.get_running_loop().create_future()
            asyncio.ensure_future(self._connect_later(server))

    async def _connect_later(self, server: Server) -> None:
        try:
            await self._load()
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            _settle(server.ready)
            await self._notify(f"MCP failed to load: {type(exc).__name__}: {exc}", "error")
            return
        await self._connect(server)
        await self.report_problems([server])

    async def remove(self, server: Server) -> None:
        """Stop a server and withdraw its tools."""
        if server in self.servers:
            self.servers.remove(server)
        for name in list(server.tools):
            self._hide(name)
        server.tools = {}
        _settle(server.ready)
        if server.connection is not None:
            await server.connection.close()
            server.connection = None
        self.sync_resource_tools()

    # -- changes from /mcp ------------------------------------------------------------------------

    def save_target(self, server: Server, in_project: bool = False) -> tuple[Path, bool] | None:
        """Where a change of ``enabled``/``exposure`` is saved, and whether as a project override;
        ``None`` for a plugin's server (its changes last for the session)."""
        if server.entry.scope == "plugin":
            return None
        if in_project and self.project_config is not None:
            return self.project_config, True
        if server.entry.override:
            return Path(server.entry.override), True
        return Path(server.entry.source), False

    def _save(self, server: Server, patch: dict[str, Any], in_project: bool = False) -> str | None:
        from .config import update_server

        target = self.save_target(server, in_project)
        if target is not None:
            try:
                update_server(target[0], server.name, patch, override=target[1])
            except (OSError, ValueError) as exc:
                return f"Could not save the change: {exc}"
            if target[1]:
                server.entry.override = str(target[0])
        server.entry.config.update(patch)
        return None

    async def reconnect(self, server: Server) -> str | None:
        """Connect a server again (after a fix, or to pick up new tools); returns why it failed."""
        if server.entry.enabled and server.connection is None:
            await self.wait_for([server])  # a lazy session's server that had not started yet
        if not server.entry.enabled or server.connection is None:
            return f'MCP server "{server.name}" is disabled.'
        server.ready = asyncio.get_running_loop().create_future()
        try:
            await server.connection.reconnect()
        except Exception:  # noqa: BLE001 - the state says why
            pass
        finally:
            _settle(server.ready)
        return None if server.state() == "connected" else server.describe()

    async def set_enabled(self, server: Server, enabled: bool, in_project: bool = False) -> str | None:
        failed = self._save(server, {"enabled": enabled}, in_project)
        if failed:
            return failed
        if enabled:
            server.ready = asyncio.get_running_loop().create_future()
            await self._load()
            await self._connect(server)
        else:
            for name in list(server.tools):
                self._hide(name)
            server.tools = {}
            if server.connection is not None:
                connection, server.connection = server.connection, None
                await connection.close()
        self.sync_resource_tools()
        self.ensure_reachable()
        return None

    def set_exposure(self, server: Server, exposure: str) -> str | None:
        failed = self._save(server, {"exposure": exposure})
        if failed:
            return failed
        if server.connection is not None and server.connection.state == "connected":
            self._on_tools(server.connection)  # tools keep their objects; their exposure changes in place
        indirect = {n for n in server.tools if self.tools[n].exposure != "direct"}
        active = self.ctx.get_active_tools()
        if indirect & set(active):
            self.ctx.set_active_tools([n for n in active if n not in indirect])
        self.sync_resource_tools()
        self.ensure_reachable()
        return None

    # -- OAuth sign-in ---------------------------------------------------------------------------

    def auth_store(self) -> Any:
        from .auth_store import AuthStore

        return AuthStore(self.log.path.parent)

    @staticmethod
    def uses_oauth(server: Server) -> bool:
        headers = server.entry.config.get("headers") or {}
        return server.entry.is_http and not any(k.lower() == "authorization" for k in headers)

    def has_credentials(self, server: Server) -> bool:
        if not self.uses_oauth(server):
            return False
        try:
            return self.auth_store().load(server.name, server.entry.config["url"]) is not None
        except (OSError, ValueError):
            return False

    async def sign_in(self, server: Server, ctx: Any) -> tuple[bool, str]:
        """``/mcp login``: the browser flow (the URL is shown, and opened with ``$BROWSER``), or the redirected
        URL pasted into a dialog; then the server connects again with the new credentials."""
        name = server.name
        if not server.entry.enabled:
            return False, f'MCP server "{name}" is disabled.'
        if not self.uses_oauth(server):
            return False, (f'MCP server "{name}" is a stdio server or sends an Authorization header: OAuth sign-in '
                           "applies only to HTTP servers without one.")
        await self._load()
        from pi_core import AbortController

        from .oauth import SignInError, open_browser, sign_in

        async def show(url: str) -> None:
            open_browser(url)
            await self._notify(f'Sign in to MCP server "{name}" in your browser:\n{url}')

        async def paste() -> str | None:
            controller = AbortController()
            try:
                answer = await ctx.ui.input("If the browser cannot reach this machine, paste the URL it was "
                                            "redirected to", "http://127.0.0.1:…/callback?code=…",
                                            signal=controller.signal)
            except asyncio.CancelledError:
                controller.abort()
                raise
            return answer

        try:
            await sign_in(server.entry, self.auth_store(), show_url=show, paste=paste if ctx.has_ui else None)
        except SignInError as exc:
            return False, f'Sign-in to MCP server "{name}" failed: {exc}'
        failed = await self.reconnect(server)
        if failed:
            return False, f"Signed in, but {name}: {failed}"
        return True, f'Signed in to MCP server "{name}" · {server.describe()}'

    async def sign_out(self, server: Server) -> tuple[bool, str]:
        """``/mcp logout``: delete the stored credentials; the connection then needs sign-in again."""
        if not self.uses_oauth(server):
            return False, f'MCP server "{server.name}" does not use OAuth.'
        try:
            removed = self.auth_store().remove(server.name, server.entry.config["url"])
        except (OSError, ValueError) as exc:
            return False, f"Could not update mcp-auth.json: {exc}"
        if not removed:
            return True, f'No stored credentials for MCP server "{server.name}".'
        if server.entry.enabled and server.connection is not None:
            await self.reconnect(server)
        return True, f'Signed out of MCP server "{server.name}" · {server.describe()}'

    async def retry_signed_in(self) -> None:
        """Before a turn: a server that needed sign-in connects again once its stored tokens changed (a
        sign-in by ``pi mcp login`` or another pi), so this turn's request can declare its tools."""
        waiting = [s for s in self.servers if s.state() == "needs-auth"]
        if not waiting:
            return
        store = self.auth_store()
        todo = []
        for server in waiting:
            try:
                tokens = store.tokens(server.name, server.entry.config["url"])
            except (OSError, ValueError):
                continue
            if tokens and tokens != server.tried_tokens:
                server.tried_tokens = tokens
                todo.append(server)
        if todo:
            await asyncio.gather(*(self.reconnect(s) for s in todo))

    # -- tools ---------------------------------------------------------------------------------

    def _on_tools(self, connection: Any) -> None:
        server = self.find(connection.name)
        if server is None or self._closed:
            return
        offered = [t.name for t in connection.tools]
        plain = [tool_name(server.name, t) for t in dict.fromkeys(offered)]
        current: dict[str, str] = {}
        for mcp_tool in connection.tools:
            owner = f"{server.name}\0{mcp_tool.name}"
            name = tool_name(server.name, mcp_tool.name, lambda candidate: (
                self.owners.get(candidate, owner) != owner or candidate in current or plain.count(candidate) > 1))
            self.owners[name] = owner
            current[name] = mcp_tool.name
            self._register(server, name, mcp_tool, connection)
        for gone in set(server.tools) - set(current):
            self._hide(gone)
        server.tools = current
        self.sync_resource_tools()
        self.ensure_reachable()

    def sync_resource_tools(self) -> None:
        """``list_mcp_resources``, ``list_mcp_resource_templates``, ``read_mcp_resource`` once a server
        with resources is connected, with the widest exposure of those servers."""
        if self._resources is None:
            if not any(s.connection is not None and s.connection.has_resources for s in self.servers):
                return
            from .resources import ResourceTools

            self._resources = ResourceTools(self)
        before = {name: tool.exposure for name, tool in self._resources.tools.items()}
        for tool in self._resources.sync():
            self.ctx.register_tool(tool)
        for name, tool in self._resources.tools.items():
            if name in before and before[name] != tool.exposure:
                active = self.ctx.get_active_tools()
                if tool.exposure == "direct":
                    self._activate([name])
                elif name in active:  # no longer declared: reached from codemode, tool_search, or not at all
                    self.ctx.set_active_tools([n for n in active if n != name])

    def _register(self, server: Server, name: str, mcp_tool: Any, connection: Any) -> None:
        exposure = server.entry.tool_exposure(mcp_tool.name)
        hints = mcp_tool.annotations.model_dump(exclude_none=True) if mcp_tool.annotations else {}
        annotations = {k: v for k, v in hints.items() if k.endswith("Hint") and isinstance(v, bool)}
        read_only = annotations.get("readOnlyHint") is True
        description = (mcp_tool.description or "").strip() or mcp_tool.title or hints.get("title") or \
            f"MCP tool {mcp_tool.name} from server {server.name}"
        schema = dict(mcp_tool.inputSchema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        fields = dict(
            description=description, parameters=schema, label=f"{server.name}/{mcp_tool.name}",
            exposure=tool_exposure(exposure), namespace=ToolNamespace(
                namespace(server.name), (server.name,), (server.entry.config.get("description") or "").strip() or None,
                connection.instructions),
            output_schema=result_schema(mcp_tool.outputSchema), annotations=annotations,
            capabilities=ToolCapabilities(reads=read_only, writes=not read_only or annotations.get("destructiveHint") is True,
                                          network=annotations.get("openWorldHint") is True, concurrency_safe=read_only))
        tool = self.tools.get(name)
        if tool is not None:
            was_direct = tool.exposure == "direct"
            for key, value in fields.items():
                setattr(tool, key, value)
            if tool.exposure == "direct" and not was_direct:
                self._activate([name])
            return
        tool = Tool(name=name, execute=self._executor(server.name, name), **fields)  # type: ignore[arg-type]
        self.tools[name] = tool
        self.ctx.register_tool(tool)

    def _hide(self, name: str) -> None:
        tool = self.tools.get(name)
        if tool is None:
            return
        tool.exposure = "hidden"
        active = self.ctx.get_active_tools()
        if name in active:
            self.ctx.set_active_tools([n for n in active if n != name])

    def _activate(self, names: list[str]) -> None:
        active = self.ctx.get_active_tools()
        missing = [n for n in names if n not in active]
        if missing:
            self.ctx.set_active_tools([*active, *missing])

    def _executor(self, server_name: str, name: str) -> Any:
        async def execute(params: dict[str, Any], tool_ctx: Any) -> ToolResult:
            return await self.call(server_name, name, params, tool_ctx)

        return execute

    async def call(self, server_name: str, name: str, params: dict[str, Any], tool_ctx: Any) -> ToolResult:
        from pi_core import ToolError

        server = self.find(server_name)
        if server is None or not server.entry.enabled:
            raise ToolError(f'MCP server "{server_name}" is disabled.')
        if server.connection is None:
            await self.wait_for([server])
        if server.connection is None:
            raise ToolError(f'MCP server "{server_name}" is still starting.')
        remote = server.tools.get(name) or self.owners.get(name, "\0").split("\0", 1)[1]
        if self.tools[name].exposure == "hidden":
            raise ToolError(f'MCP tool "{server_name}/{remote}" is no longer available.')

        def progress(value: float, total: float | None, message: str | None) -> None:
            text = message or f"Progress {value:g}" + (f"/{total:g}" if total is not None else "")
            tool_ctx.update(ToolResult.text(text, details={"server": server_name, "tool": remote}))

        try:
            result = await server.connection.call_tool(remote, params, progress)
        except self._module.ServerCallError as exc:
            raise ToolError(str(exc), details={"server": server_name, "tool": remote}) from exc
        from .convert import convert_result

        return convert_result(server_name, remote, result.model_dump(mode="json", by_alias=True, exclude_none=True),
                              readable_resources=server.connection.has_resources)

    async def request(self, server: Server, run: Any, what: str) -> Any:
        """Another request to a server (resources) within its time limit; failures are tool errors."""
        from pi_core import ToolError

        if server.connection is None:
            await self.wait_for([server])
        if server.connection is None:
            raise ToolError(f'MCP server "{server.name}" is still starting.')
        try:
            return await server.connection.request(run, what)
        except self._module.ServerCallError as exc:
            raise ToolError(str(exc), details={"server": server.name}) from exc

    # -- reaching deferred tools ---------------------------------------------------------------

    def ensure_reachable(self) -> None:
        """Activate ``codemode`` for ``codemode`` servers (unless ``autoEnableCodemode`` is false) and
        ``tool_search`` for ``deferred`` ones; warn once when their tools cannot be reached at all."""
        exposures = {e for s in self.servers if s.entry.enabled for e in s.entry.exposures()}
        wants = []
        if "codemode" in exposures and self.auto_enable_codemode:
            if codemode_engine_installed():
                wants.append(CODEMODE)
            else:
                # the tools are deferred tools either way: tool_search reaches them without the engine
                wants.append(TOOL_SEARCH)
                self._note_missing_engine()
        if "deferred" in exposures:
            wants.append(TOOL_SEARCH)
        if not exposures & {"codemode", "deferred"}:
            return
        registered = {t.name: t for t in self.ctx.get_all_tools()}
        reaching = [n for n in wants if n in registered and registered[n].reaches_tools is not None]
        self._activate(reaching)
        active = self.ctx.get_active_tools()
        if any(n in active and n in registered and registered[n].reaches_tools is not None
               for n in (CODEMODE, TOOL_SEARCH)) or self.warned_unreachable:
            return
        self.warned_unreachable = True
        reason = " (autoEnableCodemode is false)" if "codemode" in exposures and not self.auto_enable_codemode else ""
        self._notify_soon("MCP tools are only reachable from the codemode or tool_search tool, but neither is "
                          f"active{reason}; they cannot be called.", "warning")

    def _note_missing_engine(self) -> None:
        if not self.warned_engine:
            self.warned_engine = True
            self._notify_soon("MCP servers with codemode exposure are reached through tool_search: codemode needs "
                              "its JavaScript engine, pip install 'pi-core-agent[codemode]'.", "info")

    # -- reporting -----------------------------------------------------------------------------

    async def report_problems(self, only: list[Server] | None = None) -> None:
        lines = [] if only else [f"config: {e}" for e in self.errors]
        for server in only or self.servers:
            if server.state() in ("failed", "needs-auth"):
                lines.append(f"{server.name}: {server.describe()}")
        if lines and not self._closed:
            body = "\n".join(f"  {line}" for line in lines)
            await self._notify(f"MCP servers need attention:\n{body}\nRun /mcp to fix.", "warning")

    async def _notify(self, message: str, level: str = "info") -> None:
        try:
            await self.ctx.ui.notify(message, level)
        except Exception:  # noqa: BLE001 - a closed UI must not break the background start
            pass

    def _notify_soon(self, message: str, level: str) -> None:
        try:
            asyncio.get_running_loop().create_task(self._notify(message, level))
        except RuntimeError:
            pass

    def status_lines(self) -> list[str]:
        lines = [f"{s.name}: {s.describe()} ({s.entry.exposure}, {s.entry.override and 'project override' or s.entry.scope})"
                 for s in sorted(self.servers, key=lambda s: s.name)]
        lines += [f"config error: {e}" for e in self.errors]
        return lines or ["No MCP servers configured."]

    # -- stopping ------------------------------------------------------------------------------

    async def close(self) -> None:
        self._closed = True
        if self._deferred is not None:
            self._deferred.cancel()
            self._deferred = None
        running = [task for task in self._started if not task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await asyncio.gather(*(s.connection.close() for s in self.servers if s.connection is not None),
                             return_exceptions=True)


def codemode_engine_installed() -> bool:
    """Whether codemode's JavaScript engine (mini-racer, the ``codemode`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("py_mini_racer") is not None


def loaded_on_branch(ctx: Any) -> list[str]:
    """Tools the branch declared last (its transcript's ``toolsAdded``, and ``tool_search`` entries of
    earlier versions): they are declared in the first request, so their servers are waited for like
    servers with ``direct`` tools."""
    try:
        entries = ctx.session.get_custom_entries("tool_search")  # only these are read, not the whole branch
    except Exception:  # noqa: BLE001 - no session view: nothing recorded
        entries = []
    try:
        declared = ctx.get_declared_tools()
    except Exception:  # noqa: BLE001 - no session yet
        declared = []
    return [n for e in entries if isinstance(e.get("data"), dict)
            for n in e["data"].get("loaded") or [] if isinstance(n, str)] + list(declared)


def _settle(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)
