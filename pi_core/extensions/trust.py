"""Project trust: code and settings from a repository run only after the user trusted the project.

Decisions live in ``<agent dir>/trust.json`` in pi's format — ``{"<canonical dir>": true|false}`` —
so pi and this program share them. The nearest decided ancestor directory applies. Writers take
pi's lock (a ``trust.json.lock`` directory) so two programs never interleave updates.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from ..safejson import parse_json

#: Files and directories under ``.pi/`` that only load in a trusted project (as in pi).
TRUST_GATED = ("settings.json", "mcp.json", "extensions", "skills", "prompts", "themes",
               "SYSTEM.md", "APPEND_SYSTEM.md")


class TrustStoreError(Exception):
    """trust.json exists but cannot be read as a trust store."""


def canonical(path: Path) -> Path:
    return Path(os.path.realpath(path))


def has_trust_inputs(cwd: Path, home: Path | None = None) -> bool:
    """Whether ``cwd`` holds anything that trust gates (``.pi/<gated>`` or ``.agents/skills`` above)."""
    cwd = canonical(cwd)
    if any((cwd / ".pi" / name).exists() for name in TRUST_GATED):
        return True
    user_skills = canonical(home or Path.home()) / ".agents" / "skills"
    for directory in (cwd, *cwd.parents):
        skills = directory / ".agents" / "skills"
        if skills != user_skills and skills.exists():
            return True
    return False


class TrustStore:
    """``<agent dir>/trust.json``: remembered project trust decisions, shared with pi (``pi trust``,
    ``/trust``). Decisions take effect at the next start."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = Path(agent_dir) / "trust.json"

    def _read(self) -> dict[str, bool | None]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        try:
            data = parse_json(text)
        except ValueError as exc:
            raise TrustStoreError(f"cannot read trust store {self.path}: {exc}") from exc
        if not isinstance(data, dict) or any(v not in (True, False, None) for v in data.values()):
            raise TrustStoreError(f"invalid trust store {self.path}: expected {{path: true|false}}")
        return data

    def get(self, cwd: Path) -> bool | None:
        """The decision for ``cwd`` or its nearest decided ancestor; ``None`` if undecided."""
        found = self.nearest(cwd)
        return None if found is None else found[1]

    def nearest(self, cwd: Path) -> tuple[Path, bool] | None:
        """The folder whose decision applies to ``cwd`` (itself or its nearest decided ancestor) and that
        decision; ``None`` if undecided. Raises :class:`TrustStoreError` for a broken store."""
        data = self._read()
        target = canonical(cwd)
        for directory in (target, *target.parents):
            value = data.get(str(directory))
            if isinstance(value, bool):
                return directory, value
        return None

    def set(self, cwd: Path, trusted: bool | None) -> None:
        """Remember (or with ``None`` forget) the decision for ``cwd``."""
        with self._locked():
            data = self._read()
            key = str(canonical(cwd))
            data.pop(key, None)
            if trusted is not None:
                data[key] = trusted
            body = json.dumps({k: data[k] for k in sorted(data)}, indent=2) + "\n"
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".trust.json.{os.getpid()}.tmp")
            tmp.write_text(body, encoding="utf-8")
            os.replace(tmp, self.path)

    @contextlib.contextmanager
    def _locked(self, attempts: int = 50, stale_after: float = 10.0) -> Iterator[None]:
        lock = self.path.with_name(self.path.name + ".lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(attempts):
            try:
                lock.mkdir()
                break
            except FileExistsError:
                with contextlib.suppress(FileNotFoundError):
                    if time.time() - lock.stat().st_mtime > stale_after:
                        lock.rmdir()
                        continue
                time.sleep(0.02)
        else:
            raise TrustStoreError(f"trust store {self.path} is locked by another process ({lock})")
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                lock.rmdir()


def is_project_trusted(cwd: Path, agent_dir: Path | None = None) -> bool | None:
    """The remembered decision for ``cwd`` (``None``: undecided, or the store cannot be read).

    For code that runs without a session, such as a plugin's ``pi`` sub-command; inside a session the
    decision of this run (``--approve`` included) is ``ctx.is_project_trusted()``."""
    from ..paths import agent_dir as default_agent_dir

    try:
        return TrustStore(agent_dir or default_agent_dir()).get(Path(cwd))
    except TrustStoreError:
        return None


__all__ = ["TRUST_GATED", "TrustStore", "TrustStoreError", "canonical", "has_trust_inputs", "is_project_trusted"]
