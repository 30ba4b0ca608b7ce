"""The project's files and folders for ``@path`` completion, listed as pi lists them: ``fd`` when it is
installed (it honours ``.gitignore``), else ``git ls-files`` (tracked and untracked, ignored left out),
else a walk that skips hidden and dependency folders. The listing is capped, made in the background when
the editor opens and renewed in the background, so typing after ``@`` never waits for a walk of the tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

MAX_ENTRIES = 20_000
FRESH_SECONDS = 10.0
LIST_TIMEOUT = 5.0
_SKIPPED = {"node_modules", "__pycache__", ".git"}


class ProjectFiles:
    """Relative paths under ``cwd()`` (folders end in ``/``). A listing older than :data:`FRESH_SECONDS` is
    still answered with while a new one is made in a thread, so completing never waits for a walk once
    :meth:`warm` (or a first answer) has listed the project."""

    def __init__(self, cwd: Callable[[], Path], limit: int = MAX_ENTRIES) -> None:
        self._cwd = cwd
        self.limit = limit
        self._lock = threading.Lock()
        self._listed: tuple[Path, float, list[str]] | None = None
        self._refreshing = False

    def warm(self) -> None:
        """List the project in the background now (the editor is opening)."""
        self._refresh_soon(Path(self._cwd()))

    def entries(self) -> list[str]:
        root = Path(self._cwd())
        listed = self._listed
        if listed is None or listed[0] != root:
            return self._list(root)
        if time.monotonic() - listed[1] >= FRESH_SECONDS:
            self._refresh_soon(root)
        return listed[2]

    def _list(self, root: Path) -> list[str]:
        with self._lock:  # a listing under way for this folder serves this call too
            listed = self._listed
            if listed is not None and listed[0] == root and time.monotonic() - listed[1] < FRESH_SECONDS:
                return listed[2]
            entries = list_project(root, self.limit)
            self._listed = (root, time.monotonic(), entries)
            return entries

    def _refresh_soon(self, root: Path) -> None:
        if self._refreshing:
            return
        self._refreshing = True

        def work() -> None:
            try:
                with self._lock:
                    self._listed = (root, time.monotonic(), list_project(root, self.limit))
            finally:
                self._refreshing = False

        threading.Thread(target=work, name="pi-project-files", daemon=True).start()


def list_project(root: Path, limit: int = MAX_ENTRIES) -> list[str]:
    """Files and folders under ``root``, relative, folders ending in ``/``, at most ``limit``."""
    for lister in (_with_fd, _with_git):
        found = lister(root, limit)
        if found is not None:
            return found
    return _walk(root, limit)


def _run(argv: list[str], root: Path) -> str | None:
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, timeout=LIST_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _with_fd(root: Path, limit: int) -> list[str] | None:
    fd = shutil.which("fd") or shutil.which("fdfind")  # Debian and Ubuntu install it as fdfind
    if fd is None:
        return None
    common = [fd, "--hidden", "--follow", "--exclude", ".git", "--color", "never", "--max-results", str(limit),
              "--print0"]
    folders = _run([*common, "--type", "d"], root)
    files = _run([*common, "--type", "f"], root)
    if folders is None or files is None:
        return None
    named = [f"{p.rstrip('/')}/" for p in folders.split("\0") if p] + [p for p in files.split("\0") if p]
    return [p.removeprefix("./") for p in named][:limit]


def _with_git(root: Path, limit: int) -> list[str] | None:
    if shutil.which("git") is None:
        return None
    out = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], root)
    if out is None:
        return None
    files = [p for p in out.split("\0") if p]
    return _with_folders(files, limit)


def _with_folders(files: Iterable[str], limit: int) -> list[str]:
    folders: dict[str, None] = {}
    out: list[str] = []
    for file in files:
        parts = file.split("/")
        for depth in range(1, len(parts)):
            folders.setdefault("/".join(parts[:depth]) + "/")
        out.append(file)
        if len(out) + len(folders) >= limit:
            break
    return [*folders, *out][:limit]


def _walk(root: Path, limit: int) -> list[str]:
    out: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        base = os.path.relpath(directory, root)
        prefix = "" if base == "." else base.replace(os.sep, "/") + "/"
        out.extend(f"{prefix}{d}/" for d in dirs)
        out.extend(f"{prefix}{f}" for f in sorted(files))
        if len(out) >= limit:
            return out[:limit]
    return out


__all__ = ["ProjectFiles", "list_project"]
