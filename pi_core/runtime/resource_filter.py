"""Which skills, prompt templates, themes and extension files the settings switch off.

pi's top-level resource arrays (``skills``, ``prompts``, ``themes``, ``extensions``) hold paths and filter
entries side by side: ``!glob`` excludes, ``+path`` forces one in, ``-path`` forces one out (``pi config``
writes the last two). Each settings file filters what belongs to its own scope, with paths relative to
that file's directory:

* resources found in the scope's own directories (``<agent dir>/skills``, ``~/.agents/skills`` for the
  user; ``.pi/skills``, the ``.agents/skills`` up to the git root for the project) are on unless an
  ``!``/``-`` entry turns them off;
* resources reached through the file's plain path entries are filtered by all of the file's patterns
  (plain globs narrow, ``!`` excludes, ``+`` and ``-`` win last), as pi does.

Anything else (``--skill``, plugin-discovered paths, packages with their own filters) is always on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..packages.filters import enabled_by_overrides, matches_exact, matches_glob, split
from .resources import _up_to_git_root
from .settings import Settings, _is_pattern, resolve_settings_path

ResourceKind = Literal["skills", "prompts", "themes", "extensions"]


@dataclass(frozen=True)
class _ScopeRules:
    base: Path
    entries: tuple[str, ...]
    #: ``(directory, base)``: auto-discovered directories and the directory their entries are relative to.
    auto_dirs: tuple[tuple[Path, Path], ...]
    plain: tuple[Path, ...] = field(default=())


class ResourceFilter:
    """Decides, per file, whether the settings leave a resource of one kind on."""

    def __init__(self, settings: Settings, kind: ResourceKind, cwd: Path, agent_dir: Path,
                 home: Path | None = None) -> None:
        home_dir = home if home is not None else Path.home()
        project = cwd / ".pi"
        user_auto = [(agent_dir / kind, agent_dir)]
        project_auto = [(project / kind, project)] if settings.trusted else []
        if kind == "skills":
            user_agents = home_dir / ".agents"
            user_auto.append((user_agents / "skills", user_agents))
            if settings.trusted:
                project_auto += [(d / ".agents" / "skills", d / ".agents") for d in _up_to_git_root(cwd)
                                 if d / ".agents" != user_agents]
        self._scopes = [self._rules(settings, "project", project, kind, project_auto),
                        self._rules(settings, "global", agent_dir, kind, user_auto)]

    @staticmethod
    def _rules(settings: Settings, scope: Literal["project", "global"], base: Path, kind: str,
               auto: list[tuple[Path, Path]]) -> _ScopeRules:
        raw = settings.scope_data(scope).get(kind, [])
        entries = tuple(e for e in raw if isinstance(e, str))
        plain = tuple(resolve_settings_path(e, base) for e in entries if not _is_pattern(e))
        return _ScopeRules(base, entries, tuple(auto), plain)

    @property
    def active(self) -> bool:
        """Whether any settings file filters this kind at all (when not, every file is on)."""
        return any(_is_pattern(e) for rules in self._scopes for e in rules.entries)

    def enabled(self, path: Path) -> bool:
        path = Path(os.path.abspath(path))
        for rules in self._scopes:
            for directory, base in rules.auto_dirs:
                if path.is_relative_to(directory):
                    return enabled_by_overrides(path, rules.entries, base)
        for rules in self._scopes:
            if any(path == p or path.is_relative_to(p) for p in rules.plain):
                return _on_by_patterns(path, [e for e in rules.entries if _is_pattern(e)], rules.base)
        return True


def _on_by_patterns(path: Path, patterns: list[str], base: Path) -> bool:
    include, exclude, force_in, force_out = split(patterns)
    enabled = (not include or matches_glob(path, include, base)) and not (exclude and matches_glob(path, exclude, base))
    if force_in and matches_exact(path, force_in, base):
        enabled = True
    if force_out and matches_exact(path, force_out, base):
        enabled = False
    return enabled


__all__ = ["ResourceFilter", "ResourceKind"]
