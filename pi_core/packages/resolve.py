"""Which packages a session has and what each one contributes, from settings and the environment.

Packages come from the settings ``packages`` lists — the project's first (only in a trusted project),
then the user's; for the same package the project entry wins — and from Python distributions in
pi's environment that declare pi entry points without being listed (installed with pip directly).
A project entry with ``"autoload": false`` is pi's exception: it does not replace the user's entry of
the same package but filters it for this project (a delta); without a user entry it loads only what its
own patterns switch on.
Resolving reads files and package metadata only: nothing is imported, installed or fetched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..safejson import parse_json
from . import filters
from .layout import (
    FOREIGN_EXTENSIONS,
    RESOURCE_GROUPS,
    RESOURCE_KINDS,
    ResourceKind,
    collect,
    directory_resources,
    is_python_project,
    module_path,
)
from .sources import PackageSource, SourceError, normalise, parse_source

if TYPE_CHECKING:
    from ..events import ResourcePaths

Scope = Literal["user", "project", "temporary", "environment"]
SETTINGS_FILE = "settings.json"


@dataclass
class PackageResource:
    """One thing a package contributes. ``name``: a plugin's entry-point name, else the path shown."""

    kind: ResourceKind
    name: str
    path: Path | None = None
    enabled: bool = True
    note: str | None = None


@dataclass
class ResolvedPackage:
    """A package and its resources, as the settings and the disk say now."""

    source: PackageSource
    scope: Scope
    entry: str | dict[str, Any]
    root: Path | None = None
    """Where its files are (resource filters are relative to it)."""
    dist: str | None = None
    version: str | None = None
    installed: bool = False
    resources: list[PackageResource] = field(default_factory=list)
    problem: str | None = None
    location: Path | None = None
    """A local or git source's directory on disk (a Python project's checkout, not where it installs)."""
    project_filter: dict[str, Any] | None = None
    """The project's ``autoload: false`` entry that filters this user package in this project."""

    @property
    def filtered(self) -> bool:
        return self.project_filter is not None or (isinstance(self.entry, dict) and (
            is_delta(self.entry) or any(k in self.entry for k in RESOURCE_KINDS)))

    def enabled(self, kind: ResourceKind) -> list[PackageResource]:
        return [r for r in self.resources if r.kind == kind and r.enabled and r.note is None]


@dataclass
class PackageSet:
    """Every package of a session, in precedence order."""

    packages: list[ResolvedPackage] = field(default_factory=list)

    def paths(self, kind: ResourceKind) -> list[Path]:
        """The enabled resource files of one kind, across packages, in order."""
        return [r.path for p in self.packages if p.installed for r in p.enabled(kind) if r.path is not None]

    @property
    def skill_paths(self) -> list[Path]:
        return self.paths("skills")

    @property
    def prompt_paths(self) -> list[Path]:
        return self.paths("prompts")

    @property
    def theme_paths(self) -> list[Path]:
        return self.paths("themes")

    @property
    def extension_files(self) -> list[tuple[ResolvedPackage, Path]]:
        """Extension files of directory packages (Python distributions' code loads as entry points)."""
        return [(p, r.path) for p in self.packages if p.installed and p.dist is None
                for r in p.enabled("extensions") if r.path is not None]

    @property
    def disabled_plugins(self) -> set[str]:
        """Entry-point plugins that a package filter switched off."""
        return {r.name for p in self.packages if p.dist for r in p.resources
                if r.kind == "extensions" and not r.enabled}

    @property
    def missing(self) -> list[ResolvedPackage]:
        return [p for p in self.packages if p.scope in ("user", "project") and not p.installed]

    def resource_paths(self) -> ResourcePaths:
        """The skill, prompt-template and theme files, as a ``resources_discover`` result would give them."""
        from ..events import ResourcePaths

        return ResourcePaths(skill_paths=self.skill_paths, prompt_paths=self.prompt_paths,
                             theme_paths=self.theme_paths)


# -------------------------------------------------------------------------------------------------
# settings


def settings_base(scope: Scope, cwd: Path, agent_dir: Path) -> Path:
    """The directory that relative paths in that scope's settings file resolve from."""
    return cwd / ".pi" if scope == "project" else agent_dir


def settings_file(scope: Scope, cwd: Path, agent_dir: Path) -> Path:
    return settings_base(scope, cwd, agent_dir) / SETTINGS_FILE


def read_package_entries(path: Path) -> list[str | dict[str, Any]]:
    """The ``packages`` list of one settings file (``[]`` when absent or unreadable)."""
    try:
        data = parse_json(path.read_text(encoding="utf-8-sig") or "{}")
    except (OSError, ValueError):
        return []
    entries = data.get("packages") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, str) or (isinstance(e, dict) and isinstance(e.get("source"), str))]


def entry_source(entry: str | dict[str, Any]) -> str:
    return entry if isinstance(entry, str) else str(entry.get("source", ""))


def is_delta(entry: str | dict[str, Any]) -> bool:
    """Whether a settings entry is pi's ``autoload: false`` form (only its patterns act)."""
    return isinstance(entry, dict) and entry.get("autoload") is False


# -------------------------------------------------------------------------------------------------
# Python distributions


@dataclass
class _Dist:
    name: str
    version: str | None
    plugins: list[str] = field(default_factory=list)
    resources: list[tuple[ResourceKind, str]] = field(default_factory=list)


def environment_dists() -> dict[str, _Dist]:
    """Distributions with pi entry points (plugins or resources), by normalised name; pi itself excluded."""
    from ..entry_points import DISTRIBUTION, GROUP, entry_points_in

    dists: dict[str, _Dist] = {}
    names: dict[int, str] = {}
    for ep in entry_points_in(GROUP, *RESOURCE_GROUPS):
        dist = getattr(ep, "dist", None)
        if dist is None:
            continue
        key = names.get(id(dist))
        if key is None:
            # the folder name gives the normalised name without parsing METADATA (slow: email parser)
            key = names[id(dist)] = normalise(getattr(dist, "_normalized_name", None) or dist.name or "")
        if not key or key == DISTRIBUTION:
            continue
        info = dists.get(key)
        if info is None:
            info = dists[key] = _Dist(dist.name, dist.version)
        if ep.group == GROUP:
            info.plugins.append(ep.name)
        else:
            info.resources.append((RESOURCE_GROUPS[ep.group], ep.value))
    return dists


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def project_name(root: Path) -> str | None:
    """The distribution name a Python project directory (or a built wheel) installs as."""
    if root.is_file() and root.suffix == ".whl":
        return root.name.split("-")[0]
    try:
        import tomllib

        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("project", {}).get("name")
    return name if isinstance(name, str) else None


def _dist_resources(info: _Dist, entry: str | dict[str, Any]) -> tuple[Path | None, list[PackageResource]]:
    resources: list[PackageResource] = []
    plugin_filter = entry.get("extensions") if isinstance(entry, dict) else None
    enabled_plugins = set(info.plugins) if plugin_filter is None else filters.name_filter(info.plugins, plugin_filter)
    resources += [PackageResource("extensions", name, enabled=name in enabled_plugins) for name in info.plugins]
    root: Path | None = None
    for kind, target in info.resources:
        location = module_path(target)
        if location is None:
            resources.append(PackageResource(kind, target, note=f"{target} not found in the installed package"))
            continue
        top_dir = module_path(target.partition(":")[0].strip().split(".")[0])
        root = root or (top_dir.parent if top_dir is not None else location.parent)
        for path in collect(kind, location):
            resources.append(PackageResource(kind, _shown(path, root), path))
    _apply_filters(resources, entry, root)
    return root, resources


def _shown(path: Path, root: Path | None) -> str:
    if root is None:
        return str(path)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _apply_filters(resources: list[PackageResource], entry: str | dict[str, Any], root: Path | None) -> None:
    if not isinstance(entry, dict) or root is None:
        return
    for kind in ("skills", "prompts", "themes"):
        patterns = entry.get(kind)
        if not isinstance(patterns, list):
            continue
        of_kind = [r for r in resources if r.kind == kind and r.path is not None]
        enabled = filters.apply_filter([r.path for r in of_kind if r.path], [str(p) for p in patterns], root)
        for resource in of_kind:
            resource.enabled = resource.path in enabled


# -------------------------------------------------------------------------------------------------
# resolving


def resolve_packages(cwd: Path | str, agent_dir: Path | str | None = None, *, trusted: bool,
                     temporary: Sequence[tuple[PackageSource, Path]] = (),
                     include_environment: bool = True) -> PackageSet:
    """The packages of a session in ``cwd``.

    :param trusted: whether the project is trusted (its ``.pi/settings.json`` packages count only then).
    :param temporary: ``-e`` packages for this run, as ``(source, where it was fetched)``.
    :param include_environment: add installed distributions with pi entry points that no settings list.
    """
    from ..paths import agent_dir as default_agent_dir

    cwd_path = Path(os.path.abspath(cwd))
    agent = Path(agent_dir).expanduser() if agent_dir is not None else default_agent_dir()
    dists = environment_dists()
    result = PackageSet()
    seen: set[str] = set()
    for source, location in temporary:
        _add(result, seen, _resolve_one(source, "temporary", source.text, location, dists))
    scopes: list[Scope] = ["project", "user"] if trusted else ["user"]
    _add_settings_packages(result, seen, scopes, cwd_path, agent, dists)
    if include_environment:
        listed = {normalise(p.dist) for p in result.packages if p.dist}
        for key, info in sorted(dists.items()):
            if key not in listed:
                source = PackageSource(f"pypi:{info.name}", "pypi", name=info.name, requirement=info.name)
                _add(result, seen, _python_package(source, "environment", source.text, info.name, dists))
    return result


def _add_settings_packages(result: PackageSet, seen: set[str], scopes: list[Scope], cwd: Path, agent: Path,
                           dists: dict[str, _Dist]) -> None:
    """The settings' packages, scope by scope; a project's ``autoload: false`` entry for a package the
    user also lists becomes a filter on the user's package instead of a package of its own."""
    listed = {scope: _parsed_entries(scope, cwd, agent) for scope in scopes}
    user_ids = {parsed.identity for _, parsed in listed["user"] if isinstance(parsed, PackageSource)}
    deltas: dict[str, dict[str, Any]] = {}
    for scope in scopes:
        for entry, parsed in listed[scope]:
            if isinstance(parsed, str):
                broken = PackageSource(entry_source(entry), "local", path=None)
                _add(result, seen, ResolvedPackage(broken, scope, entry, problem=parsed))
                continue
            delta = entry if scope == "project" and isinstance(entry, dict) and is_delta(entry) else None
            if delta is not None and parsed.identity in user_ids:
                deltas.setdefault(parsed.identity, delta)  # applied to the user's entry below
                continue
            location = _managed_location(parsed, scope, cwd, agent)
            package = _resolve_one(parsed, scope, entry if delta is None else parsed.text, location, dists)
            package.entry = entry
            if delta is not None:
                _apply_delta(package, delta, start_empty=True)
            elif scope == "user" and parsed.identity in deltas:
                package.project_filter = deltas[parsed.identity]
                _apply_delta(package, package.project_filter, start_empty=False)
            _add(result, seen, package)


def _parsed_entries(scope: Scope, cwd: Path, agent: Path) -> list[tuple[str | dict[str, Any], PackageSource | str]]:
    """A scope's settings entries with their parsed sources (or why a source cannot be read)."""
    base = settings_base(scope, cwd, agent)
    out: list[tuple[str | dict[str, Any], PackageSource | str]] = []
    for entry in read_package_entries(base / SETTINGS_FILE):
        try:
            out.append((entry, parse_source(entry_source(entry), base)))
        except SourceError as exc:
            out.append((entry, str(exc)))
    return out


def _apply_delta(package: ResolvedPackage, entry: dict[str, Any], *, start_empty: bool) -> None:
    """Switch ``package``'s resources as an ``autoload: false`` entry says; with ``start_empty`` (no
    user entry to filter) everything its patterns do not switch on stays off."""
    for kind in RESOURCE_KINDS:
        of_kind = [r for r in package.resources if r.kind == kind and r.note is None]
        if start_empty:
            for resource in of_kind:
                resource.enabled = False
        patterns = entry.get(kind)
        if not isinstance(patterns, list) or not patterns:
            continue
        entries = [str(p) for p in patterns]
        if kind == "extensions" and package.dist:
            by_name = filters.name_delta_states([r.name for r in of_kind], entries)
            for resource in of_kind:
                resource.enabled = by_name.get(resource.name, resource.enabled)
        elif package.root is not None:
            by_path = filters.delta_states([r.path for r in of_kind if r.path is not None], entries, package.root)
            for resource in of_kind:
                if resource.path is not None:
                    resource.enabled = by_path.get(resource.path, resource.enabled)


def _add(result: PackageSet, seen: set[str], package: ResolvedPackage) -> None:
    keys = {package.source.identity} | ({"pypi:" + normalise(package.dist)} if package.dist else set())
    if keys & seen:
        return  # the same package from a scope that comes earlier wins
    seen.update(keys)
    result.packages.append(package)


def git_root(scope: Scope, cwd: Path, agent_dir: Path) -> Path:
    """Where git packages of a scope are cloned: ``<agent dir>/git`` or ``<project>/.pi/git``."""
    if scope == "temporary":
        return agent_dir / "tmp" / "extensions" / "git"
    return settings_base(scope, cwd, agent_dir) / "git"


def _managed_location(source: PackageSource, scope: Scope, cwd: Path, agent: Path) -> Path | None:
    if source.kind == "git":
        return source.install_dir(git_root(scope, cwd, agent))
    return source.path


def _resolve_one(source: PackageSource, scope: Scope, entry: str | dict[str, Any], location: Path | None,
                 dists: dict[str, _Dist]) -> ResolvedPackage:
    if source.kind == "pypi":
        return _python_package(source, scope, entry, source.name or "", dists)
    if location is None or not location.exists():
        where = f" ({location})" if location else ""
        return ResolvedPackage(source, scope, entry, root=location,
                               problem=f"not installed{where}: run `pi install`")
    if location.is_file() and location.suffix == ".py":
        resource = PackageResource("extensions", location.name, location)
        package = ResolvedPackage(source, scope, entry, root=location.parent, installed=True, resources=[resource])
        return package
    if location.is_file() or is_python_project(location):
        name = project_name(location)
        if name is None:
            return ResolvedPackage(source, scope, entry, root=location,
                                   problem=f"{location}: cannot tell which distribution it installs")
        package = _python_package(source, scope, entry, name, dists)
        package.location = location
        return package
    return _directory_package(source, scope, entry, location)


def _python_package(source: PackageSource, scope: Scope, entry: str | dict[str, Any], name: str,
                    dists: dict[str, _Dist]) -> ResolvedPackage:
    info = dists.get(normalise(name))
    if info is None:
        version = _dist_version(name)
        if version is None:
            return ResolvedPackage(source, scope, entry, dist=name,
                                   problem=f"{name} is not installed in pi's environment: run `pi install`")
        return ResolvedPackage(source, scope, entry, dist=name, version=version, installed=True,
                               problem="declares no pi plugins or resources")
    root, resources = _dist_resources(info, entry)
    return ResolvedPackage(source, scope, entry, root=root, dist=info.name, version=info.version, installed=True,
                           resources=resources)


def _directory_package(source: PackageSource, scope: Scope, entry: str | dict[str, Any],
                       root: Path) -> ResolvedPackage:
    package = ResolvedPackage(source, scope, entry, root=root, installed=True)
    for kind, paths in directory_resources(root).items():
        patterns = entry.get(kind) if isinstance(entry, dict) else None
        enabled = set(paths) if not isinstance(patterns, list) else filters.apply_filter(
            paths, [str(p) for p in patterns], root)
        for path in paths:
            note = None
            if kind == "extensions" and path.suffix in FOREIGN_EXTENSIONS:
                note = "a TypeScript/JavaScript extension (pi's); not loaded by this pi"
            package.resources.append(PackageResource(kind, _shown(path, root), path, enabled=path in enabled, note=note))
    if not package.resources:
        package.problem = "no extensions/, skills/, prompts/ or themes/ (and no package.json pi manifest)"
    return package


def discover_package_resources(cwd: Path | str, agent_dir: Path | str | None = None, *,
                               trusted: bool) -> ResourcePaths:
    """The skill, prompt-template and theme files that packages contribute to a session in ``cwd``.

    The one place the session, the terminal's theme loader and ``resources_discover`` consumers get
    package resources from (settings filters and ``pi config`` choices already applied).
    """
    return resolve_packages(cwd, agent_dir, trusted=trusted).resource_paths()


def describe(package: ResolvedPackage) -> dict[str, list[str]]:
    """Enabled resource names per kind (``pi list``)."""
    out: dict[str, list[str]] = {}
    for kind in RESOURCE_KINDS:
        names = [r.name for r in package.enabled(kind)]
        if names:
            out[kind] = names
    return out


def iter_resources(packages: Iterable[ResolvedPackage]) -> Iterable[tuple[ResolvedPackage, PackageResource]]:
    for package in packages:
        for resource in package.resources:
            yield package, resource


__all__ = ["PackageSet", "ResolvedPackage", "PackageResource", "describe", "discover_package_resources",
           "environment_dists", "git_root", "is_delta", "iter_resources", "project_name", "read_package_entries",
           "resolve_packages", "settings_base", "settings_file"]
