"""File search for the grep and find tools: ripgrep when installed, the same results without it.

Both backends honour ignore files the same way (see :mod:`pi_core.toolkit.ignore`), include hidden
files, skip ``.git`` and symbolic links, and return results in path order (directory entries sorted
by name, depth first), so output does not depend on which backend ran or on timing. Choose the
backend with ``PI_SEARCH_BACKEND=ripgrep|python|auto`` (default ``auto``); ``PI_RG_PATH`` names a
ripgrep binary.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..ai.abort import AbortSignal
from .blocking import run_blocking
from .ignore import Overrides, inside_git_repo, walk

_COMMON = ["--no-config", "--hidden", "--no-ignore-global", "--no-messages", "--color=never"]


class SearchError(Exception):
    """A search that cannot run: bad pattern, missing path, ripgrep failure."""


def find_ripgrep() -> str | None:
    """``$PI_RG_PATH``, ``rg`` on PATH, or the one installed beside this Python (the ``ripgrep`` wheel)."""
    configured = os.environ.get("PI_RG_PATH")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    found = shutil.which("rg")
    if found:
        return found
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / "rg"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def use_ripgrep(prefer: bool | None = None) -> str | None:
    """The ripgrep binary to use, or ``None`` for the pure-Python backend."""
    if prefer is False:
        return None
    mode = os.environ.get("PI_SEARCH_BACKEND", "auto").lower()
    if prefer is None and mode == "python":
        return None
    rg = find_ripgrep()
    if rg is None and (prefer or mode == "ripgrep"):
        raise SearchError("ripgrep (rg) was requested but is not installed; pip install ripgrep")
    return rg


def _common(root: Path) -> list[str]:
    # Outside a repository ripgrep would ignore .gitignore files; make it honour them there too.
    return _COMMON if inside_git_repo(Path(os.path.realpath(root))) else [*_COMMON, "--no-require-git"]


def path_key(rel: str) -> tuple[str, ...]:
    """Sort key giving ripgrep's ``--sort path`` order."""
    return tuple(rel.split("/"))


# -- listing files -----------------------------------------------------------------------------------


async def list_files(root: Path, *, ripgrep: bool | None = None, signal: AbortSignal | None = None) -> list[str]:
    """Every file under ``root`` that ignore rules keep, as sorted relative POSIX paths."""
    rg = use_ripgrep(ripgrep)
    if rg is None:
        return await run_blocking(lambda: [rel for rel, is_dir in walk(root) if not is_dir], signal=signal, name="find")
    lines: list[str] = []
    out = bytearray()

    def sink(chunk: bytes) -> bool:
        out.extend(chunk)
        return True

    await _run_rg([rg, *_common(root), "--files", "--null", "-g", "!.git", "."], root, sink, signal)
    lines = [p.decode("utf-8", "surrogateescape") for p in bytes(out).split(b"\0") if p]
    return sorted((p[2:] if p.startswith("./") else p for p in lines), key=path_key)


async def _run_rg(argv: list[str], cwd: Path, sink: Callable[[bytes], bool], signal: AbortSignal | None) -> None:
    """Run ripgrep, feeding stdout chunks to ``sink`` until it returns False (then rg is stopped)."""
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    stopped = False
    remove = signal.add_callback(lambda: _kill(proc)) if signal else (lambda: None)
    try:
        err_task = asyncio.ensure_future(proc.stderr.read())
        while chunk := await proc.stdout.read(1 << 16):
            if not sink(chunk):
                stopped = True
                _kill(proc)
                break
        code = await proc.wait()
        err = (await err_task).decode("utf-8", "replace").strip()
    finally:
        remove()
        if proc.returncode is None:
            _kill(proc)
            await proc.wait()
    if signal is not None and signal.aborted:
        raise SearchError("Operation aborted")
    if not stopped and code not in (0, 1):
        raise SearchError(err or f"ripgrep exited with code {code}")


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


# -- searching contents ------------------------------------------------------------------------------


@dataclass
class GrepLine:
    """One line of :func:`grep` output: ``path`` relative to the searched root, 1-based ``line`` number, its
    ``text``, and ``is_match`` (false for a context line)."""

    path: str
    line: int
    text: str
    is_match: bool


@dataclass
class GrepResult:
    """What :func:`grep` found: the ``lines`` (matches and context, in path order), the number of
    ``matches``, whether the match ``limit_reached`` cut further matches off, and the ``backend`` that searched
    (``ripgrep`` or ``python``)."""

    lines: list[GrepLine] = field(default_factory=list)
    matches: int = 0
    limit_reached: bool = False
    backend: str = "python"


class _Collector:
    """Keeps lines until ``limit`` matches, then the last match's trailing context; notes whether
    any further match exists (that alone proves the limit cut results off)."""

    def __init__(self, limit: int, context: int) -> None:
        self.limit, self.context = limit, context
        self.result = GrepResult()
        self.window_end = 0
        self.last_path = ""

    def add(self, line: GrepLine) -> bool:
        """Returns False once nothing more is needed."""
        r = self.result
        if r.matches < self.limit:
            r.lines.append(line)
            if line.is_match:
                r.matches += 1
                if r.matches == self.limit:
                    self.window_end, self.last_path = line.line + self.context, line.path
            return True
        in_window = line.path == self.last_path and line.line <= self.window_end
        if in_window:
            r.lines.append(GrepLine(line.path, line.line, line.text, False))
        if line.is_match:
            r.limit_reached = True
        return not (r.limit_reached and not (in_window and line.line < self.window_end))


_RG_LINE = re.compile(rb"^(\d+)([:-])(.*)$", re.DOTALL)


def _rg_parser(collector: _Collector, single: str | None) -> Callable[[bytes], bool]:
    pending = bytearray()

    def feed(chunk: bytes) -> bool:
        pending.extend(chunk)
        *complete, rest = bytes(pending).split(b"\n")
        pending[:] = rest
        for raw in complete:
            path, sep, body = raw.partition(b"\0")
            m = _RG_LINE.match(body) if sep else None
            if m is None:
                continue
            rel = single or path.decode("utf-8", "surrogateescape").removeprefix("./")
            text = m.group(3).decode("utf-8", "replace").removesuffix("\r")
            if not collector.add(GrepLine(rel, int(m.group(1)), text, m.group(2) == b":")):
                return False
        return True

    return feed


def _rg_args(rg: str, root: Path, pattern: str, *, ignore_case: bool, literal: bool, context: int,
             glob: str | None, sort: bool) -> list[str]:
    args = [rg, *_common(root), "--no-heading", "--with-filename", "--line-number", "--null"]
    if ignore_case:
        args.append("--ignore-case")
    if literal:
        args.append("--fixed-strings")
    if context > 0:
        args += ["--context", str(context)]
    if glob:
        args += ["--glob", glob]
    args += ["--glob", "!.git"]
    if sort:
        args += ["--sort", "path"]
    return [*args, "--", pattern]


async def _grep_rg(rg: str, target: Path, pattern: str, limit: int, context: int, signal: AbortSignal | None,
                   sort: bool, **opts: object) -> GrepResult:
    collector = _Collector(limit, context)
    single = target.name if target.is_file() else None
    argv = _rg_args(rg, target, pattern, context=context, sort=sort, **opts)  # type: ignore[arg-type]
    argv.append(str(target) if single else ".")
    await _run_rg(argv, target.parent if single else target, _rg_parser(collector, single), signal)
    collector.result.backend = "ripgrep"
    return collector.result


def _compile(pattern: str, ignore_case: bool, literal: bool) -> re.Pattern[str]:
    try:
        return re.compile(re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        raise SearchError(f"Invalid regular expression {pattern!r}: {e}") from e


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def _file_lines(path: Path, rel: str, regex: re.Pattern[str], context: int) -> Iterator[GrepLine]:
    try:
        data = path.read_bytes()
    except OSError:
        return
    if b"\0" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return
    lines = _decode(data).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    hits = [i for i, line in enumerate(lines) if regex.search(line)]
    shown: set[int] = set()
    for i in hits:
        shown.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    hit_set = set(hits)
    for i in sorted(shown):
        yield GrepLine(rel, i + 1, lines[i].removesuffix("\r"), i in hit_set)


def _grep_python(target: Path, pattern: str, *, ignore_case: bool, literal: bool, context: int,
                 glob: str | None, limit: int, signal: AbortSignal | None) -> GrepResult:
    regex = _compile(pattern, ignore_case, literal)
    collector = _Collector(limit, context)
    if target.is_file():
        files: Iterator[tuple[Path, str]] = iter([(target, target.name)])
    else:
        overrides = Overrides.parse([glob, "!.git"] if glob else ["!.git"])
        files = ((target / rel, rel) for rel, is_dir in walk(target, overrides) if not is_dir)
    for path, rel in files:
        if signal is not None and signal.aborted:
            raise SearchError("Operation aborted")
        for line in _file_lines(path, rel, regex, context):
            if not collector.add(line):
                return collector.result
    return collector.result


async def grep(target: Path, pattern: str, *, ignore_case: bool = False, literal: bool = False, context: int = 0,
               glob: str | None = None, limit: int = 100, ripgrep: bool | None = None,
               signal: AbortSignal | None = None) -> GrepResult:
    """Search files under ``target`` (a directory or one file) for ``pattern`` (a regex unless
    ``literal``). Results come in path order; at most ``limit`` matches plus the last one's context."""
    if not target.exists():
        raise SearchError(f"Path not found: {target}")
    opts = dict(ignore_case=ignore_case, literal=literal, glob=glob)
    rg = use_ripgrep(ripgrep)
    if rg is None:
        return await run_blocking(lambda: _grep_python(target, pattern, context=context, limit=limit, signal=signal,
                                                       **opts), signal=signal, name="grep")  # type: ignore[arg-type]
    # Unsorted first (parallel, fast); only when the limit cuts results off does order matter, and
    # then a sorted run (which also stops early) decides which matches are shown.
    result = await _grep_rg(rg, target, pattern, limit, context, signal, False, **opts)
    if result.limit_reached:
        return await _grep_rg(rg, target, pattern, limit, context, signal, True, **opts)
    order = {p: i for i, p in enumerate(sorted({ln.path for ln in result.lines}, key=path_key))}
    result.lines.sort(key=lambda ln: (order[ln.path], ln.line))
    return result


__all__ = ["GrepLine", "GrepResult", "SearchError", "find_ripgrep", "grep", "list_files", "path_key",
           "use_ripgrep"]
