"""Putting packages in place: pip (or uv) into pi's own environment, git clones, nothing for local dirs.

Python packages (PyPI names, wheels, local or cloned projects with ``pyproject.toml``) are installed
into the interpreter that runs ``pi`` — never another Python on ``PATH`` — with ``uv pip`` when ``uv``
is on ``PATH`` (faster, same result; ``PI_PACKAGE_INSTALLER=pip`` opts out) and pip otherwise. Git
sources are cloned where pi clones them (``<agent dir>/git/<host>/<path>``, or ``.pi/git/...`` for a
project) and then installed with pip when they are Python projects; other clones, like local
directories, are read in place.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .layout import is_python_project
from .resolve import Scope, git_root, project_name
from .sources import PackageSource

Output = Callable[[str], None]


class InstallError(Exception):
    """An install, update or removal failed; the message says which step and why."""


def installer() -> list[str]:
    """The command that installs into pi's environment: ``uv pip`` when available, else ``python -m pip``."""
    choice = os.environ.get("PI_PACKAGE_INSTALLER", "").strip().lower()
    uv = None if choice == "pip" else shutil.which("uv")
    if choice == "uv" and uv is None:
        raise InstallError("PI_PACKAGE_INSTALLER=uv, but uv is not on PATH")
    return [uv, "pip"] if uv else [sys.executable, "-m", "pip"]


def pip(subcommand: str, args: Sequence[str]) -> int:
    """Run ``pip <subcommand> args`` for pi's interpreter, streaming its output; returns the exit code."""
    command = installer()
    if command[-1] == "pip" and command[0] != sys.executable:  # uv: name the interpreter explicitly
        args = ["--python", sys.executable, *[a for a in args if a not in ("--yes", "-y")]]
    return subprocess.call([*command, subcommand, *args], stdout=sys.stderr.fileno())


def _git(args: Sequence[str], cwd: Path | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "GIT_SSH_COMMAND":
           os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise InstallError("git is not installed (needed for git packages)") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"git {args[0]} took longer than 10 minutes") from exc
    if done.returncode != 0:
        raise InstallError(f"git {' '.join(args)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def git_head(directory: Path) -> str | None:
    try:
        return _git(["rev-parse", "HEAD"], directory)
    except InstallError:
        return None


@dataclass
class Installer:
    """Installs, updates and removes package sources for one project and agent dir."""

    cwd: Path
    agent_dir: Path
    pip_args: Sequence[str] = ()
    out: Output = field(default=print)

    def location(self, source: PackageSource, scope: Scope) -> Path | None:
        if source.kind == "git":
            return source.install_dir(git_root(scope, self.cwd, self.agent_dir))
        return source.path

    # -- install -------------------------------------------------------------------------------

    def install(self, source: PackageSource, scope: Scope, *, editable: bool = False) -> None:
        if source.kind == "pypi":
            self._pip_install([source.requirement or source.text])
        elif source.kind == "local":
            self._install_local(source, editable)
        else:
            self._install_git(source, scope)

    def _pip_install(self, targets: Sequence[str], *extra: str) -> None:
        code = pip("install", [*self.pip_args, *extra, *targets])
        if code != 0:
            raise InstallError(f"pip install {' '.join(targets)} failed (exit {code}); nothing was recorded")

    def _install_local(self, source: PackageSource, editable: bool) -> None:
        path = source.path
        if path is None or not path.exists():
            raise InstallError(f"{source.text}: path does not exist ({path})")
        if path.is_file() and path.suffix != ".py":
            self._pip_install([str(path)])  # a built wheel or sdist
        elif path.is_dir() and is_python_project(path):
            self._pip_install([str(path)], *(["-e"] if editable else []))
        elif editable:
            self.out(f"note: {source.text} is read in place (no pyproject.toml); -e changes nothing")

    def _install_git(self, source: PackageSource, scope: Scope) -> None:
        target = self.location(source, scope)
        assert target is not None and source.url
        if target.exists():
            self._reconcile(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            if scope == "project":
                _ignore_all(git_root(scope, self.cwd, self.agent_dir))
            try:
                _git(["clone", "--quiet", source.url, str(target)])
                if source.ref:
                    _git(["checkout", "--quiet", source.ref], target)
            except InstallError:
                shutil.rmtree(target, ignore_errors=True)
                raise
        if is_python_project(target):
            self._pip_install([str(target)])

    def _reconcile(self, source: PackageSource, target: Path) -> None:
        """Bring a clone to its ref (fetched again: a branch moves) or to its branch's upstream."""
        if source.ref:
            _git(["fetch", "--quiet", "origin", source.ref], target)
            wanted = _git(["rev-parse", "FETCH_HEAD^{commit}"], target)
        else:
            _git(["fetch", "--quiet", "origin"], target)
            wanted = _git(["rev-parse", "@{upstream}^{commit}"], target)
        if git_head(target) != wanted:
            _git(["reset", "--quiet", "--hard", wanted], target)
            _git(["clean", "-fdxq"], target)

    # -- update --------------------------------------------------------------------------------

    def update(self, source: PackageSource, scope: Scope) -> tuple[str | None, str | None] | None:
        """Bring one package up to date; returns ``(before, after)`` when it changed, ``None`` if not.

        Exact PyPI pins stay where they are; git packages are reconciled with their ref (a tag or
        commit stays, a branch moves to its tip) or their branch's upstream.
        """
        if source.kind == "pypi":
            if source.pinned:
                return None
            name = source.name or ""
            before = _version(name)
            self._pip_install([source.requirement or name], "--upgrade")
            after = _version(name)
            return (before, after) if before != after else None
        if source.kind == "local":
            if source.path is not None and (source.path.is_file() and source.path.suffix != ".py"
                                            or is_python_project(source.path)):
                name = project_name(source.path)
                if name and _is_editable(name):
                    return None  # an editable install already runs the files on disk
                self._install_local(source, editable=False)
            return None
        target = self.location(source, scope)
        assert target is not None
        if not target.exists():
            self._install_git(source, scope)
            return (None, git_head(target))
        before = git_head(target)
        self._reconcile(source, target)
        after = git_head(target)
        if before != after and is_python_project(target):
            self._pip_install([str(target)])
        return (before, after) if before != after else None

    # -- remove --------------------------------------------------------------------------------

    def remove(self, source: PackageSource, scope: Scope) -> None:
        name: str | None = None
        if source.kind == "pypi":
            name = source.name
        elif source.kind == "local" and source.path is not None and source.path.exists():
            name = project_name(source.path) if (source.path.is_file() or is_python_project(source.path)) else None
        target = self.location(source, scope) if source.kind == "git" else None
        if target is not None and target.exists():
            name = project_name(target) if is_python_project(target) else None
        if name and _version(name) is not None:
            code = pip("uninstall", ["--yes", name])
            if code != 0:
                raise InstallError(f"pip uninstall {name} failed (exit {code})")
        if target is not None and target.exists():
            shutil.rmtree(target)
            _prune_empty(target.parent, git_root(scope, self.cwd, self.agent_dir))


def _version(name: str) -> str | None:
    """The installed version, read fresh (the running process may have cached older metadata)."""
    code = "import importlib.metadata as m, sys\ntry: print(m.version(sys.argv[1]))\nexcept m.PackageNotFoundError: pass"
    done = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True)
    return done.stdout.strip() or None


def _is_editable(name: str) -> bool:
    from importlib import metadata

    try:
        text = metadata.distribution(name).read_text("direct_url.json") or ""
    except metadata.PackageNotFoundError:
        return False
    return '"editable": true' in text.replace("'", '"')


def _ignore_all(directory: Path) -> None:
    """A project's clone folder gets a ``.gitignore`` so the clones are not committed (as pi does)."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n!.gitignore\n", encoding="utf-8")


def _prune_empty(directory: Path, root: Path) -> None:
    root = root.resolve()
    current = directory.resolve()
    while current != root and current.is_relative_to(root):
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent


__all__ = ["InstallError", "Installer", "git_head", "installer", "pip"]
