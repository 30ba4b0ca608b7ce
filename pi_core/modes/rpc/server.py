"""The RPC loop: commands in on stdin, responses and events out on stdout, one JSON object a line.

Each command runs in its own task as soon as its line arrives (pi does the same), so a long
``prompt``, ``compact`` or ``bash`` never holds up ``abort`` or ``get_state``; their responses come
when they are done while events keep flowing.

Ending (pi 1.6 quits on the spot when stdin ends; a piped script then loses its answers):

* stdin ends: no new commands are read, open dialogs get their "no answer" value, the commands
  already received run to completion (a prompt's run settles, queued follow-ups included), then
  the loop returns 0;
* stdout is gone (the client died) or SIGTERM/SIGHUP: the run and any user shell command are
  aborted, and the loop returns 1, 143 or 129.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from ..event_json import event_to_json
from ..protocol_stdout import release_stdout, take_over_stdout
from .commands import ANSWERED, COMMANDS, RawJson
from .jsonl import Output, Oversized, Record, parse_record, start_reader
from .protocol import RpcError, failure, success
from .ui import RpcUI

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

_EOF = None
_STOP = object()
STOP_TIMEOUT = 10.0


class RpcServer:
    """Serves one :class:`~pi_core.runtime.agent_session.AgentSession` over a pair of byte streams."""

    def __init__(self, session: AgentSession, output: Output, *, err: TextIO | None = None) -> None:
        self.session = session
        self.output = output
        early = session.ctx.ui
        self.ui = early if isinstance(early, RpcUI) else RpcUI()
        self.ui.attach(self.write)
        self.exit_code = 0
        self._err = err or sys.stderr
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._stopped = asyncio.Event()
        #: tasks of ``prompt`` commands whose run is still going
        self.prompts: set[asyncio.Task[Any]] = set()
        #: an automatic retry is waiting out its delay (between ``auto_retry_start`` and ``agent_start``)
        self.retry_waiting = False
        output._on_close = lambda: self.stop(1)

    # -- output --------------------------------------------------------------------------------

    def write(self, record: dict[str, Any], raw_data: str | None = None) -> None:
        self.output.write(record, raw_data)

    def report(self, text: str) -> None:
        """A diagnostic for the operator: stderr, never the protocol stream."""
        print(f"pi rpc: {text}", file=self._err, flush=True)

    def _on_event(self, event: Any) -> None:
        try:
            record = event if isinstance(event, dict) else event_to_json(event)
        except Exception as exc:  # noqa: BLE001 - one odd event must not end the session
            self.report(f"cannot serialise {getattr(event, 'type', event)!r}: {exc!r}")
            return
        if record.get("type") in ("auto_retry_start", "agent_start", "agent_settled"):
            self.retry_waiting = record["type"] == "auto_retry_start"
        try:
            self.write(record)
        except (TypeError, ValueError, RecursionError) as exc:
            self.report(f"cannot serialise {record.get('type')!r}: {exc!r}")

    def cancel_retry_wait(self) -> bool:
        """End a run that is only waiting to retry: its prompt task is cancelled in the delay, and the
        session settles with the failed answer as the last word."""
        if not self.retry_waiting:
            return False
        self.retry_waiting = False
        for task in list(self.prompts):
            task.cancel()
        return True

    def _on_hook_error(self, error: Any) -> None:
        record = self.session.host.records.get(error.plugin)
        path = str(record.path) if record is not None and record.path is not None else error.plugin
        self.write({"type": "extension_error", "extensionPath": path, "event": error.hook,
                    "error": f"{type(error.error).__name__}: {error.error}"})

    # -- lifecycle -----------------------------------------------------------------------------

    async def serve(self, stdin: BinaryIO | int) -> int:
        """Read commands until stdin ends (or a stop); returns the exit code."""
        session = self.session
        previous_ui, session.ctx.ui = session.ctx.ui, self.ui
        unsubscribe = session.subscribe(self._on_event)
        forget_shutdown = session.on_shutdown_requested(self._on_shutdown_requested)
        for error in list(session.host.hook_errors):  # from start-up (session_start), before the loop
            self._on_hook_error(error)
        session.host.error_listeners.append(self._on_hook_error)
        start_reader(stdin, asyncio.get_running_loop(), self._queue.put_nowait)
        try:
            stopped = await self._read_commands() is _STOP
            self.ui.close()
            if not stopped:
                stopped = not await self._finish_work()
            if stopped:
                await self._stop_work()
        finally:
            session.host.error_listeners.remove(self._on_hook_error)
            forget_shutdown()
            unsubscribe()
            session.ctx.ui = previous_ui
        return self.exit_code

    def _on_shutdown_requested(self) -> None:
        """``ctx.shutdown()``: end as if input ended: the commands received and the run finish first."""
        self._queue.put_nowait(_EOF)

    def stop(self, code: int) -> None:
        """End now (signal, or nobody reads stdout any more): abort what runs and return ``code``."""
        if self._stopped.is_set():
            return
        self.exit_code = code
        self._stopped.set()
        self._queue.put_nowait(_STOP)

    async def _read_commands(self) -> Any:
        while True:
            line = await self._queue.get()
            if line is _EOF or line is _STOP:
                return line
            self._on_line(line)

    async def _finish_work(self) -> bool:
        """Let the commands already received finish; False if a stop came first."""
        stop = asyncio.ensure_future(self._stopped.wait())
        idle: asyncio.Future[None] | None = None
        try:
            while (self._tasks or self.session.is_streaming) and not self._stopped.is_set():
                pending: set[asyncio.Future[Any]] = set(self._tasks)
                if not pending:  # a run with no command behind it (started by a plugin)
                    idle = idle or asyncio.ensure_future(self.session.wait_for_idle())
                    pending = {idle}
                await asyncio.wait(pending | {stop}, return_when=asyncio.FIRST_COMPLETED)
                if idle is not None and idle.done():
                    idle = None
            return not self._stopped.is_set()
        finally:
            stop.cancel()
            if idle is not None:
                idle.cancel()

    async def _stop_work(self) -> None:
        self.session.abort_bash()
        try:
            await asyncio.wait_for(self.session.abort(), STOP_TIMEOUT)
        except TimeoutError:
            self.report("the run did not stop in time after abort")
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=STOP_TIMEOUT)

    # -- commands ------------------------------------------------------------------------------

    def _on_line(self, line: Record) -> None:
        if isinstance(line, Oversized):
            self.write(failure(None, "parse", f"Failed to parse command: {line.message()}"))
            return
        if not line.strip():
            return  # blank lines carry nothing (pi answers them with a parse error)
        try:
            command = parse_record(line)
        except (ValueError, RecursionError, MemoryError) as exc:  # whatever a line holds, the loop goes on
            self.write(failure(None, "parse", f"Failed to parse command: {exc}"))
            return
        if not isinstance(command, dict):
            self.write(failure(None, "parse", "Failed to parse command: a command must be a JSON object"))
            return
        if command.get("type") == "extension_ui_response":
            self.ui.resolve(command)
            return
        task = asyncio.ensure_future(self._handle(command))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, command: dict[str, Any]) -> None:
        request_id, kind = command.get("id"), command.get("type")
        handler = COMMANDS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            name = kind if isinstance(kind, str) else None
            self.write(failure(request_id, name, f"Unknown command: {name or '(no type)'}"))
            return
        try:
            data = await handler(self, command)
        except RpcError as exc:
            self.write(failure(request_id, kind, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - every failure is answered, none is fatal
            if not _expected(exc):  # a bug: the client gets the message, stderr the traceback
                self.report("".join(traceback.format_exception(exc)).rstrip())
            self.write(failure(request_id, kind, str(exc) or type(exc).__name__))
            return
        if data is ANSWERED:
            return
        try:
            if isinstance(data, RawJson):
                self.write(success(request_id, kind), raw_data=str(data))
            else:
                self.write(success(request_id, kind, data))
        except (TypeError, ValueError, RecursionError) as exc:  # the answer cannot be written as JSON
            self.report(f"cannot serialise the {kind} response: {exc!r}")
            self.write(failure(request_id, kind, f"the response could not be written as JSON: {exc}"))


def _expected(exc: Exception) -> bool:
    """A refusal the response explains in full (\"Nothing to compact\", a session file not found, a
    provider's error), as opposed to a bug worth a traceback."""
    from ...ai.abort import AbortError
    from ...ai.errors import ProviderError
    from ...runtime.compaction import CompactionError
    from ...runtime.resources import ResourceError
    from ...runtime.settings import SettingsError
    from ...session.errors import SessionError

    if isinstance(exc, (KeyError, IndexError)):
        return False
    return isinstance(exc, (ValueError, RuntimeError, LookupError, OSError, CompactionError, SessionError,
                            SettingsError, ResourceError, ProviderError, AbortError))


async def run_rpc(session: AgentSession, *, stdin: BinaryIO | int | None = None,
                  stdout: BinaryIO | int | None = None, err: TextIO | None = None) -> int:
    """Serve ``session`` over pi's RPC protocol; returns the process exit code.

    With the default streams, stdout is taken over first: the protocol writes to a private copy of
    it, and file descriptor 1 and ``sys.stdout`` point at stderr from then on (also after the
    return), so stray prints of plugins or libraries can never corrupt the protocol stream.
    """
    own_stdout = stdout is None
    fd = take_over_stdout() if own_stdout else (stdout if isinstance(stdout, int) else stdout.fileno())
    server = RpcServer(session, Output(fd), err=err)
    remove_signals = _install_signal_handlers(server) if own_stdout else (lambda: None)
    try:
        return await server.serve(sys.stdin.buffer if stdin is None else stdin)
    finally:
        remove_signals()
        if own_stdout:
            release_stdout()  # the client sees end of output


def _install_signal_handlers(server: RpcServer) -> Any:
    """SIGTERM/SIGHUP stop the server (see :mod:`pi_core.modes.signals`: a second signal, or the shutdown
    deadline, exits at once even when a plugin's handler holds everything up)."""
    from ..signals import SignalStop

    return SignalStop(server.stop).install().remove


__all__ = ["RpcServer", "run_rpc"]
