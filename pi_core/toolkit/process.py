"""Supervised child processes: the layer under the bash tool, RPC's ``bash`` and ``ctx.exec``.

Every process started here

* runs in its own session and process group, with stdin closed (or fed and closed) and a
  non-interactive environment (no pagers, no credential or editor prompts);
* carries a private marker variable, so that descendants which left the process group (``setsid``,
  double forks) can still be found on Linux;
* is waited for by its *exit*, not by end-of-file on its pipes: a daemonised grandchild that keeps
  the output pipe open gets a short grace period, then is killed and the pipe closed;
* on timeout or abort has its whole tree terminated (SIGTERM), then killed (SIGKILL) after a grace.

Processes that finished their output (closed the pipe) and left the group are deliberate daemons
and are left alone: ``setsid server > log 2>&1 &`` survives a command, ``server &`` does not.

:func:`run_process` runs an argument list (no shell) and returns its stdout and stderr.
:func:`run_shell` runs a shell command with stdout and stderr merged, streams decoded output, keeps
head and tail within limits and spills the full output to a temporary file when it is over them.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import signal as signals
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ai.abort import AbortSignal
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    HeadTail,
    build_head_tail,
    head_tail_budgets,
    take_head,
    take_tail,
    truncate_head_tail,
)

NONINTERACTIVE_ENV: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
    "GCM_INTERACTIVE": "never",
    "PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
}
"""Set for every supervised process (callers' ``env`` wins), so nothing waits for a keyboard."""

MARKER_VAR = "PI_PROCESS_TREE"
KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL."""
EXIT_IDLE_GRACE = 0.2
"""After the main process exits: how long the pipes may stay silent before they are closed."""
EXIT_MAX_GRACE = 2.0
"""After the main process exits: the longest time output is still read from leftover processes."""


class ProcessStartError(OSError):
    """The process could not be started (missing program, missing working directory, ...)."""


def build_env(extra: Mapping[str, str] | None = None, *, inherit: bool = True) -> dict[str, str]:
    """The environment for a supervised process: ours without credentials (see
    :mod:`pi_core.toolkit.shell_env`), the non-interactive defaults, then ``extra`` (always kept)."""
    from .shell_env import scrubbed_env

    env = scrubbed_env() if inherit else {}
    env.update(NONINTERACTIVE_ENV)
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


@dataclass(frozen=True)
class ShellConfig:
    """How user and tool shell commands run: pi's ``shellPath`` and ``shellCommandPrefix`` settings.

    :param path: the shell executable (``~`` expanded); ``None`` means :func:`default_shell`.
    :param command_prefix: a line run before every command (``shopt -s expand_aliases``, say).
    """

    path: str | None = None
    command_prefix: str | None = None

    def shell(self) -> str:
        return os.path.expanduser(self.path) if self.path else default_shell()

    def command(self, command: str) -> str:
        """``command`` with the prefix on a line of its own before it, as pi joins them."""
        return f"{self.command_prefix}\n{command}" if self.command_prefix else command


def default_shell() -> str:
    """``$PI_SHELL``, else bash (``/bin/bash`` or on PATH), else ``/bin/sh``."""
    configured = os.environ.get("PI_SHELL")
    if configured:
        return configured
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "/bin/sh"


# -- finding and killing a process tree -------------------------------------------------------------


def _marked_pids(marker: bytes) -> list[int]:
    """Processes whose environment holds ``marker`` (Linux ``/proc``; empty elsewhere)."""
    found: list[int] = []
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if marker in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _holds_pipe(pid: int, inodes: set[int]) -> bool:
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("pipe:[") and int(link[6:-1]) in inodes:
                return True
    except OSError:
        return False
    return False


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _signal_pids(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


@dataclass
class _Tree:
    """A started process, its group and its marker."""

    proc: asyncio.subprocess.Process
    marker: bytes
    pipe_inodes: set[int]

    def members(self, pipe_holders_only: bool = False) -> list[int]:
        pids = _marked_pids(self.marker)
        if pipe_holders_only:
            pids = [p for p in pids if _holds_pipe(p, self.pipe_inodes)]
        return [p for p in pids if _alive(p)]

    async def terminate(self, grace: float) -> None:
        """SIGTERM the group and every marked process, SIGKILL what is left after ``grace``."""
        pgid = self.proc.pid
        _signal_group(pgid, signals.SIGTERM)
        _signal_pids(self.members(), signals.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if self.proc.returncode is not None and not _group_alive(pgid) and not self.members():
                return
            await asyncio.sleep(0.02)
        await self.kill()

    async def kill(self, pipe_holders_only: bool = False) -> None:
        pgid = self.proc.pid
        for _ in range(3):  # a process may fork while we look; look again
            _signal_group(pgid, signals.SIGKILL)
            left = self.members(pipe_holders_only)
            _signal_pids(left, signals.SIGKILL)
            if not left and not _group_alive(pgid):
                return
            await asyncio.sleep(0.02)


# -- reading pipes -----------------------------------------------------------------------------------


class _PipeReader(asyncio.Protocol):
    def __init__(self, sink: Callable[[bytes], None], on_data: Callable[[], None]) -> None:
        self.sink = sink
        self.on_data = on_data
        self.eof = asyncio.get_running_loop().create_future()
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.sink(data)
        self.on_data()

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass
class _Outcome:
    returncode: int | None
    timed_out: bool
    cancelled: bool
    duration: float


async def _supervise(argv: Sequence[str], *, cwd: Path | str | None, env: dict[str, str], timeout: float | None,
                     signal: AbortSignal | None, sinks: Sequence[Callable[[bytes], None]], merge: bool,
                     stdin_data: bytes | None, kill_grace: float) -> _Outcome:
    """Start ``argv``, feed its output to ``sinks`` (one, or stdout and stderr), and supervise it."""
    if signal is not None and signal.aborted:
        return _Outcome(None, False, True, 0.0)
    if cwd is not None and not os.path.isdir(cwd):
        raise ProcessStartError(f"Working directory does not exist: {cwd}")
    marker = uuid.uuid4().hex
    env = {**env, MARKER_VAR: marker}
    loop = asyncio.get_running_loop()
    pipes = [os.pipe() for _ in range(1 if merge else 2)]
    inodes = {os.fstat(r).st_ino for r, _ in pipes}
    last_data = [time.monotonic()]

    def touched() -> None:
        last_data[0] = time.monotonic()

    readers: list[_PipeReader] = []
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE if stdin_data is not None else
                asyncio.subprocess.DEVNULL, stdout=pipes[0][1], stderr=pipes[-1][1], start_new_session=True)
        except OSError as e:
            raise ProcessStartError(f"Cannot start {argv[0]}: {e.strerror or e}") from e
    finally:
        for _, w in pipes:
            os.close(w)
    try:
        for (r, _), sink in zip(pipes, sinks):
            reader = _PipeReader(sink, touched)
            await loop.connect_read_pipe(lambda reader=reader: reader, os.fdopen(r, "rb", 0))
            readers.append(reader)
    except BaseException:
        for r, _ in pipes[len(readers):]:
            with contextlib.suppress(OSError):
                os.close(r)
        raise
    tree = _Tree(proc, f"{MARKER_VAR}={marker}".encode(), inodes)
    started = time.monotonic()
    try:
        if stdin_data is not None and proc.stdin is not None:
            loop.create_task(_feed(proc.stdin, stdin_data))
        timed_out, cancelled = await _wait(tree, timeout, signal, kill_grace)
        await _drain(tree, readers, last_data, after_kill=timed_out or cancelled)
    except BaseException:  # our caller was cancelled: never leave the tree behind
        await tree.kill()
        raise
    finally:
        for reader in readers:
            reader.close()
    return _Outcome(proc.returncode, timed_out, cancelled, time.monotonic() - started)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(OSError, RuntimeError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def _wait(tree: _Tree, timeout: float | None, signal: AbortSignal | None,
                kill_grace: float) -> tuple[bool, bool]:
    wait_task = asyncio.ensure_future(tree.proc.wait())
    abort_task = asyncio.ensure_future(signal.wait()) if signal is not None else None
    try:
        waiting = {wait_task} | ({abort_task} if abort_task else set())
        await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if abort_task is not None:
            abort_task.cancel()
    if wait_task.done():
        return False, False
    cancelled = abort_task is not None and abort_task.done() and not abort_task.cancelled()
    await tree.terminate(kill_grace)
    await wait_task
    return not cancelled, cancelled


async def _drain(tree: _Tree, readers: list[_PipeReader], last_data: list[float], *, after_kill: bool) -> None:
    """Read what is left in the pipes; close them once idle, killing whatever still holds them."""
    eofs = [r.eof for r in readers]
    exited = time.monotonic()
    while not all(e.done() for e in eofs):
        now = time.monotonic()
        # Quiet time counts from the exit at the earliest: output that stopped before the exit says
        # nothing about a child that is still closing its copy of the pipe (on its way to setsid).
        if now - max(last_data[0], exited) >= EXIT_IDLE_GRACE or now - exited >= EXIT_MAX_GRACE:
            break
        await asyncio.wait(eofs, timeout=EXIT_IDLE_GRACE / 4)
    if all(e.done() for e in eofs) and not after_kill:
        return
    await tree.kill(pipe_holders_only=not after_kill)
    if not after_kill:
        _signal_group(tree.proc.pid, signals.SIGKILL)
    await asyncio.wait(eofs, timeout=0.2)


# -- run_process -------------------------------------------------------------------------------------


@dataclass
class ProcessResult:
    """The outcome of :func:`run_process`. ``exit_code`` is ``None`` when the process was stopped by
    a timeout or an abort; a process killed by a signal otherwise has ``128 + signal``."""

    args: list[str]
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_seconds: float = 0.0

    @property
    def killed(self) -> bool:
        return self.timed_out or self.cancelled

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class _Capped:
    def __init__(self, limit: int) -> None:
        self.data = bytearray()
        self.limit = limit
        self.truncated = False

    def __call__(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def _exit_code(outcome: _Outcome) -> int | None:
    if outcome.timed_out or outcome.cancelled or outcome.returncode is None:
        return None
    return outcome.returncode if outcome.returncode >= 0 else 128 - outcome.returncode


async def run_process(args: Sequence[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
                      timeout: float | None = None, signal: AbortSignal | None = None,
                      input: bytes | str | None = None, max_output_bytes: int = 10 * 1024 * 1024,
                      inherit_env: bool = True, kill_grace: float = KILL_GRACE) -> ProcessResult:
    """Run a program (no shell) under supervision and collect its stdout and stderr.

    :param args: the program and its arguments.
    :param env: variables added to the inherited (or, with ``inherit_env=False``, an empty) environment.
    :param timeout: seconds before the process tree is terminated; ``None`` for no limit.
    :param signal: an abort signal; when it fires the tree is terminated and ``cancelled`` is set.
    :param input: data written to stdin, which is then closed (stdin is closed at once without it).
    :param max_output_bytes: each stream keeps at most this much; the rest is dropped and flagged.
    :raises ProcessStartError: the program or the working directory does not exist.
    """
    out, err = _Capped(max_output_bytes), _Capped(max_output_bytes)
    data = input.encode() if isinstance(input, str) else input
    outcome = await _supervise(list(args), cwd=cwd, env=build_env(env, inherit=inherit_env), timeout=timeout,
                               signal=signal, sinks=[out, err], merge=False, stdin_data=data,
                               kill_grace=kill_grace)
    return ProcessResult(list(args), out.text(), err.text(), _exit_code(outcome), outcome.timed_out,
                         outcome.cancelled, out.truncated, err.truncated, outcome.duration)


# -- run_shell ---------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def sanitize_output(text: str) -> str:
    """Drop terminal escape sequences and control characters (tab, newline and CR stay)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROL.sub("", text)


class OutputCollector:
    """Collects a byte stream with bounded memory: everything while small, then head and tail
    windows, with the complete stream spilled to a temporary file once it is over the limits."""

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES, *,
                 spill_prefix: str = "pi-output", spill_dir: Path | str | None = None) -> None:
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.spill_prefix, self.spill_dir = spill_prefix, spill_dir
        self.full_cap = 4 * max_bytes
        self.full: bytearray | None = bytearray()
        self.head = bytearray()
        self.tail = bytearray()
        self.total_bytes = 0
        self.newlines = 0
        self.last_byte = b""
        self.spill_path: Path | None = None
        self._spill: Any = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    @property
    def total_lines(self) -> int:
        return self.newlines + (1 if self.total_bytes and self.last_byte != b"\n" else 0)

    @property
    def over_limits(self) -> bool:
        return self.total_bytes > self.max_bytes or self.total_lines > self.max_lines

    def feed(self, chunk: bytes) -> str:
        """Add a chunk; returns its decoded text (for streaming deltas)."""
        if not chunk:
            return ""
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.last_byte = chunk[-1:]
        if len(self.head) < self.max_bytes:
            self.head += chunk[: self.max_bytes - len(self.head)]
        self.tail += chunk
        if len(self.tail) > 2 * self.max_bytes:
            del self.tail[: len(self.tail) - 2 * self.max_bytes]
        if self.full is not None:
            self.full += chunk
        if self._spill is None and self.over_limits:
            self._open_spill()
        elif self._spill is not None:
            self._spill.write(chunk)
        if self.full is not None and len(self.full) > self.full_cap:
            self.full = None
        return self._decoder.decode(chunk)

    def _open_spill(self) -> None:
        fd, name = tempfile.mkstemp(prefix=f"{self.spill_prefix}-", suffix=".log", dir=self.spill_dir)
        self._spill = os.fdopen(fd, "wb")
        self.spill_path = Path(name)
        if self.full is None:  # cannot happen: the spill opens before the buffer is dropped
            raise RuntimeError("output collector lost data before spilling")
        self._spill.write(self.full)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def read_full(self, limit: int = 1024 * 1024) -> tuple[str, bool]:
        """The complete output if it is at most ``limit`` bytes, else its first and last halves
        around an omission note; the flag says whether anything was left out."""
        if self.full is not None and len(self.full) <= limit:
            return self.full.decode("utf-8", "replace"), False
        if self.spill_path is None:
            return "", False
        with open(self.spill_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= limit:
                return f.read().decode("utf-8", "replace"), False
            head = f.read(limit // 2)
            f.seek(size - (limit - limit // 2))
            tail = f.read()
        text_head = head.decode("utf-8", "ignore")
        start = next((i for i, b in enumerate(tail) if (b & 0xC0) != 0x80), len(tail))
        omitted = size - len(head) - len(tail)
        return f"{text_head}\n\n[... {omitted} bytes omitted ...]\n\n{tail[start:].decode('utf-8', 'replace')}", True

    def snapshot(self) -> HeadTail:
        """Head and tail of everything so far, within the limits (sanitised for a model)."""
        if self.full is not None:
            return truncate_head_tail(sanitize_output(self.full.decode("utf-8", "replace")),
                                      self.max_lines, self.max_bytes)
        hl, hb, tl, tb = head_tail_budgets(self.max_lines, self.max_bytes)
        head, head_n = take_head(sanitize_output(self.head.decode("utf-8", "ignore")), hl, hb)
        start = 0
        while start < len(self.tail) and (self.tail[start] & 0xC0) == 0x80:
            start += 1
        tail_text = sanitize_output(self.tail[start:].decode("utf-8", "replace"))
        tail, tail_n = take_tail(tail_text, tl, tb, first_is_partial=True)
        return build_head_tail(head, head_n, tail, tail_n, self.total_lines, self.total_bytes,
                               self.max_lines, self.max_bytes)


@dataclass
class ShellResult:
    """The outcome of :func:`run_shell`.

    ``output`` is the model-sized text (head and tail around a marker when over the limits);
    ``full_output_path`` holds everything when it was over them. ``exit_code`` is ``None`` when the
    command was stopped by the timeout or an abort.
    """

    command: str
    output: str
    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    truncation: HeadTail | None = None
    full_output_path: Path | None = None
    duration_seconds: float = 0.0
    timeout: float | None = None
    collector: OutputCollector | None = field(default=None, repr=False)

    @property
    def truncated(self) -> bool:
        return bool(self.truncation and self.truncation.truncated)

    def to_rpc(self) -> dict[str, Any]:
        """The RPC ``bash`` response data: ``{output, exitCode?, cancelled, truncated, fullOutputPath?}``;
        like pi, no ``exitCode`` for a cancelled command or one that has none (killed by a signal)."""
        cancelled = self.cancelled or self.timed_out
        data: dict[str, Any] = {"output": self.output}
        if not cancelled and self.exit_code is not None:
            data["exitCode"] = self.exit_code
        data.update(cancelled=cancelled, truncated=self.truncated)
        if self.full_output_path is not None:
            data["fullOutputPath"] = str(self.full_output_path)
        return data


async def run_shell(command: str, *, cwd: Path | str, env: Mapping[str, str] | None = None,
                    timeout: float | None = None, signal: AbortSignal | None = None,
                    on_output: Callable[[str], Any] | None = None, shell: str | None = None,
                    max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES,
                    spill_prefix: str = "pi-bash", kill_grace: float = KILL_GRACE,
                    collector: OutputCollector | None = None) -> ShellResult:
    """Run ``command`` with ``<shell> -c`` under supervision, stdout and stderr merged in order.

    :param on_output: called with each decoded piece of output as it arrives (streaming deltas).
    :param collector: supply one to take snapshots while the command runs (the bash tool's updates).
    Other parameters are those of :func:`run_process`; ``max_lines``/``max_bytes`` bound ``output``.
    """
    collector = collector or OutputCollector(max_lines, max_bytes, spill_prefix=spill_prefix)

    def sink(chunk: bytes) -> None:
        text = collector.feed(chunk)
        if on_output is not None and text:
            on_output(text)

    try:
        outcome = await _supervise([shell or default_shell(), "-c", command], cwd=cwd, env=build_env(env),
                                   timeout=timeout, signal=signal, sinks=[sink], merge=True, stdin_data=None,
                                   kill_grace=kill_grace)
    finally:
        collector.close()
    snap = collector.snapshot()
    return ShellResult(command, snap.text(), _exit_code(outcome), outcome.timed_out, outcome.cancelled,
                       snap, collector.spill_path, outcome.duration, timeout, collector)


__all__ = ["MARKER_VAR", "NONINTERACTIVE_ENV", "OutputCollector", "ProcessResult", "ProcessStartError",
           "ShellConfig", "ShellResult", "build_env", "default_shell", "run_process", "run_shell", "sanitize_output"]
