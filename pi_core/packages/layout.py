"""What a package directory holds: pi's package layout, read without running anything.

A directory package (a local folder or a git checkout without ``pyproject.toml``) is laid out as a pi
package: ``extensions/`` (Python extension files and packages), ``skills/`` (``SKILL.md`` directories
and markdown files), ``prompts/`` (markdown, recursively) and ``themes/`` (JSON, recursively). A
``package.json`` with a ``pi`` object (``{"extensions": [...], "skills": [...], ...}``; paths and globs
relative to the directory, ``!glob`` exclusions) replaces that convention, as in pi.

A Python distribution declares its resources in entry-point groups ``pi.skills``, ``pi.prompts`` and
``pi.themes``: ``name = "module:relative/path"`` points at a file or directory inside the installed
module, found with ``importlib.util.find_spec`` (the package is never imported).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from ..safejson import parse_json
from . import filters

ResourceKind = Literal["extensions", "skills", "prompts", "themes"]
RESOURCE_KINDS: tuple[ResourceKind, ...] = ("extensions", "skills", "prompts", "themes")
#: Entry-point groups for the resources of Python distributions (code plugins use the ``pi`` group).
RESOURCE_GROUPS: dict[str, ResourceKind] = {"pi.skills": "skills", "pi.prompts": "prompts", "pi.themes": "themes"}
_SUFFIX = {"prompts": ".md", "themes": ".json"}
#: Extension files this pi cannot run (pi's TypeScript/JavaScript extensions).
FOREIGN_EXTENSIONS = (".ts", ".js", ".mjs", ".cjs", ".mts")


def is_python_project(root: Path) -> bool:
    """A directory that pip installs (it has ``pyproject.toml`` or ``setup.py``)."""
    return (root / "pyproject.toml").is_file() or (root / "setup.py").is_file()


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The ``pi`` object of ``root/package.json``, when there is one with resource lists."""
    try:
        data = parse_json((root / "package.json").read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    manifest = data.get("pi") if isinstance(data, dict) else None
    if isinstance(manifest, dict) and any(isinstance(manifest.get(k), list) for k in RESOURCE_KINDS):
        return manifest
    return None


def directory_resources(root: Path) -> dict[ResourceKind, list[Path]]:
    """Every resource file of a directory package, per kind, in a stable (sorted) order."""
    manifest = read_manifest(root)
    found: dict[ResourceKind, list[Path]] = {}
    for kind in RESOURCE_KINDS:
        entries = manifest.get(kind) if manifest else None
        if isinstance(entries, list):
            found[kind] = manifest_files(root, kind, [e for e in entries if isinstance(e, str)])
        elif manifest is None and (root / kind).is_dir():
            found[kind] = collect(kind, root / kind)
        else:
            found[kind] = []
    return found


def manifest_files(root: Path, kind: ResourceKind, entries: list[str]) -> list[Path]:
    """Files named by manifest entries: paths and globs collected, then its ``!``/``+``/``-`` applied."""
    files: list[Path] = []
    for entry in entries:
        if entry[:1] in "!+-":
            continue
        if any(c in entry for c in "*?[{"):
            for match in sorted(root.glob(entry.removeprefix("./"))):
                _extend(files, collect(kind, match))
        else:
            _extend(files, collect(kind, (root / entry).resolve()))
    overrides = [e for e in entries if e[:1] in "!+-"]
    if overrides:
        enabled = filters.apply_filter(files, overrides, root)
        files = [f for f in files if f in enabled]
    return files


def _extend(target: list[Path], items: Iterable[Path]) -> None:
    for item in items:
        if item not in target:
            target.append(item)


def collect(kind: ResourceKind, path: Path) -> list[Path]:
    """The resource files of one kind at ``path`` (a file of that kind, or a directory to search)."""
    if path.is_file():
        if kind == "extensions":
            return [path] if path.suffix == ".py" or path.suffix in FOREIGN_EXTENSIONS else []
        return [path] if path.suffix == _SUFFIX.get(kind, ".md") else []
    if not path.is_dir():
        return []
    if kind == "extensions":
        return _extension_entries(path)
    if kind == "skills":
        from ..runtime.resources import skill_files

        return skill_files(path, root_files=True)
    return _files_below(path, _SUFFIX[kind])


def _extension_entries(directory: Path) -> list[Path]:
    if (directory / "__init__.py").is_file():
        return [directory / "__init__.py"]
    from ..extensions.discovery import extension_files

    found = extension_files(directory)
    found += sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in FOREIGN_EXTENSIONS)
    return found


def _files_below(directory: Path, suffix: str) -> list[Path]:
    found: list[Path] = []
    for current, dirs, files in os.walk(directory, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        found.extend(Path(current) / f for f in sorted(files) if f.endswith(suffix) and not f.startswith("."))
    return found


def module_path(target: str) -> Path | None:
    """Where ``"module:relative/path"`` points, found without importing the module (``None``: not found).

    Only the top-level package is looked up (``find_spec`` of a top-level name runs no code); the
    dotted rest and the path after ``:`` are followed as directories below it.
    """
    from importlib.util import find_spec

    module, _, rel = target.partition(":")
    top, *rest = module.strip().split(".")
    try:
        spec = find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [str(Path(spec.origin).parent)]  # a single-module distribution: paths beside it
    for location in locations:
        candidate = Path(location).joinpath(*rest, *[p for p in rel.strip().split("/") if p])
        if candidate.exists():
            return candidate
    return None


__all__ = ["FOREIGN_EXTENSIONS", "RESOURCE_GROUPS", "RESOURCE_KINDS", "ResourceKind", "collect",
           "directory_resources", "is_python_project", "manifest_files", "module_path", "read_manifest"]
