"""Package sources as written in ``pi install SOURCE`` and in the settings ``packages`` list.

Three kinds, told apart the way pi tells npm, git and local sources apart:

* ``pypi`` — ``pypi:NAME[spec]`` or a bare requirement (``pi-tools``, ``pi-tools==1.2``); pinned by ``==``.
* ``git`` — ``git:host/user/repo[@ref]``, ``git+URL[@ref]`` (pip's spelling), ``https://``, ``ssh://``,
  ``git://``, ``file://`` URLs and ``git@host:path``; pinned when a ref is given.
* ``local`` — a path (``./dir``, ``/abs``, ``~/dir``, a built ``.whl``), resolved from the settings file
  that names it; never pinned (it is what is on disk).

A source's *identity* (pypi: the normalised name; git: host and path without the ref; local: the
absolute path) decides when two spellings mean the same package, so a project entry replaces a user
entry for the same package and nothing loads twice.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

Kind = Literal["pypi", "git", "local"]

_URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")
_ARCHIVES = (".whl", ".tar.gz", ".zip", ".tgz")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


class SourceError(ValueError):
    """The text cannot be read as a package source (the message says why)."""


@dataclass(frozen=True)
class PackageSource:
    """One parsed source. ``text`` is what was written; the other fields depend on ``kind``."""

    text: str
    kind: Kind
    name: str | None = None
    """pypi: the distribution name."""
    requirement: str | None = None
    """pypi: the pip requirement (``name[extras]spec``)."""
    url: str | None = None
    """git: the URL to clone (without the ref)."""
    ref: str | None = None
    """git: the branch, tag or commit given after ``@``."""
    host: str = ""
    repo_path: str = ""
    """git: where the repository lives on its host (``user/repo``)."""
    path: Path | None = None
    """local: the absolute path."""

    @property
    def pinned(self) -> bool:
        """Whether ``pi update`` leaves it where it is: an exact version or a git ref."""
        if self.kind == "pypi":
            return bool(re.search(r"===?", self.requirement or ""))
        return self.kind == "git" and bool(self.ref)

    @property
    def identity(self) -> str:
        if self.kind == "pypi":
            return "pypi:" + normalise(self.name or "")
        if self.kind == "git":
            return f"git:{self.host}/{self.repo_path}".lower()
        return f"local:{self.path}"

    def install_dir(self, root: Path) -> Path:
        """git: where the clone lives under ``root`` (``<root>/<host>/<repo path>``)."""
        target = (root / self.host / self.repo_path).resolve()
        if not target.is_relative_to(root.resolve()):
            raise SourceError(f"{self.text}: refusing to clone outside {root}")
        return target


def normalise(name: str) -> str:
    """A distribution name as pip compares them (case and ``-``/``_``/``.`` folded)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_source(text: str, base: Path | None = None) -> PackageSource:
    """Read ``text`` as a source; relative local paths resolve against ``base`` (default: cwd)."""
    raw = text.strip()
    if not raw:
        raise SourceError("empty package source")
    if raw.startswith("pypi:"):
        return _pypi(raw, raw[5:])
    if raw.startswith("npm:"):
        raise SourceError(f"{raw}: npm packages are pi's (TypeScript); this pi installs Python packages "
                          "(pypi:NAME), git repositories and local paths")
    if raw.startswith("git+"):
        return _git(raw, raw[4:])
    if raw.startswith("git:"):
        return _git_shorthand(raw, raw[4:].strip())
    if raw.startswith("git@") or raw.startswith(_URL_SCHEMES):
        if raw.startswith(("https://", "http://")) and raw.split("?")[0].endswith(_ARCHIVES):
            return _pypi(raw, raw)  # a wheel or sdist URL is a pip requirement
        return _git(raw, raw)
    if _looks_local(raw, base):
        return PackageSource(raw, "local", path=_resolve(raw, base))
    return _pypi(raw, raw)


def _looks_local(raw: str, base: Path | None) -> bool:
    if raw.startswith((".", "/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        return True
    if raw.endswith(_ARCHIVES) or "/" in raw or os.sep in raw:
        return True
    return _resolve(raw, base).exists()


def _resolve(raw: str, base: Path | None) -> Path:
    path = Path(os.path.expanduser(raw))
    return Path(os.path.abspath(path if path.is_absolute() else (base or Path.cwd()) / path))


def _pypi(text: str, requirement: str) -> PackageSource:
    requirement = requirement.strip()
    if requirement.startswith(("https://", "http://")):
        name = Path(urlsplit(requirement).path).name.split("-")[0]
        return PackageSource(text, "pypi", name=name, requirement=requirement)
    match = _REQUIREMENT.match(requirement)
    if not match or (match.group(3) and not re.match(r"^(===?|~=|!=|<=?|>=?|;|@)", match.group(3).strip())):
        raise SourceError(f"{text}: not a package name, requirement, git URL or existing path")
    return PackageSource(text, "pypi", name=match.group(1), requirement=requirement)


def _split_ref(url: str) -> tuple[str, str | None]:
    """``url@ref`` → ``(url, ref)``; an ``@`` counts only after the last ``/`` (not ``git@host``)."""
    at = url.rfind("@")
    if at < 0 or (url.startswith("git@") and at == 3) or at < url.rfind("/"):
        return url, None
    return url[:at], url[at + 1:] or None


def _git(text: str, url: str) -> PackageSource:
    url, ref = _split_ref(url.strip())
    scp = re.match(r"^git@([^:/]+):(.+)$", url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http", "ssh", "git", "file") or (parts.scheme != "file" and not parts.hostname):
            raise SourceError(f"{text}: not a git URL (https://, ssh://, git://, file:// or git@host:path)")
        host = parts.hostname or "local"
        path = parts.path
    path = re.sub(r"\.git$", "", path.strip("/"))
    if not path or ".." in path.split("/"):
        raise SourceError(f"{text}: the git URL names no repository")
    return PackageSource(text, "git", url=url, ref=ref, host=host, repo_path=path)


def _git_shorthand(text: str, rest: str) -> PackageSource:
    if rest.startswith(_URL_SCHEMES) or rest.startswith("git@"):
        return _git(text, rest)
    if "/" not in rest:
        raise SourceError(f"{text}: expected git:host/user/repo[@ref]")
    repo, ref = _split_ref(rest)
    return _git(text, f"https://{repo}" + (f"@{ref}" if ref else ""))


parse_package_source = parse_source


def settings_text(source: PackageSource, base: Path) -> str:
    """How a source is written into a settings file whose paths resolve from ``base``: local paths
    relative to it (as pi writes them), everything else as given."""
    if source.kind != "local" or source.path is None:
        return source.text
    return os.path.relpath(source.path, base) if source.path != base else "."


__all__ = ["PackageSource", "SourceError", "normalise", "parse_package_source", "parse_source", "settings_text"]
