"""Where the built-in tools do their work: pluggable *operations* (pi's ``BashOperations``,
``ReadOperations``, ``EditOperations``, ``WriteOperations``), so that an ssh or container plugin can
reuse the built-in tools — their arguments, limits, truncation and messages — against another machine.

The local implementations are the defaults. An operations object only moves bytes and runs commands;
everything the model sees is still made by the tool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..toolkit.process import OutputCollector, ShellConfig, ShellResult, run_shell

if TYPE_CHECKING:
    from ..ai.abort import AbortSignal


@dataclass(frozen=True)
class ExecResult:
    """How a command ended: ``exit_code`` is ``None`` when it was stopped (timeout or abort)."""

    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False


class BashOperations(Protocol):
    """Runs a shell command somewhere; its output (stdout and stderr together) goes to ``on_data``."""

    async def exec(self, command: str, cwd: Path, *, on_data: Callable[[bytes], None], signal: AbortSignal | None,
                   timeout: float | None, env: Mapping[str, str]) -> ExecResult: ...


SpawnHook = Callable[[str, Path, dict[str, str]], "tuple[str, Path, dict[str, str]]"]
"""``(command, cwd, env) -> (command, cwd, env)``: changes a command before it runs (pi's ``spawnHook``)."""


class _Forward(OutputCollector):
    """Hands every chunk on instead of keeping it (the caller collects)."""

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        super().__init__()
        self._on_data = on_data

    def feed(self, chunk: bytes) -> str:
        if chunk:
            self._on_data(chunk)
        return ""


class LocalBashOperations:
    """Runs commands on this machine with the user's shell (process group, timeout, abort).

    :param shell: the shell executable (pi's ``shellPath``); ``None``: :func:`pi_core.default_shell`.
    """

    def __init__(self, shell: str | None = None) -> None:
        self.shell = shell

    async def exec(self, command: str, cwd: Path, *, on_data: Callable[[bytes], None], signal: AbortSignal | None,
                   timeout: float | None, env: Mapping[str, str]) -> ExecResult:
        result = await run_shell(command, cwd=cwd, env=env, timeout=timeout, signal=signal,
                                 collector=_Forward(on_data), shell=self.shell)
        return ExecResult(result.exit_code, result.timed_out, result.cancelled)


async def run_bash_operations(command: str, *, cwd: Path, env: Mapping[str, str], timeout: float | None = None,
                   signal: AbortSignal | None = None, operations: BashOperations | None = None,
                   spawn_hook: SpawnHook | None = None, on_output: Callable[[str], Any] | None = None,
                   collector: OutputCollector | None = None, spill_prefix: str = "pi-bash",
                   shell: ShellConfig | None = None) -> ShellResult:
    """Run ``command`` through ``operations`` (default: this machine) and collect its output as the bash
    tool and ``!command`` show it: head and tail within the limits, everything spilled to a file.

    ``shell`` applies the settings: its command prefix goes before ``command`` (wherever it runs), its
    shell path is used when the command runs here."""
    if shell is not None:
        command = shell.command(command)
    run_env = dict(env)
    if spawn_hook is not None:
        command, cwd, run_env = spawn_hook(command, Path(cwd), run_env)
    collector = collector or OutputCollector(spill_prefix=spill_prefix)
    if operations is None or isinstance(operations, LocalBashOperations):
        path = operations.shell if operations is not None and operations.shell else None
        return await run_shell(command, cwd=cwd, env=run_env, timeout=timeout, signal=signal, on_output=on_output,
                               collector=collector, shell=path or (shell.shell() if shell is not None else None))

    def on_data(chunk: bytes) -> None:
        text = collector.feed(chunk)
        if on_output is not None and text:
            on_output(text)

    started = time.monotonic()
    try:
        outcome = await operations.exec(command, Path(cwd), on_data=on_data, signal=signal, timeout=timeout,
                                        env=run_env)
    finally:
        collector.close()
    snap = collector.snapshot()
    return ShellResult(command, snap.text(), outcome.exit_code, outcome.timed_out, outcome.cancelled, snap,
                       collector.spill_path, time.monotonic() - started, timeout, collector)


# -- files -------------------------------------------------------------------------------------------


class ReadOperations(Protocol):
    """Reads files for the ``read`` tool (pi's ``ReadOperations``)."""

    async def read_file(self, path: Path) -> bytes:
        """The file's bytes; raise ``FileNotFoundError``, ``IsADirectoryError`` or ``PermissionError``."""

    async def access(self, path: Path) -> None:
        """Raise ``FileNotFoundError`` (or ``PermissionError``) when ``path`` cannot be read."""


class WriteOperations(Protocol):
    """Writes files for the ``write`` tool (pi's ``WriteOperations``)."""

    async def write_file(self, path: Path, data: bytes) -> None:
        """Replace (or create) the file with ``data``."""

    async def mkdir(self, path: Path) -> None:
        """Create the directory and its parents (no error when it exists)."""


class EditOperations(Protocol):
    """Reads and writes files for the ``edit`` tool (pi's ``EditOperations``)."""

    async def read_file(self, path: Path) -> bytes: ...
    async def write_file(self, path: Path, data: bytes) -> None: ...
    async def access(self, path: Path) -> None: ...


class LocalFileOperations:
    """This machine's files (the tools' default; they take a faster path for it: streaming reads,
    special-file checks, atomic replacement)."""

    async def read_file(self, path: Path) -> bytes:
        from ..toolkit.blocking import run_blocking

        return await run_blocking(Path(path).read_bytes, name="read")

    async def access(self, path: Path) -> None:
        import os

        if not os.access(path, os.R_OK):
            if not Path(path).exists():
                raise FileNotFoundError(str(path))
            raise PermissionError(str(path))

    async def write_file(self, path: Path, data: bytes) -> None:
        from ..toolkit.blocking import run_blocking
        from ..toolkit.mutation import atomic_write

        await run_blocking(atomic_write, Path(path), data, name="write")

    async def mkdir(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)


def is_local(operations: Any) -> bool:
    """``operations`` is ``None`` or this machine's (the tools' fast path applies)."""
    return operations is None or isinstance(operations, (LocalFileOperations, LocalBashOperations))


__all__ = ["BashOperations", "EditOperations", "ExecResult", "LocalBashOperations", "LocalFileOperations",
           "ReadOperations", "SpawnHook", "WriteOperations", "is_local", "run_bash_operations"]
