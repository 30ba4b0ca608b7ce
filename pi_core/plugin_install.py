"""``pi install`` / ``pi remove`` / ``pi list``: pip packages in pi's own environment.

pi plugins are ordinary Python distributions with ``pi`` entry points, so installing one is a pip
install into the interpreter that runs ``pi`` (never some other Python on PATH). After installing, the
new distribution's plugins are loaded once to show what they register — or why they fail.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class InstalledPlugin:
    dist: str
    version: str
    entry_points: list[tuple[str, str]] = field(default_factory=list)
    location: str | None = None


def pip(args: Sequence[str]) -> int:
    """Run pip of this interpreter, streaming its output; returns its exit code."""
    return subprocess.call([sys.executable, "-m", "pip", *args])


def install(packages: Sequence[str], *, editable: bool = False, upgrade: bool = False,
            pip_args: Sequence[str] = ()) -> int:
    args = ["install", *pip_args]
    if upgrade:
        args.append("--upgrade")
    for package in packages:
        args += ["-e", package] if editable else [package]
    return pip(args)


def remove(packages: Sequence[str]) -> int:
    return pip(["uninstall", "--yes", *packages])


def installed_plugins() -> list[InstalledPlugin]:
    """Distributions (other than pi itself) that declare ``pi`` entry points, by name."""
    from importlib import metadata

    from .entry_points import DISTRIBUTION, GROUP

    found: dict[str, InstalledPlugin] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        points = [(ep.name, ep.value) for ep in dist.entry_points if ep.group == GROUP]
        if not points or name.lower().replace("_", "-") == DISTRIBUTION or name in found:
            continue
        location = str(dist.locate_file("")) if hasattr(dist, "locate_file") else None
        found[name] = InstalledPlugin(name, dist.version, sorted(points), location)
    return sorted(found.values(), key=lambda p: p.dist.lower())


def dist_name_for(spec: str) -> str | None:
    """Best-effort distribution name of a pip argument (a requirement or a local project path)."""
    path = Path(spec)
    if path.exists():
        pyproject = path / "pyproject.toml"
        if pyproject.is_file():
            import tomllib

            return tomllib.loads(pyproject.read_text()).get("project", {}).get("name")
        return None
    import re

    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return match.group(1) if match else None


def normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


__all__ = ["InstalledPlugin", "dist_name_for", "install", "installed_plugins", "normalise", "pip", "remove"]
