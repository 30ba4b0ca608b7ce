"""One MCP server connection, on the official MCP SDK (``mcp``): stdio or streamable HTTP.

This module imports the SDK, so it is imported only once a server is configured (see
:mod:`plugins.mcp.manager`). The SDK's transports and session are async context managers that must be
entered and left in one task, so each connection runs in a task of its own; calls are made from any
task. The connection notices a server that went away (its output ended), reports it as disconnected
and connects again on the next call.

HTTP servers are retried as pi retries them: connecting (``initialize`` and ``tools/list``) twice more
after 0.25 s and 1 s when it failed on the network or with HTTP 408, 429 or 5xx (not 501); a resource
request once after 0.25 s on such a status; a tool call never, since the server may have run it. An
error status ends the SDK's whole transport, so the next request connects again. A request the server
answers with 404 for its session (it restarted and forgot it) did not run: it is sent once more on a
new session, a tool call too, as pi does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED

from pi_core import __version__, scrubbed_env

from .config import ConfigValueError, ServerEntry, expand_home, resolve_map
from .log import ServerLog, StderrTail

T = TypeVar("T")
GUARD = Path(__file__).with_name("_guard.py")
OnChange = Callable[["Connection"], None]
CONNECT_RETRY_DELAYS = (0.25, 1.0)
"""Seconds before each further attempt to connect to an HTTP server that failed transiently (pi's)."""


class ServerCallError(Exception):
    """A call failed for a reason of the server or the connection (not an MCP error result)."""


class TransientHttpError(ServerCallError):
    """The server answered a request with an HTTP status worth another attempt (408, 429, 5xx but 501)."""


class SessionExpired(ServerCallError):
    """The server answered 404 for the MCP session (it restarted): it did not run the request."""


SESSION_TERMINATED = 32600
"""The code of the error the SDK's HTTP transport gives a request that got 404 for its session."""


class Connection:
    """A server's connection state, tools and calls. ``state`` is ``connecting``, ``connected``,
    ``failed``, ``disconnected``, ``needs-auth`` or ``closed``."""

    def __init__(self, entry: ServerEntry, cwd: Path, log: ServerLog, *, on_change: OnChange,
                 on_tools: OnChange, auth_dir: Path | None = None) -> None:
        self.entry = entry
        self.auth_dir = auth_dir
        """Where ``mcp-auth.json`` is (the agent dir)."""
        self._auth: Any = None
        self.cwd = Path(cwd)
        self.log = log
        self.on_change = on_change
        self.on_tools = on_tools
        self.state = "connecting"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.instructions: str | None = None
        self.has_resources = False
        self._session: ClientSession | None = None
        self._opening: asyncio.Future[ClientSession] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._gone = asyncio.Event()
        """Set when the current connection ended; calls still waiting then fail at once."""
        self._closed = False
        self._stderr = StderrTail()
        self._stderr_readers: set[Any] = set()
        self._stderr_done = asyncio.Event()
        self._ended_by: BaseException | None = None
        """What ended the current connection (an HTTP error status ends the SDK's whole transport)."""

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def timeout(self) -> float:
        return self.entry.timeout

    # -- connecting ----------------------------------------------------------------------------

    async def client(self) -> ClientSession:
        """The connected session; connects (once, for every caller) when there is none."""
        if self._closed:
            raise ServerCallError(f'MCP server "{self.name}" is shut down')
        if self._session is not None:
            return self._session
        if self._opening is None:
            self._gone = asyncio.Event()
            loop = asyncio.get_running_loop()
            self._opening = loop.create_future()
            self._stop = asyncio.Event()
            self._runner = asyncio.create_task(self._serve(self._opening, self._stop), name=f"mcp:{self.name}")
        return await asyncio.shield(self._opening)

    async def _serve(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        self._set_state("connecting")
        self._ended_by = None
        delays = list(CONNECT_RETRY_DELAYS) if self.entry.is_http else []
        try:
            while True:
                try:
                    await self._serve_once(ready, stop)
                    return
                except BaseException as exc:  # noqa: BLE001 - every failure is the connection's state
                    if ready.done() or not delays or self._closed or not _transient(exc) or self.needs_sign_in():
                        self._ended_by = exc
                        self._failed(ready, exc)
                        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                            raise
                        return
                    delay = delays.pop(0)
                    self.log.write(self.name, "warning", f"connecting failed ({_describe(exc, self.timeout)}); "
                                                         f"trying again in {delay:g} s")
                try:
                    await asyncio.sleep(delay)
                except asyncio.CancelledError as exc:  # closed while waiting to try again
                    self._failed(ready, exc)
                    return
        finally:
            self._session = None
            self._gone.set()
            if self._opening is ready:
                self._opening = None
            if self.state == "connected":
                sign_in = None if self._closed else self.needs_sign_in()
                if sign_in:
                    self._set_state("needs-auth", sign_in)
                else:
                    ended = _describe(self._ended_by, self.timeout) if _http_status(self._ended_by) else \
                        "Connection closed"
                    self._set_state("closed" if self._closed else "disconnected",
                                    None if self._closed else _with_tail(ended, self._stderr.text()))

    async def _serve_once(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        """One attempt: connect, list the tools, then hold the connection until ``stop`` or its end."""
        self._stderr.clear()
        async with contextlib.AsyncExitStack() as stack:
            read, write = await self._transport(stack)
            tasks = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tasks.cancel_scope.cancel)
            read = self._watch(read, tasks, stop)
            session = await stack.enter_async_context(ClientSession(
                read, write, logging_callback=self._on_log, message_handler=self._on_message,
                list_roots_callback=self._roots, client_info=types.Implementation(name="pi", version=__version__)))
            with anyio.fail_after(self.timeout):
                init = await session.initialize()
                tools = await _all_tools(session) if init.capabilities.tools is not None else []
            self.tools = tools
            self.instructions = (init.instructions or "").strip() or None
            self.has_resources = init.capabilities.resources is not None
            self._session = session
            self.error = None
            self._set_state("connected")
            self.on_tools(self)
            ready.set_result(session)
            await stop.wait()

    def needs_sign_in(self) -> str | None:
        """Why the server needs OAuth sign-in, when its last request found that out."""
        reason = self._auth.needs_sign_in if self._auth is not None else None
        if reason is None:
            return None
        from .oauth import SIGN_IN_HINT

        return f"needs sign-in ({reason}): {SIGN_IN_HINT.format(name=self.name)}"

    def _failed(self, ready: asyncio.Future[ClientSession], exc: BaseException) -> None:
        if ready.done():
            return
        sign_in = self.needs_sign_in()
        message = sign_in or _describe(exc, self.timeout)
        if not self._closed:  # the log is where a user looks when a server's tools are missing
            self.log.write(self.name, "error", f"failed to connect: {message}")
        if sign_in and not self._closed:
            self._set_state("needs-auth", sign_in)
            ready.set_exception(ServerCallError(f'MCP server "{self.name}" {sign_in}'))
            return
        self._set_state("closed" if self._closed else "failed", _with_tail(message, self._stderr.text()))
        ready.set_exception(ServerCallError(f'MCP server "{self.name}" failed to connect: {self.error}'))

    async def _transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.entry.config
        where = f'MCP server "{self.name}"'
        try:
            if self.entry.is_http:
                headers = resolve_map(config.get("headers"), f"{where} header")
            else:
                env = resolve_map(config.get("env"), f"{where} env")
        except ConfigValueError as exc:
            raise ServerCallError(str(exc)) from exc
        if self.entry.is_http:
            from .oauth import oauth_applies

            self._auth = None
            if oauth_applies(self.entry):
                from pi_core import agent_dir

                from .auth_store import AuthStore
                from .oauth import connection_auth

                self._auth = connection_auth(self.entry, AuthStore(self.auth_dir or agent_dir()))
            http = await stack.enter_async_context(httpx.AsyncClient(
                headers=headers, auth=self._auth, follow_redirects=True,
                timeout=httpx.Timeout(self.timeout, read=300)))
            read, write, _ = await stack.enter_async_context(streamable_http_client(config["url"], http_client=http))
            return read, write
        command = [expand_home(config["command"]), *(expand_home(a) for a in config.get("args", []))]
        if os.name == "posix":
            command = [sys.executable, "-I", "-S", str(GUARD), *command]
        params = StdioServerParameters(command=command[0], args=command[1:], env=scrubbed_env(env),
                                       cwd=str((self.cwd / expand_home(config.get("cwd", "."))).resolve()))
        errlog = await self._stderr_pipe(stack)
        with errlog:
            streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        return streams

    async def _stderr_pipe(self, stack: contextlib.AsyncExitStack) -> Any:
        """The write end for the server's stderr; lines read from the other end go to mcp.log."""
        read_fd, write_fd = os.pipe()
        loop = asyncio.get_running_loop()
        reader = _StderrReader(self)
        self._stderr_done = reader.done
        transport, _ = await loop.connect_read_pipe(lambda: reader, os.fdopen(read_fd, "rb", buffering=0))
        # Read until the end of the pipe (the server's last words explain a crash); close() ends it.
        self._stderr_readers.add(transport)
        return os.fdopen(write_fd, "w")

    def _watch(self, read: Any, tasks: Any, stop: asyncio.Event) -> Any:
        """Forward the server's messages to the session; when they end, the server is gone."""
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def pump() -> None:
            async with send:
                async for message in read:
                    await send.send(message)
            stop.set()

        tasks.start_soon(pump)
        return receive

    # -- calls ---------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        on_progress: Callable[[float, float | None, str | None], None] | None = None
                        ) -> types.CallToolResult:
        """Call a tool. The time limit is the server's ``timeout``; progress notifications renew it."""
        deadline = [0.0]

        async def progress(value: float, total: float | None, message: str | None) -> None:
            deadline[0] = time.monotonic() + self.timeout
            if on_progress is not None:
                on_progress(value, total, message)

        def start(session: ClientSession) -> Awaitable[types.CallToolResult]:
            return session.call_tool(name, arguments, progress_callback=progress)

        return await self._run(start, f"tool {name}", deadline, retry_transient=False)

    async def request(self, run: Callable[[ClientSession], Awaitable[T]], what: str) -> T:
        """Any other request (resources, which only read), within the server's time limit; tried once more
        after an HTTP status worth it."""
        return await self._run(run, what, [0.0], retry_transient=True)

    async def _run(self, start: Callable[[ClientSession], Awaitable[T]], what: str, deadline: list[float], *,
                   retry_transient: bool) -> T:
        """One request, tried once more on a new session when the server no longer knew the session (it
        did not run the request, so a tool call too, as pi does) and, if ``retry_transient``, after an HTTP
        status worth another attempt."""
        for attempt in range(2):
            session = await self.client()
            deadline[0] = time.monotonic() + self.timeout
            try:
                return await self._bounded(asyncio.ensure_future(start(session)), what, deadline)
            except SessionExpired:
                if attempt:
                    raise
                await self._renew(session)
            except TransientHttpError:
                if attempt or not retry_transient:
                    raise
                await asyncio.sleep(CONNECT_RETRY_DELAYS[0])
        raise AssertionError("unreachable")

    async def _renew(self, session: ClientSession) -> None:
        """Drop a connection whose session the server forgot (it restarted); the next request opens a new
        one. Of several calls that found out together, the first does it."""
        if self._session is session:
            self.log.write(self.name, "warning", "the server no longer knows the session; connecting again")
            await self._shutdown()

    async def _bounded(self, call: asyncio.Future[T], what: str, deadline: list[float]) -> T:
        gone = asyncio.ensure_future(self._gone.wait())
        try:
            while True:
                remaining = deadline[0] - time.monotonic()
                done, _ = await asyncio.wait({call, gone}, timeout=max(remaining, 0),
                                             return_when=asyncio.FIRST_COMPLETED)
                if call in done:
                    return call.result()
                if gone in done:
                    call.cancel()
                    sign_in = self.needs_sign_in()
                    if sign_in:
                        raise ServerCallError(f'MCP server "{self.name}" {sign_in}')
                    raise await self._lost(what)
                if time.monotonic() >= deadline[0]:
                    call.cancel()
                    raise ServerCallError(f'MCP server "{self.name}" did not answer {what} within '
                                          f"{self.timeout:g} s")
        except asyncio.CancelledError:
            call.cancel()
            raise
        except McpError as exc:
            sign_in = self.needs_sign_in()
            if sign_in:
                raise ServerCallError(f'MCP server "{self.name}" {sign_in}') from exc
            if exc.error.code == CONNECTION_CLOSED:
                raise await self._lost(what) from exc
            if exc.error.code == SESSION_TERMINATED and exc.error.message == "Session terminated":
                raise SessionExpired(f'MCP server "{self.name}" no longer knows the session') from exc
            raise ServerCallError(f'MCP server "{self.name}": {exc.error.message}') from exc
        finally:
            gone.cancel()

    async def _lost(self, what: str) -> ServerCallError:
        """Why a request failed together with its connection: an HTTP error status, or the server left."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._gone.wait(), 0.5)  # the transport's own error comes as it ends
        status = _http_status(self._ended_by)
        if status is not None:
            kind = TransientHttpError if _transient(self._ended_by) else ServerCallError
            return kind(f'MCP server "{self.name}" answered HTTP {status} during {what}')
        await self._last_words()
        return ServerCallError(f'MCP server "{self.name}" closed the connection during {what}'
                               f"{_tail_suffix(self._stderr.text())}")

    async def _last_words(self) -> None:
        """Give a server that went away a moment to finish its stderr (it explains the crash)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stderr_done.wait(), 0.5)

    async def refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            tools = await _all_tools(session)
        except Exception as exc:  # noqa: BLE001 - a failed refresh keeps the old list
            self.error = f"Failed to refresh tools: {_describe(exc, self.timeout)}"
            self.on_change(self)
            return
        if self._session is session:
            self.tools = tools
            self.on_tools(self)

    async def reconnect(self) -> None:
        await self._shutdown()
        self._closed = False
        await self.client()

    async def close(self) -> None:
        """Stop the server (stdin closed, then its process group signalled) and wait until it is gone."""
        self._closed = True
        await self._shutdown()
        for reader in self._stderr_readers:
            reader.close()
        self._stderr_readers.clear()
        self._set_state("closed")

    async def _shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        runner = self._runner
        if runner is not None and not runner.done():
            if self._session is None:  # still connecting: waiting would sit out the server's whole time limit
                runner.cancel()
            with contextlib.suppress(BaseException):
                await runner

    # -- callbacks -----------------------------------------------------------------------------

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log.write(self.name, params.level, params.data, params.logger)

    async def _on_message(self, message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, types.ToolListChangedNotification):
            asyncio.get_running_loop().create_task(self.refresh_tools())

    async def _roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=self.cwd.resolve().as_uri(), name=self.cwd.name)])  # type: ignore[arg-type]

    def stderr_line(self, line: str) -> None:
        self._stderr.add(line)
        self.log.write(self.name, "stderr", line)

    def _set_state(self, state: str, error: str | None = None) -> None:
        self.state = state
        if error is not None or state in ("connected", "connecting"):
            self.error = error
        self.on_change(self)


class _StderrReader(asyncio.Protocol):
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.buffer = b""
        self.done = asyncio.Event()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.done.set()
        self.connection._stderr_readers.discard(self.transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            self.connection.stderr_line(line.decode("utf-8", "replace") + "\n")

    def eof_received(self) -> bool | None:
        if self.buffer:
            self.connection.stderr_line(self.buffer.decode("utf-8", "replace") + "\n")
            self.buffer = b""
        return None


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever must not hang the connection
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return tools


def _root(exc: BaseException | None) -> BaseException | None:
    """The first error inside (nested) exception groups that is not a cancellation."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if not inner:
            break
        exc = inner[0]
    return exc


def _http_status(exc: BaseException | None) -> int | None:
    root = _root(exc)
    return root.response.status_code if isinstance(root, httpx.HTTPStatusError) else None


def _transient(exc: BaseException | None) -> bool:
    """A network failure, or an overloaded or restarting server: worth another attempt (pi's rule)."""
    status = _http_status(exc)
    if status is not None:
        return status in (408, 429) or (status >= 500 and status != 501)
    root = _root(exc)
    return isinstance(root, httpx.TransportError) and not isinstance(root, httpx.TimeoutException)


def _describe(exc: BaseException | None, timeout: float) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return _describe(inner[0], timeout)
    if isinstance(exc, TimeoutError):
        return f"no answer to initialize within {timeout:g} s"
    if isinstance(exc, McpError):
        return exc.error.message
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, asyncio.CancelledError):
        return "connection cancelled"
    return str(exc) or type(exc).__name__


def _with_tail(message: str, tail: str) -> str:
    return f"{message}\n{tail}" if tail else message


def _tail_suffix(tail: str) -> str:
    return f"\n{tail}" if tail else ""


__all__ = ["Connection", "ServerCallError", "TransientHttpError"]
