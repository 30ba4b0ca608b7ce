"""A client for pi's RPC protocol (pi 1.6's ``RpcClient``, in Python): it starts ``pi --mode rpc`` as a
subprocess and gives every command as an ``async`` method, events to listeners.

.. code-block:: python

    from pi_core.rpc_client import RpcClient

    async with RpcClient(cwd="~/project", provider="anthropic", model="claude-sonnet-4-5") as pi:
        pi.on_event(lambda event: print(event["type"]))
        events = await pi.prompt_and_wait("List the Python files")
        print(await pi.get_last_assistant_text())

It speaks the protocol of docs/rpc.md, so it drives the TypeScript pi too (``command=["pi"]`` with pi 1.6
on ``PATH``). Records are split on LF only, as the protocol requires. A failed command raises
:class:`RpcCommandError` with pi's message; a process that ended raises :class:`RpcProcessError` (with what
it wrote on stderr) from every command waiting for an answer and every later one.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypedDict

Event = dict[str, Any]
EventListener = Callable[[Event], "Awaitable[None] | None"]
PromptDisposition = Literal["started", "queued", "handled"]
QueueMode = Literal["all", "one-at-a-time"]
MAX_RECORD_BYTES = 64 * 1024 * 1024
"""The longest line read from pi (pi's own input limit)."""
_DEFAULT: Any = object()


class RpcSessionState(TypedDict, total=False):
    """``get_state``'s data."""

    model: dict[str, Any] | None
    thinkingLevel: str
    isStreaming: bool
    isCompacting: bool
    steeringMode: QueueMode
    followUpMode: QueueMode
    sessionFile: str
    sessionId: str
    sessionName: str
    autoCompactionEnabled: bool
    messageCount: int
    pendingMessageCount: int


class BashResult(TypedDict, total=False):
    """``bash``'s data (``exitCode`` is absent for a cancelled command)."""

    output: str
    exitCode: int
    cancelled: bool
    truncated: bool
    fullOutputPath: str


class ForkMessage(TypedDict):
    entryId: str
    text: str


class SlashCommand(TypedDict, total=False):
    """One entry of ``get_commands``."""

    name: str
    description: str
    source: Literal["extension", "prompt", "skill"]
    sourceInfo: dict[str, Any]


class RpcCommandError(RuntimeError):
    """pi answered a command with ``success: false``; the message is pi's ``error``."""

    def __init__(self, command: str, error: str) -> None:
        super().__init__(error)
        self.command = command
        self.error = error


class RpcProcessError(RuntimeError):
    """The pi process is not running (it was not started, it exited, or its stdin is closed)."""


class RpcClient:
    """``pi --mode rpc`` in a subprocess, driven through pi's RPC protocol.

    :param cwd: the working directory of pi (its project).
    :param env: variables added to this process's environment for pi.
    :param provider: ``--provider``.
    :param model: ``--model``.
    :param args: more command-line arguments (``["--no-session"]``, ``["-e", "plugin.py"]``, ...).
    :param command: how pi is started (default: this Python's ``pi_core``; ``["pi"]`` for an installed one).
    :param timeout: seconds a command may wait for its answer (``None``: no limit).
    """

    def __init__(self, *, cwd: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None,
                 provider: str | None = None, model: str | None = None, args: Sequence[str] = (),
                 command: Sequence[str] | None = None, timeout: float | None = 30.0) -> None:
        self.cwd = Path(cwd).expanduser() if cwd is not None else None
        self.env = dict(env or {})
        self.provider = provider
        self.model = model
        self.args = list(args)
        self.command = list(command) if command is not None else [sys.executable, "-m", "pi_core"]
        self.timeout = timeout
        self._process: asyncio.subprocess.Process | None = None
        self._listeners: list[EventListener] = []
        self._pending: dict[str, asyncio.Future[Event]] = {}
        self._ids = 0
        self._stderr = bytearray()
        self._readers: list[asyncio.Task[None]] = []
        self._listener_tasks: set[asyncio.Task[Any]] = set()
        self._exit_error: RpcProcessError | None = None

    # -- the process -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start pi. Raises :class:`RpcProcessError` when it exits right away (a bad option, say)."""
        if self._process is not None:
            raise RpcProcessError("the client is already started")
        argv = [*self.command, "--mode", "rpc"]
        if self.provider:
            argv += ["--provider", self.provider]
        if self.model:
            argv += ["--model", self.model]
        argv += self.args
        self._exit_error = None
        self._process = await asyncio.create_subprocess_exec(
            *argv, cwd=self.cwd, env={**os.environ, **self.env}, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=MAX_RECORD_BYTES)
        self._readers = [asyncio.ensure_future(self._read_stdout(self._process)),
                         asyncio.ensure_future(self._read_stderr(self._process))]
        await asyncio.sleep(0.1)  # as pi's client: a process that fails at once is reported here
        if self._process.returncode is not None:
            await self._wait_readers()
            error = self._exit_error or self._process_error()
            self._process = None
            raise error

    async def stop(self, grace: float = 1.0) -> None:
        """End pi (SIGTERM, SIGKILL after ``grace`` seconds) and forget it."""
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), grace)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        await self._wait_readers()
        self._fail_pending(RpcProcessError("the client was stopped"))
        self._process = None

    async def __aenter__(self) -> RpcClient:  # noqa: PYI034
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    @property
    def stderr(self) -> str:
        """What pi wrote on stderr so far."""
        return self._stderr.decode("utf-8", "replace")

    @property
    def returncode(self) -> int | None:
        """pi's exit status once it ended, else ``None``."""
        return self._process.returncode if self._process is not None else None

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener(event)`` (a function or a coroutine function) for every event, in order; returns
        a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- commands -----------------------------------------------------------------------------------

    async def prompt(self, message: str, images: Sequence[dict[str, Any]] | None = None,
                     streaming_behavior: Literal["steer", "followUp"] | None = None) -> PromptDisposition:
        """Send a prompt; returns once pi accepted it (``handled``: no run started, so no ``agent_settled``)."""
        command: dict[str, Any] = {"type": "prompt", "message": message}
        if images:
            command["images"] = list(images)
        if streaming_behavior:
            command["streamingBehavior"] = streaming_behavior
        # no time limit: a plugin's /command answers once it ran, which may wait on a dialog
        return (await self.call(command, timeout=None))["disposition"]  # type: ignore[no-any-return]

    async def steer(self, message: str, images: Sequence[dict[str, Any]] | None = None) -> None:
        await self.call({"type": "steer", "message": message, **({"images": list(images)} if images else {})})

    async def follow_up(self, message: str, images: Sequence[dict[str, Any]] | None = None) -> None:
        await self.call({"type": "follow_up", "message": message, **({"images": list(images)} if images else {})})

    async def abort(self) -> None:
        await self.call({"type": "abort"})

    async def clear_queue(self) -> dict[str, list[str]]:
        """The messages taken out of the queues: ``{steering, followUp}``."""
        return await self.call({"type": "clear_queue"})  # type: ignore[no-any-return]

    async def new_session(self, parent_session: str | None = None) -> dict[str, bool]:
        command: dict[str, Any] = {"type": "new_session"}
        if parent_session is not None:
            command["parentSession"] = parent_session
        return await self.call(command)  # type: ignore[no-any-return]

    async def get_state(self) -> RpcSessionState:
        return await self.call({"type": "get_state"})  # type: ignore[no-any-return]

    async def set_model(self, provider: str, model_id: str) -> dict[str, Any]:
        return await self.call({"type": "set_model", "provider": provider, "modelId": model_id})  # type: ignore[no-any-return]

    async def cycle_model(self) -> dict[str, Any] | None:
        return await self.call({"type": "cycle_model"})  # type: ignore[no-any-return]

    async def get_available_models(self) -> list[dict[str, Any]]:
        return (await self.call({"type": "get_available_models"}))["models"]  # type: ignore[no-any-return]

    async def set_thinking_level(self, level: str) -> None:
        await self.call({"type": "set_thinking_level", "level": level})

    async def cycle_thinking_level(self) -> dict[str, str] | None:
        return await self.call({"type": "cycle_thinking_level"})  # type: ignore[no-any-return]

    async def get_available_thinking_levels(self) -> list[str]:
        return (await self.call({"type": "get_available_thinking_levels"}))["levels"]  # type: ignore[no-any-return]

    async def set_steering_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_steering_mode", "mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_follow_up_mode", "mode": mode})

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        command: dict[str, Any] = {"type": "compact"}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        return await self.call(command, timeout=None)  # type: ignore[no-any-return]

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_compaction", "enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_retry", "enabled": enabled})

    async def abort_retry(self) -> None:
        await self.call({"type": "abort_retry"})

    async def bash(self, command: str, *, exclude_from_context: bool = False) -> BashResult:
        """Run a shell command for the user; ``bash_execution_update`` events carry its output meanwhile."""
        request: dict[str, Any] = {"type": "bash", "command": command}
        if exclude_from_context:
            request["excludeFromContext"] = True
        return await self.call(request, timeout=None)  # type: ignore[no-any-return]

    async def abort_bash(self) -> None:
        await self.call({"type": "abort_bash"})

    async def get_session_stats(self) -> dict[str, Any]:
        return await self.call({"type": "get_session_stats"})  # type: ignore[no-any-return]

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as HTML; returns the file's path."""
        command: dict[str, Any] = {"type": "export_html"}
        if output_path is not None:
            command["outputPath"] = output_path
        return (await self.call(command))["path"]  # type: ignore[no-any-return]

    async def switch_session(self, session_path: str) -> dict[str, bool]:
        return await self.call({"type": "switch_session", "sessionPath": session_path})  # type: ignore[no-any-return]

    async def fork(self, entry_id: str) -> dict[str, Any]:
        """A new session before the user message ``entry_id``: ``{text, cancelled}``."""
        return await self.call({"type": "fork", "entryId": entry_id})  # type: ignore[no-any-return]

    async def clone(self) -> dict[str, bool]:
        return await self.call({"type": "clone"})  # type: ignore[no-any-return]

    async def get_fork_messages(self) -> list[ForkMessage]:
        return (await self.call({"type": "get_fork_messages"}))["messages"]  # type: ignore[no-any-return]

    async def get_entries(self, since: str | None = None) -> dict[str, Any]:
        """``{entries, leafId}``: the session file's entries (after ``since``)."""
        command: dict[str, Any] = {"type": "get_entries"}
        if since is not None:
            command["since"] = since
        return await self.call(command)  # type: ignore[no-any-return]

    async def get_tree(self) -> dict[str, Any]:
        return await self.call({"type": "get_tree"})  # type: ignore[no-any-return]

    async def get_last_assistant_text(self) -> str | None:
        return (await self.call({"type": "get_last_assistant_text"}))["text"]  # type: ignore[no-any-return]

    async def set_session_name(self, name: str) -> None:
        await self.call({"type": "set_session_name", "name": name})

    async def get_messages(self) -> list[dict[str, Any]]:
        return (await self.call({"type": "get_messages"}))["messages"]  # type: ignore[no-any-return]

    async def get_commands(self) -> list[SlashCommand]:
        return (await self.call({"type": "get_commands"}))["commands"]  # type: ignore[no-any-return]

    async def respond_ui(self, request_id: str, *, value: str | None = None, confirmed: bool | None = None,
                         cancelled: bool = False) -> None:
        """Answer a plugin's dialog (an ``extension_ui_request`` event); pi sends no response to it."""
        answer: dict[str, Any] = {"type": "extension_ui_response", "id": request_id}
        if cancelled:
            answer["cancelled"] = True
        elif confirmed is not None:
            answer["confirmed"] = confirmed
        else:
            answer["value"] = value
        await self._write(answer)

    # -- helpers ------------------------------------------------------------------------------------

    async def wait_for_idle(self, timeout: float | None = 60.0) -> None:
        """Return at the next ``agent_settled`` event."""
        await self.collect_events(timeout)

    async def collect_events(self, timeout: float | None = 60.0) -> list[Event]:
        """The events from now up to and including the next ``agent_settled``."""
        events: list[Event] = []
        settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def collect(event: Event) -> None:
            events.append(event)
            if event.get("type") == "agent_settled" and not settled.done():
                settled.set_result(None)

        remove = self.on_event(collect)
        try:
            await self._await(settled, timeout, "agent_settled")
        finally:
            remove()
        return events

    async def prompt_and_wait(self, message: str, images: Sequence[dict[str, Any]] | None = None,
                              timeout: float | None = 60.0) -> list[Event]:
        """Send a prompt and return the events of its run, ``agent_settled`` last (none when the prompt was
        handled without a run, such as a plugin's ``/command``)."""
        events: list[Event] = []
        settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def collect(event: Event) -> None:
            events.append(event)
            if event.get("type") == "agent_settled" and not settled.done():
                settled.set_result(None)

        remove = self.on_event(collect)
        try:
            if await self.prompt(message, images) != "handled":
                await self._await(settled, timeout, "agent_settled")
        finally:
            remove()
        return events

    async def call(self, command: dict[str, Any], *, timeout: float | None = _DEFAULT) -> Any:
        """Send ``command`` (an id is added) and return its ``data`` (``None`` when it has none); raises
        :class:`RpcCommandError` when pi refuses it. ``timeout``: seconds to wait for the answer (default: the
        client's; ``None``: no limit). Every command method goes through here."""
        self._ids += 1
        request_id = f"req_{self._ids}"
        answer: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        try:
            await self._write({**command, "id": request_id})
            response = await self._await(answer, self.timeout if timeout is _DEFAULT else timeout,
                                         f"the answer to {command.get('type')}")
        finally:
            self._pending.pop(request_id, None)
        if not response.get("success"):
            raise RpcCommandError(str(response.get("command")), str(response.get("error")))
        return response.get("data")

    # -- internals ------------------------------------------------------------------------------

    async def _write(self, record: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise RpcProcessError("the client is not started")
        if self._exit_error is not None:
            raise self._exit_error
        data = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            process.stdin.write(data)
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._exit_error = self._process_error()
            raise self._exit_error from exc

    async def _await(self, future: asyncio.Future[Any], timeout: float | None, what: str) -> Any:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no {what} within {timeout} s; stderr: {self.stderr[-2000:]}") from None

    async def _read_stdout(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while True:
            try:
                line = await process.stdout.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                if end.partial.strip():
                    await self._handle(end.partial)
                break
            await self._handle(line)
        await process.wait()
        await self._stderr_done()
        self._exit_error = self._process_error()
        self._fail_pending(self._exit_error)

    async def _stderr_done(self) -> None:
        if len(self._readers) > 1:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._readers[1]), 1.0)

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(65536):
            self._stderr += chunk

    async def _handle(self, line: bytes) -> None:
        try:
            record = json.loads(line.rstrip(b"\r\n").decode("utf-8"))
        except ValueError:
            return  # pi writes nothing else; a stray line is not a record
        if not isinstance(record, dict):
            return
        if record.get("type") == "response" and record.get("id") in self._pending:
            answer = self._pending[record["id"]]
            if not answer.done():
                answer.set_result(record)
            return
        for listener in list(self._listeners):
            result = listener(record)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._listener_tasks.add(task)
                task.add_done_callback(self._listener_tasks.discard)

    def _process_error(self) -> RpcProcessError:
        code = self._process.returncode if self._process is not None else None
        return RpcProcessError(f"pi exited (status {code}); stderr: {self.stderr[-2000:]}")

    def _fail_pending(self, error: Exception) -> None:
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(error)

    async def _wait_readers(self) -> None:
        for task in self._readers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 5.0)


__all__ = ["BashResult", "ForkMessage", "RpcClient", "RpcCommandError", "RpcProcessError", "RpcSessionState",
           "SlashCommand"]
