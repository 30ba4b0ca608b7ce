"""What changed in the packages a session loads, shown once after an update ("Extension Updates").

As in pi: on a fresh interactive start (not a resumed session), each package of the user's or the
project's settings that loads at least one extension is looked up in the user settings'
``extensionChangelogVersions`` (keyed as pi keys it, so both read the same record). The first time a
package is seen its version is recorded and nothing is shown; later, the entries of its changelog newer
than the recorded version are shown and the record moves on.

The changelog is ``CHANGELOG.md`` at the package root, or ``pi.changelogPath`` of a directory package's
``package.json`` (``""`` switches it off). A Python distribution's changelog is the ``CHANGELOG.md`` of the
project or clone it was installed from, else a ``CHANGELOG.md`` the distribution itself installs.
Headings look like pi's: ``## [1.2.0]`` or ``## 1.2.0 - 2026-01-01``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..runtime.settings import SettingsError, write_setting
from ..safejson import parse_json
from .resolve import PackageSet, ResolvedPackage

SETTING = "extensionChangelogVersions"
_HEADING = re.compile(r"^##\s+\[?(\d+)\.(\d+)\.(\d+)\]?")
_HEADING_PREFIX = re.compile(r"^##\s+")
_LEADING = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")

Version = tuple[int, int, int]


@dataclass(frozen=True)
class ChangelogEntry:
    version: Version
    content: str


@dataclass(frozen=True)
class PackageUpdate:
    """One updated package: its name, new version and the changelog entries to show (markdown)."""

    name: str
    version: str
    markdown: str


def parse_changelog(text: str) -> list[ChangelogEntry]:
    """The version sections of a changelog, in file order; text before the first version is skipped."""
    entries: list[ChangelogEntry] = []
    version: Version | None = None
    lines: list[str] = []
    for line in [*text.splitlines(), "## end"]:
        if not line.startswith("## "):
            if version is not None:
                lines.append(line)
            continue
        if version is not None and lines:
            entries.append(ChangelogEntry(version, "\n".join(lines).strip()))
        match = _HEADING.match(line)
        version = tuple(int(g) for g in match.groups()) if match else None  # type: ignore[assignment]
        lines = [line] if match else []
    return entries


def new_entries(entries: list[ChangelogEntry], last_seen: str) -> list[ChangelogEntry] | None:
    """Entries newer than ``last_seen`` (only its leading x.y.z counts: ``0.1.5-rc`` is 0.1.5);
    ``None`` when ``last_seen`` is not a version."""
    match = _LEADING.match(last_seen.strip())
    if match is None:
        return None
    last = tuple(int(g) for g in match.groups())
    return [e for e in entries if e.version > last]


def package_key(package: ResolvedPackage) -> str:
    """pi's key for a package: its settings source and scope, as compact JSON."""
    source = package.entry.get("source") if isinstance(package.entry, dict) else package.entry
    return json.dumps({"source": source, "scope": package.scope}, separators=(",", ":"), ensure_ascii=False)


def changelog_updates(packages: PackageSet, user_settings: Path, recorded: dict[str, str]) -> list[PackageUpdate]:
    """The updates to show now; records first-seen and shown versions in ``user_settings``."""
    record = dict(recorded)
    updates: list[PackageUpdate] = []
    seen: set[str] = set()
    for package in packages.packages:
        if package.scope not in ("user", "project") or not package.installed or not package.enabled("extensions"):
            continue
        key = package_key(package)
        if key in seen:
            continue
        seen.add(key)
        name, version, changelog = _identity(package)
        if version is None or changelog is None:
            continue
        last = record.get(key)
        if not isinstance(last, str):
            record[key] = version
            continue
        fresh = new_entries(_read(changelog), last)
        if fresh is None:
            record[key] = version
        elif fresh:
            record[key] = version
            text = "\n\n".join(_HEADING_PREFIX.sub(f"## {name} ", e.content, count=1) for e in fresh).strip()
            updates.append(PackageUpdate(name, version, text))
    if record != recorded:
        try:
            write_setting(user_settings, SETTING, record)
        except (OSError, SettingsError):
            pass  # a settings file we cannot write only means the notice may show again
    return updates



def _identity(package: ResolvedPackage) -> tuple[str, str | None, Path | None]:
    """Name, version and changelog file of a package (``None`` where it has none)."""
    if package.dist is not None:
        return package.dist, package.version, _dist_changelog(package)
    root = package.root
    if root is None or not root.is_dir():
        return package.source.text, None, None
    manifest = _json(root / "package.json")
    name = manifest.get("name") if isinstance(manifest.get("name"), str) else root.name
    version = manifest.get("version") if isinstance(manifest.get("version"), str) else None
    pi = manifest.get("pi") if isinstance(manifest.get("pi"), dict) else {}
    declared = pi.get("changelogPath")
    if declared == "":
        return name, version, None
    path = (root / declared) if isinstance(declared, str) else root / "CHANGELOG.md"
    return name, version, path if path.is_file() else None


def _dist_changelog(package: ResolvedPackage) -> Path | None:
    location = package.location
    if location is not None and location.is_dir() and (location / "CHANGELOG.md").is_file():
        return location / "CHANGELOG.md"
    from importlib import metadata

    try:
        files = metadata.distribution(package.dist or "").files or []
    except metadata.PackageNotFoundError:
        return None
    shipped = sorted((f for f in files if f.name == "CHANGELOG.md"), key=lambda f: len(f.parts))
    for file in shipped:
        path = Path(str(file.locate()))
        if path.is_file():
            return path
    return None


def _json(path: Path) -> dict:  # type: ignore[type-arg]
    try:
        data = parse_json(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read(path: Path) -> list[ChangelogEntry]:
    try:
        return parse_changelog(path.read_text(encoding="utf-8"))
    except OSError:
        return []


__all__ = ["ChangelogEntry", "PackageUpdate", "changelog_updates", "new_entries", "package_key", "parse_changelog"]
