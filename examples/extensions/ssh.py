"""Port of pi's ``ssh`` example: with ``--ssh user@host[:/path]``, ``read``, ``write``, ``edit``, ``bash`` and
the user's ``!commands`` run on the remote machine over ssh; without it everything stays local.

The built-in tools are reused with other operations (``create_*_tool(operations=...)``), so arguments,
limits, truncation and messages stay the built-ins'. ``$PI_SSH_PROGRAM`` replaces ``ssh`` (for tests)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_core import (
    AbortSignal,
    AgentStartPatch,
    BeforeAgentStartEvent,
    ExecResult,
    ExtensionContext,
    Flag,
    SessionStartEvent,
    Tool,
    ToolContext,
    ToolResult,
    UserBashEvent,
    UserBashResult,
    create_bash_tool,
    create_edit_tool,
    create_read_tool,
    create_write_tool,
    hookimpl,
)


@dataclass
class Remote:
    host: str
    cwd: str
    local_cwd: Path

    def path(self, local: Path) -> str:
        """A local path inside the project, as the same path under the remote directory."""
        try:
            return str(Path(self.cwd) / Path(local).relative_to(self.local_cwd))
        except ValueError:
            return str(local)


_remote: list[Remote] = []


def _program() -> str:
    return os.environ.get("PI_SSH_PROGRAM", "ssh")


async def ssh_run(host: str, command: str, data: bytes | None = None) -> bytes:
    child = await asyncio.create_subprocess_exec(
        _program(), host, command, stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await child.communicate(data)
    if child.returncode != 0:
        message = err.decode(errors="replace").strip()
        if "No such file" in message:
            raise FileNotFoundError(message)
        raise OSError(f"ssh failed ({child.returncode}): {message}")
    return out


class RemoteFiles:
    """``ReadOperations``, ``WriteOperations`` and ``EditOperations`` over ssh."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote

    def _q(self, path: Path) -> str:
        return shlex.quote(self.remote.path(path))

    async def read_file(self, path: Path) -> bytes:
        return await ssh_run(self.remote.host, f"cat {self._q(path)}")

    async def access(self, path: Path) -> None:
        try:
            await ssh_run(self.remote.host, f"test -r {self._q(path)}")
        except OSError:
            raise FileNotFoundError(self.remote.path(path)) from None

    async def write_file(self, path: Path, data: bytes) -> None:
        await ssh_run(self.remote.host, f"cat > {self._q(path)}", data)

    async def mkdir(self, path: Path) -> None:
        await ssh_run(self.remote.host, f"mkdir -p {self._q(path)}")


class RemoteShell:
    """``BashOperations`` over ssh: output streams back, timeout and abort stop the ssh process."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote

    async def exec(self, command: str, cwd: Path, *, on_data: Callable[[bytes], None], signal: AbortSignal | None,
                   timeout: float | None, env: Mapping[str, str]) -> ExecResult:
        remote_command = f"cd {shlex.quote(self.remote.path(cwd))} && {command}"
        child = await asyncio.create_subprocess_exec(_program(), self.remote.host, remote_command,
                                                     stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                     stderr=asyncio.subprocess.STDOUT)
        assert child.stdout is not None

        async def pump() -> None:
            while chunk := await child.stdout.read(65536):  # type: ignore[union-attr]
                on_data(chunk)
            await child.wait()

        work = asyncio.ensure_future(pump())
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        waiting: set[asyncio.Future[Any]] = {work, *([aborted] if aborted else [])}
        done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            if aborted:
                aborted.cancel()
            return ExecResult(child.returncode)
        child.kill()
        await work
        return ExecResult(None, timed_out=not done, cancelled=bool(done))


def _switching(local: Tool, make_remote: Callable[[Remote], Tool]) -> Tool:
    """The built-in tool, or its remote twin while ``--ssh`` is on (decided per call)."""

    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = make_remote(_remote[0]) if _remote else local
        return await tool.run(params, ctx)

    return dataclasses.replace(local, execute=execute)


@hookimpl
def register_flags(register: Any) -> None:
    register(Flag("ssh", str, None, "SSH remote: user@host or user@host:/path"))


@hookimpl
def register_tools(register: Any) -> None:
    register(_switching(create_read_tool(), lambda r: create_read_tool(operations=RemoteFiles(r))), replaces="read")
    register(_switching(create_write_tool(), lambda r: create_write_tool(operations=RemoteFiles(r))), replaces="write")
    register(_switching(create_edit_tool(), lambda r: create_edit_tool(operations=RemoteFiles(r))), replaces="edit")
    register(_switching(create_bash_tool(), lambda r: create_bash_tool(operations=RemoteShell(r))), replaces="bash")


@hookimpl
async def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    arg = ctx.get_flag("ssh")
    if not arg or _remote:
        return
    host, _, path = str(arg).partition(":")
    cwd = path or (await ssh_run(host, "pwd")).decode().strip()
    _remote.append(Remote(host, cwd, ctx.cwd))
    await ctx.ui.set_status("ssh", f"SSH: {host}:{cwd}")
    await ctx.ui.notify(f"SSH mode: {host}:{cwd}", "info")


@hookimpl
def user_bash(event: UserBashEvent, ctx: ExtensionContext) -> UserBashResult | None:
    return UserBashResult(operations=RemoteShell(_remote[0])) if _remote else None


@hookimpl
def before_agent_start(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> AgentStartPatch | None:
    if not _remote:
        return None
    remote = _remote[0]
    where = f"{remote.cwd} (via SSH: {remote.host})"  # the prompt's working directory is the remote one
    return AgentStartPatch(system_prompt=event.system_prompt.replace(str(remote.local_cwd), where))
