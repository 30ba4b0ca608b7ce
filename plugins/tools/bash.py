"""The ``bash`` tool: run a shell command under supervision, stream its output, keep head and tail.

:func:`create_bash_tool` makes one that runs its commands elsewhere (``operations``: ssh, a container)
or changes them first (``spawn_hook``), with the same arguments, limits and messages.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Mapping
from typing import Any

from pi_core import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    BashOperations,
    SpawnHook,
    Tool,
    TextContent,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    format_size,
    hookimpl,
)

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
UPDATE_INTERVAL = 0.1

DESCRIPTION = (
    "Run a bash command in the working directory and return what it printed (stdout and stderr "
    f"together). Output over {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB keeps its "
    "beginning and its end, and the complete output is saved to a file whose path is given. stdin is "
    "closed, so commands must not wait for input. Commands are stopped after a timeout (default "
    f"{int(DEFAULT_TIMEOUT)} seconds, at most {int(MAX_TIMEOUT)}); pass timeout in seconds for long jobs."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "description": "The bash command line to run"},
        "timeout": {"type": "number", "description": f"Seconds before the command is stopped (default "
                    f"{int(DEFAULT_TIMEOUT)}, at most {int(MAX_TIMEOUT)})"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
    "properties": {
        "output": {"type": "string", "description": "stdout and stderr together; past 1 MiB its first and last halves"},
        "truncated": {"type": "boolean"},
        "full_output_path": {"type": "string", "description": "The complete output, when truncated"},
        "exit_code": {"type": "number"},
        "wall_time_seconds": {"type": "number"},
    },
}
"""``structured_content`` of a command that ran to its end (any exit code), which codemode scripts receive."""


def _setting(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name) or os.environ.get(name)
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 and math.isfinite(value) else default


def resolve_timeout(requested: Any, env: Mapping[str, str]) -> tuple[float, str]:
    """The timeout to use and a note for the model when its request was changed.

    Defaults come from ``PI_BASH_TIMEOUT`` / ``PI_BASH_MAX_TIMEOUT`` (in ``ctx.env`` or the
    environment), else 120 s / 600 s. A request above the maximum is lowered to it; zero, negative
    or non-numeric requests are refused.
    """
    maximum = _setting(env, "PI_BASH_MAX_TIMEOUT", MAX_TIMEOUT)
    default = min(_setting(env, "PI_BASH_TIMEOUT", DEFAULT_TIMEOUT), maximum)
    if requested is None:
        return default, ""
    try:
        value = float(requested)
    except (TypeError, ValueError):
        raise ToolError(f"timeout must be a number of seconds, not {requested!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ToolError(f"timeout must be a positive number of seconds (got {requested}); "
                        f"leave it out for the default of {default:g} seconds")
    if value > maximum:
        return maximum, f"[The requested timeout of {value:g} seconds was lowered to the maximum, {maximum:g}.]"
    return value, ""


def _footer(snap: Any, path: Any) -> str:
    limit = f" ({format_size(snap.max_bytes)} limit)" if snap.truncated_by == "bytes" else ""
    if snap.total_lines <= 1 or snap.omitted_lines == 0:
        shown = f"Showing the first and last parts of {format_size(snap.total_bytes)} of output{limit}"
    else:
        shown = (f"Showing lines 1-{snap.head_lines} and {snap.tail_start_line}-{snap.total_lines} "
                 f"of {snap.total_lines}{limit}")
    return f"[{shown}. Full output: {path}]"


def _details(snap: Any, path: Any) -> dict[str, Any] | None:
    if not snap.truncated:
        return None
    return {"truncation": snap.details(), "fullOutputPath": str(path) if path else None}


def _final(result: Any, note: str) -> ToolResult:
    snap = result.truncation
    text = result.output
    if snap is not None and snap.truncated:
        text += "\n\n" + _footer(snap, result.full_output_path)
    status = ""
    if result.cancelled:
        status = "Command aborted"
    elif result.timed_out:
        status = f"Command timed out after {result.timeout:g} seconds"
    elif result.exit_code != 0:
        status = f"Command exited with code {result.exit_code}"
    if note:
        text = f"{text}\n\n{note}" if text else note
    details = _details(snap, result.full_output_path)
    if result.cancelled or result.timed_out:
        return ToolResult.text(f"{text}\n\n{status}" if text else status, details=details, is_error=True)
    full, cut = result.collector.read_full() if result.collector else (result.output, False)
    structured: dict[str, Any] = {"output": full, "truncated": cut}
    if cut and result.full_output_path:
        structured["full_output_path"] = str(result.full_output_path)
    structured.update(exit_code=result.exit_code, wall_time_seconds=round(result.duration_seconds, 1))
    if status:
        text = f"{text}\n\n{status}" if text else status
    else:
        text = text or "(no output)"
    return ToolResult(content=[TextContent(text=text)], details=details, is_error=bool(status),
                      structured_content=structured)


class _Updates:
    """Throttled partial results while the command runs (at most one per UPDATE_INTERVAL)."""

    def __init__(self, ctx: ToolContext, collector: Any) -> None:
        self.ctx, self.collector = ctx, collector
        self.last = 0.0
        self.pending: asyncio.TimerHandle | None = None

    def emit(self) -> None:
        self.pending = None
        self.last = time.monotonic()
        snap = self.collector.snapshot()
        details = {"truncation": snap.details(), "fullOutputPath": str(self.collector.spill_path)} \
            if snap.truncated else {}
        self.ctx.update(ToolResult.text(snap.text(), details=details))

    def on_output(self, _delta: str) -> None:
        if self.pending is not None:
            return
        wait = UPDATE_INTERVAL - (time.monotonic() - self.last)
        if wait <= 0:
            self.emit()
        else:
            self.pending = asyncio.get_running_loop().call_later(wait, self.emit)

    def stop(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.emit()


def _executor(operations: BashOperations | None, spawn_hook: SpawnHook | None) -> Any:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core import OutputCollector, ProcessStartError, run_bash_operations

        command = params["command"]
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command must be a non-empty string")
        timeout, note = resolve_timeout(params.get("timeout"), ctx.env)
        collector = OutputCollector(spill_prefix="pi-bash")
        updates = _Updates(ctx, collector) if ctx.on_update is not None else None
        if updates is not None:
            ctx.update(ToolResult(content=[]))
        try:
            result = await run_bash_operations(command, cwd=ctx.cwd, env=ctx.env, timeout=timeout,
                                               signal=ctx.signal, operations=operations, spawn_hook=spawn_hook,
                                               on_output=updates.on_output if updates else None,
                                               collector=collector, shell=ctx.shell)
        except ProcessStartError as e:
            raise ToolError(f"{e}. Cannot run bash commands.") from e
        finally:
            if updates is not None:
                updates.stop()
        return _final(result, note)

    return execute


execute = _executor(None, None)


def create_bash_tool(*, operations: BashOperations | None = None, spawn_hook: SpawnHook | None = None,
                     name: str = "bash") -> Tool:
    """The built-in ``bash`` tool, running its commands through ``operations`` (default: this machine) and
    ``spawn_hook(command, cwd, env) -> (command, cwd, env)`` first. Register it with
    ``register(tool, replaces="bash")`` to take the built-in's place."""
    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        output_schema=OUTPUT_SCHEMA,
        execute=execute if operations is None and spawn_hook is None else _executor(operations, spawn_hook),
        capabilities=ToolCapabilities(reads=True, writes=True, executes=True, network=True),
        prompt_snippet="Run shell commands (ls, rg, git, tests, builds, ...)",
        prompt_guidelines=[
            "Details of the current model and session are in PI_* environment variables, readable from bash.",
            "bash has no stdin and a timeout; run servers detached with output redirected "
            "(setsid cmd > log 2>&1 &) or they are stopped when the command ends.",
        ],
    )


def make_bash_tool() -> Tool:
    """A fresh ``bash`` tool."""
    return create_bash_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_bash_tool())
