"""``<agent dir>/auth.json``, read and written in pi's format and shared with pi.

The file maps a provider id to one credential::

    {"anthropic": {"type": "oauth", "access": "...", "refresh": "...", "expires": 1767225600000},
     "openai":    {"type": "api_key", "key": "sk-...", "env": {"OPENAI_ORG": "..."}}}

Every change happens under pi's lock (:mod:`.lock`) and re-reads the file inside it, so two programs
adding different providers both keep theirs, and an OAuth refresh is done by one process only. The new
content replaces the file atomically (a temporary file in the same directory, then ``os.replace``), so
a reader never sees half a file; a new file is created with mode 0600 in a 0700 directory, an existing
file keeps its mode. Unknown fields of an entry are kept as they are. A file that is not valid JSON is
never overwritten: changes fail with :class:`CredentialStoreError` naming the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ...safejson import parse_json
from .lock import locked, locked_async

Entry = dict[str, Any]


class CredentialStoreError(RuntimeError):
    """``auth.json`` could not be read or changed (the message names the file and the reason)."""


def _stringify(data: dict[str, Any]) -> str:
    # pi writes JSON.stringify(data, null, 2): two-space indent, non-ASCII as is, no final newline.
    return json.dumps(data, indent=2, ensure_ascii=False)


def _revision(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def entry_problem(entry: Any) -> str | None:
    """Why ``entry`` is not a usable credential (``None`` when it is)."""
    if not isinstance(entry, dict):
        return "expected an object"
    kind = entry.get("type")
    if kind == "api_key":
        if entry.get("key") is not None and not isinstance(entry["key"], str):
            return '"key" must be a string'
        env = entry.get("env")
        if env is not None and (not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values())):
            return '"env" must be an object of strings'
        return None
    if kind == "oauth":
        if not isinstance(entry.get("access"), str) or not isinstance(entry.get("refresh"), str):
            return '"access" and "refresh" must be strings'
        expires = entry.get("expires")
        if isinstance(expires, bool) or not isinstance(expires, (int, float)):
            return '"expires" must be a number (milliseconds since 1970)'
        return None
    return f'unknown credential type {kind!r} (expected "api_key" or "oauth")'


class CredentialStore:
    """The credentials of one ``auth.json``. Reads are cached until the file changes on disk."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.errors: list[str] = []
        self._data: dict[str, Any] = {}
        self._seen: tuple[int, int, int] | None | bool = False

    # -- reading ----------------------------------------------------------------------------------
    @property
    def real_path(self) -> Path:
        return Path(os.path.realpath(self.path))

    def _parse(self, text: str) -> dict[str, Any]:
        text = text.removeprefix("\ufeff")
        if not text.strip():
            return {}
        try:
            data = parse_json(text)
        except ValueError as exc:
            raise CredentialStoreError(f"{self.path}: invalid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise CredentialStoreError(f"{self.path}: expected an object of providers")
        return data

    def _read_disk(self) -> dict[str, Any]:
        try:
            text = self.real_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise CredentialStoreError(f"{self.path}: {exc}") from exc
        return self._parse(text)

    def read_all(self) -> dict[str, Any]:
        """Every entry, as stored (raw JSON objects). A broken file reads as empty and sets ``errors``."""
        revision = _revision(self.real_path)
        if revision == self._seen:
            return self._data
        try:
            data = self._read_disk()
        except CredentialStoreError as first:
            # pi rewrites the file in place; a read can catch it half-written. Look again under the lock.
            try:
                with locked(self.path, wait=5.0):
                    data = self._read_disk()
            except (CredentialStoreError, TimeoutError):
                self.errors = [f"{first}; the credentials stored there are not used until it is fixed"]
                self._data, self._seen = {}, revision
                return self._data
        self._remember(data)
        return data

    def _remember(self, data: dict[str, Any]) -> None:
        self.errors = [f"{self.path}: credential for {name!r} ignored: {problem}"
                       for name, entry in data.items() if (problem := entry_problem(entry))]
        self._data, self._seen = data, _revision(self.real_path)

    def get(self, provider: str) -> Entry | None:
        """The usable credential stored for ``provider`` (a copy), or ``None``."""
        entry = self.read_all().get(provider)
        if entry is None or entry_problem(entry):
            return None
        return json.loads(json.dumps(entry))

    def list(self) -> list[tuple[str, str]]:
        """``(provider, type)`` of every stored credential."""
        return [(name, str(entry.get("type"))) for name, entry in self.read_all().items()
                if isinstance(entry, dict)]

    # -- writing ----------------------------------------------------------------------------------
    def _write(self, data: dict[str, Any]) -> None:
        target = self.real_path
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o600
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                os.fchmod(handle.fileno(), mode)
                handle.write(_stringify(data))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._remember(data)

    def _prepare(self) -> None:
        self.real_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def set(self, provider: str, credential: Entry) -> None:
        """Store ``credential`` for ``provider``, keeping every other entry."""
        if entry_problem(credential):
            raise CredentialStoreError(f"not a valid credential for {provider!r}: {entry_problem(credential)}")
        self._prepare()
        with locked(self.path):
            data = self._read_disk()
            data[provider] = credential
            self._write(data)

    def delete(self, provider: str) -> bool:
        """Remove the credential of ``provider``; ``False`` when there was none."""
        self._prepare()
        with locked(self.path):
            data = self._read_disk()
            if provider not in data:
                return False
            del data[provider]
            self._write(data)
            return True

    async def modify(self, provider: str,
                     change: Callable[[Entry | None], Awaitable[Entry | None]]) -> Entry | None:
        """Run ``change(current)`` under the lock with the entry as it is on disk now; store what it
        returns (``None`` keeps the entry). Returns the entry after the change."""
        self._prepare()
        async with locked_async(self.path):
            data = self._read_disk()
            current = data.get(provider)
            usable = None if current is None or entry_problem(current) else json.loads(json.dumps(current))
            updated = await change(usable)
            if updated is None:
                self._remember(data)
                return usable
            data[provider] = updated
            self._write(data)
            return updated


__all__ = ["CredentialStore", "CredentialStoreError", "entry_problem"]
