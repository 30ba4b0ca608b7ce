"""``pi -e SOURCE``: a package fetched for one run, never recorded in settings.

Fetched under ``<agent dir>/tmp/extensions/`` and reused by later runs: a git source is cloned (and
refreshed on each run unless its ref is a commit hash or ``PI_OFFLINE`` is set; a failed refresh keeps
the cached copy, as pi does), a Python package is installed there with ``pip install --target`` and
that directory is put on ``sys.path`` for this run, so its entry points and resources are found.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from .install import InstallError, Installer, pip
from .layout import is_python_project
from .resolve import git_root, project_name
from .sources import PackageSource, SourceError, parse_source

_PREFIXES = ("pypi:", "git:", "git+", "https://", "http://", "ssh://", "git://", "file://", "git@")


def is_package_source(text: str) -> bool:
    """Whether a ``-e`` value names a package rather than one extension file."""
    if text.startswith(_PREFIXES):
        return True
    path = Path(os.path.expanduser(text))
    return path.is_dir() and not (path / "__init__.py").is_file()


def _site_dir(agent_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return agent_dir / "tmp" / "extensions" / "site" / digest


def fetch(texts: list[str], cwd: Path, agent_dir: Path) -> list[tuple[PackageSource, Path]]:
    """Fetch (or reuse) each source; returns ``(source, location)`` pairs. Raises :class:`InstallError`."""
    fetched: list[tuple[PackageSource, Path]] = []
    installer = Installer(cwd, agent_dir, out=lambda text: print(text, file=sys.stderr))
    for text in texts:
        try:
            source = parse_source(text, cwd)
        except SourceError as exc:
            raise InstallError(str(exc)) from exc
        if source.kind == "local":
            if source.path is None or not source.path.exists():
                raise InstallError(f"-e {text}: path does not exist")
            location = source.path
            if is_python_project(location) or location.suffix == ".whl":
                location = _pip_target(f"local:{location}:{_mtime(location)}", str(location), agent_dir)
                source = _as_dist(source, project_name(source.path))
        elif source.kind == "pypi":
            location = _pip_target(f"pypi:{source.requirement}", source.requirement or text, agent_dir)
        else:
            location = _git(installer, source, agent_dir)
            if location.parent.name == "site":
                source = _as_dist(source, _cloned_name.pop(location, None))
        fetched.append((source, location))
    if fetched:
        from ..entry_points import clear_entry_point_cache

        clear_entry_point_cache()
    return fetched


def _as_dist(source: PackageSource, name: str | None) -> PackageSource:
    """A package installed with pip is found by its distribution name, whatever its source was."""
    return PackageSource(source.text, "pypi", name=name or source.text, requirement=name or source.text)


_cloned_name: dict[Path, str | None] = {}


def _mtime(path: Path) -> int:
    return int(max((p.stat().st_mtime for p in [path, *path.rglob("*.py")] if p.exists()), default=0))


def _pip_target(key: str, requirement: str, agent_dir: Path) -> Path:
    target = _site_dir(agent_dir, key)
    if not (target / ".complete").exists():
        target.mkdir(parents=True, exist_ok=True)
        if pip("install", ["--target", str(target), "--upgrade", requirement]) != 0:
            raise InstallError(f"-e {requirement}: pip install failed")
        (target / ".complete").write_text("")
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    return target


def _git(installer: Installer, source: PackageSource, agent_dir: Path) -> Path:
    root = git_root("temporary", installer.cwd, agent_dir)
    suffix = hashlib.sha256((source.ref or "").encode()).hexdigest()[:8]
    clone = (root / source.host / source.repo_path).with_name(f"{Path(source.repo_path).name}@{suffix}")
    fresh = not clone.exists()
    if fresh:
        clone.parent.mkdir(parents=True, exist_ok=True)
        from .install import _git as run_git

        run_git(["clone", "--quiet", source.url or "", str(clone)])
        if source.ref:
            run_git(["checkout", "--quiet", source.ref], clone)
    elif not os.environ.get("PI_OFFLINE") and not (source.ref and re.fullmatch(r"[0-9a-f]{7,40}", source.ref)):
        try:
            installer._reconcile(source, clone)
        except InstallError as exc:
            print(f"pi: could not refresh {source.text} ({exc}); using the cached copy", file=sys.stderr)
    if is_python_project(clone):
        target = _pip_target(f"git:{clone}:{_head(clone)}", str(clone), agent_dir)
        _cloned_name[target] = project_name(clone)
        return target
    return clone


def _head(clone: Path) -> str:
    from .install import git_head

    return git_head(clone) or ""


__all__ = ["fetch", "is_package_source"]
