"""Where the built-in tools do their work: pluggable *operations* (pi's ``BashOperations``,
``ReadOperations``, ``EditOperations``, ``WriteOperations``, ``GrepOperations``, ``FindOperations``,
``LsOperations``), so that an ssh or container plugin can reuse the built-in tools — their arguments,
limits, truncation and messages — against another machine.

The local implementations are the defaults. An operations object only moves bytes and runs commands;
everything the model sees is still made by the tool.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..toolkit.process import OutputCollector, ShellConfig, ShellResult, run_shell

if TYPE_CHECKING:
    from ..ai.abort import AbortSignal
    from ..toolkit.search import GrepResult


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


class GrepOperations(Protocol):
    """Searches file contents for the ``grep`` tool. Unlike pi's ``GrepOperations`` (whose search always
    runs the local ripgrep, so a remote plugin has to replace the tool's ``execute``), the search itself
    is pluggable: the tool formats, limits and truncates what ``grep`` returns."""

    async def grep(self, target: Path, pattern: str, *, ignore_case: bool, literal: bool, context: int,
                   glob: str | None, limit: int, signal: AbortSignal | None) -> GrepResult:
        """Matches of ``pattern`` (a regular expression unless ``literal``) under ``target`` (a directory
        or one file) as :func:`pi_core.grep` returns them: paths relative to ``target`` (the file's name
        for a file), at most ``limit`` matches, ``context`` lines around each. Raise ``FileNotFoundError``
        for a missing ``target`` and :class:`pi_core.SearchError` for a bad pattern."""


class FindOperations(Protocol):
    """Finds files for the ``find`` tool (pi's ``FindOperations``)."""

    async def exists(self, path: Path) -> bool: ...

    async def glob(self, pattern: str, root: Path, *, ignore: Sequence[str], limit: int,
                   signal: AbortSignal | None) -> list[str]:
        """Paths under ``root`` matching ``pattern`` (relative to ``root`` or absolute; a trailing ``/``
        marks a directory), leaving out those matching an ``ignore`` glob, at most ``limit`` of them."""


class LsOperations(Protocol):
    """Lists directories for the ``ls`` tool (pi's ``LsOperations``)."""

    async def exists(self, path: Path) -> bool: ...

    async def is_dir(self, path: Path) -> bool:
        """Whether ``path`` is a directory; raise ``OSError`` when it cannot be looked at."""

    async def readdir(self, path: Path) -> list[str]:
        """The names of the directory's entries, in any order; raise ``OSError`` when it cannot be read."""


def find_pattern(pattern: str, root: str) -> re.Pattern[str]:
    """The matcher for a ``find`` pattern: relative paths, smart case (an all-lowercase pattern ignores
    case), ``**`` across directories; a pattern without ``/`` matches names at any depth."""
    from ..toolkit.ignore import glob_to_regex

    if pattern.startswith(root.rstrip("/") + "/"):
        pattern = pattern[len(root.rstrip("/")) + 1:]
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or "**"
    anchored = "/" in pattern
    body = glob_to_regex(pattern.lstrip("/"))
    flags = re.IGNORECASE if pattern == pattern.lower() else 0
    return re.compile(body if anchored else "(?:.*/)?" + body, flags | re.DOTALL)


def _with_directories(files: list[str]) -> list[tuple[str, bool]]:
    """Files plus the directories that hold them, in ripgrep's path order."""
    from ..toolkit.search import path_key

    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    entries = [(f, False) for f in files] + [(d, True) for d in dirs]
    return sorted(entries, key=lambda e: path_key(e[0]))


class LocalFileOperations:
    """This machine's files (the tools' default; they take a faster path for it: streaming reads,
    special-file checks, atomic replacement). It implements every file protocol above, so a plugin can
    wrap it (log each call, say) and hand the rest on."""

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

    async def exists(self, path: Path) -> bool:
        return Path(path).exists()

    async def is_dir(self, path: Path) -> bool:
        import stat

        return stat.S_ISDIR(Path(path).stat().st_mode)

    async def readdir(self, path: Path) -> list[str]:
        import os

        from ..toolkit.blocking import run_blocking

        return await run_blocking(os.listdir, Path(path), name="ls")

    async def glob(self, pattern: str, root: Path, *, ignore: Sequence[str] = (), limit: int = 1000,
                   signal: AbortSignal | None = None) -> list[str]:
        """Files and directories (with a trailing ``/``) that ignore files keep, in path order."""
        import os

        from ..toolkit.ignore import glob_to_regex
        from ..toolkit.search import list_files

        regex = find_pattern(pattern, os.path.realpath(root))
        skip = [re.compile(glob_to_regex(g), re.DOTALL) for g in ignore]
        found: list[str] = []
        for rel, is_dir in _with_directories(await list_files(Path(root), signal=signal)):
            shown = rel + ("/" if is_dir else "")
            if regex.fullmatch(rel) and not any(r.fullmatch(shown) for r in skip):
                found.append(shown)
                if len(found) >= limit:
                    break
        return found

    async def grep(self, target: Path, pattern: str, *, ignore_case: bool = False, literal: bool = False,
                   context: int = 0, glob: str | None = None, limit: int = 100,
                   signal: AbortSignal | None = None) -> GrepResult:
        from ..toolkit.search import grep

        return await grep(Path(target), pattern, ignore_case=ignore_case, literal=literal, context=context,
                          glob=glob, limit=limit, signal=signal)


def is_local(operations: Any) -> bool:
    """``operations`` is ``None`` or this machine's (the tools' fast path applies)."""
    return operations is None or isinstance(operations, (LocalFileOperations, LocalBashOperations))


__all__ = ["BashOperations", "EditOperations", "ExecResult", "FindOperations", "GrepOperations", "LocalBashOperations",
           "LocalFileOperations", "LsOperations", "ReadOperations", "SpawnHook", "WriteOperations", "is_local",
           "run_bash_operations"]
