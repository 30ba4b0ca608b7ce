"""The resources pi finds by itself (outside packages), for ``pi config``: listed with their state, and
switched on or off through the owning settings file's top-level arrays (``-path`` / ``+path``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..runtime.resource_filter import ResourceFilter, ResourceKind
from ..runtime.settings import Settings, SettingsError, write_setting
from . import filters

LocalScope = Literal["user", "project"]
KINDS: tuple[ResourceKind, ...] = ("extensions", "skills", "prompts", "themes")
BUILTIN = "builtin:"


@dataclass(frozen=True)
class LocalResource:
    """One discovered file. ``entry`` is how its settings file names it (relative to ``base``)."""

    scope: LocalScope
    kind: ResourceKind
    path: Path
    entry: str
    label: str
    enabled: bool

    def matches(self, name: str) -> bool:
        """Whether ``name`` (as a user types it) means this resource: its entry, label or file path."""
        wanted = name.strip().rstrip("/")
        stem = self.entry.removesuffix("/SKILL.md")
        return wanted in (self.entry, stem, self.label, str(self.path)) or stem.endswith("/" + wanted)


def local_resources(cwd: Path, agent_dir: Path, *, trusted: bool, home: Path | None = None) -> list[LocalResource]:
    """The user's resources, then the project's (only when ``trusted``), each kind in pi's order."""
    settings = Settings.load(cwd, agent_dir, trusted=trusted)
    home_dir = home if home is not None else Path.home()
    found: list[LocalResource] = []
    for kind in KINDS:
        rules = ResourceFilter(settings, kind, cwd, agent_dir, home=home_dir)
        for scope, directory, base, root_files in _roots(kind, cwd, agent_dir, home_dir, trusted):
            for path in _files(kind, directory, root_files):
                entry = _entry(path, base, absolute=base.name == ".agents")
                found.append(LocalResource(scope, kind, path, entry, _label(path), rules.enabled(path)))
    return found


def builtin_extensions(cwd: Path, agent_dir: Path, *, trusted: bool) -> list[LocalResource]:
    """pi's built-in extensions that this installation has, per scope: the user file's switch (on unless
    ``-builtin:<name>``), and in a trusted project the state there (its own switch, else the user's)."""
    from ..entry_points import scan_entry_points
    from ..extensions.manager import BUILTIN_EXTENSIONS

    def norm(name: str) -> str:
        return name.replace("_", "-")

    present = sorted({norm(s.name) for s in scan_entry_points() if s.source == "builtin"}
                     & {norm(n) for n in BUILTIN_EXTENSIONS})
    user = Settings.load(cwd, agent_dir, trusted=False).builtin_extension_switches()
    found = [LocalResource("user", "extensions", Path(BUILTIN + name), BUILTIN + name, name,
                           user.get(name, True)) for name in present]
    if trusted:
        both = Settings.load(cwd, agent_dir, trusted=True).builtin_extension_switches()
        found += [LocalResource("project", "extensions", Path(BUILTIN + name), BUILTIN + name, name,
                                both.get(name, True)) for name in present]
    return found


def switch(resource: LocalResource, enabled: bool, cwd: Path, agent_dir: Path) -> Path:
    """Write ``+entry`` / ``-entry`` into the settings file that owns ``resource``; returns that file."""
    path = (cwd / ".pi" if resource.scope == "project" else agent_dir) / "settings.json"
    settings = Settings.load(cwd, agent_dir, trusted=resource.scope == "project")
    current = settings.scope_data("project" if resource.scope == "project" else "global").get(resource.kind, [])
    entries = filters.toggle([e for e in current if isinstance(e, str)], resource.entry, enabled)
    write_setting(path, resource.kind, entries, scope="project" if resource.scope == "project" else "global")
    return path


def _roots(kind: ResourceKind, cwd: Path, agent_dir: Path, home: Path,
           trusted: bool) -> list[tuple[LocalScope, Path, Path, bool]]:
    """``(scope, directory, base, root_files)`` for each place pi looks for ``kind`` on its own."""
    project = cwd / ".pi"
    roots: list[tuple[LocalScope, Path, Path, bool]] = [("user", agent_dir / kind, agent_dir, True)]
    if kind == "skills":
        roots.append(("user", home / ".agents" / "skills", home / ".agents", False))
    if trusted:
        roots.append(("project", project / kind, project, True))
        if kind == "skills":
            from ..runtime.resources import _up_to_git_root

            roots += [("project", d / ".agents" / "skills", d / ".agents", False) for d in _up_to_git_root(cwd)
                      if d / ".agents" != home / ".agents"]
    return roots


def _files(kind: ResourceKind, directory: Path, root_files: bool) -> list[Path]:
    if not directory.is_dir():
        return []
    if kind == "skills":
        from ..runtime.resources import skill_files

        return skill_files(directory, root_files=root_files)
    if kind == "extensions":
        from ..extensions.discovery import extension_files

        return extension_files(directory)
    suffix = ".md" if kind == "prompts" else ".json"
    return sorted(p for p in directory.iterdir() if p.suffix == suffix and p.is_file() and not p.name.startswith("."))


def _entry(path: Path, base: Path, *, absolute: bool) -> str:
    # ~/.agents entries would be read relative to ~/.agents but sit in the agent dir's file: absolute is exact
    return path.as_posix() if absolute else Path(os.path.relpath(path, base)).as_posix()


def _label(path: Path) -> str:
    return path.parent.name if path.name in ("SKILL.md", "__init__.py") else path.stem


__all__ = ["KINDS", "LocalResource", "SettingsError", "builtin_extensions", "local_resources", "switch"]
