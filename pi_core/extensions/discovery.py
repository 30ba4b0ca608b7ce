"""Finding plugins: entry points (scanned once per process, in :mod:`pi_core.entry_points`) and
extension files on disk."""

from __future__ import annotations

from pathlib import Path

from ..entry_points import BUILTIN_PLUGINS, DISTRIBUTION, GROUP, PluginSpec, scan_entry_points


def extension_files(directory: Path) -> list[Path]:
    """Extension modules in ``directory``: ``*.py`` files and packages (``<dir>/__init__.py``), sorted
    by name so that load order does not depend on the file system."""
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            found.append(entry)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            found.append(entry / "__init__.py")
    return found


__all__ = ["BUILTIN_PLUGINS", "DISTRIBUTION", "GROUP", "PluginSpec", "extension_files", "scan_entry_points"]
