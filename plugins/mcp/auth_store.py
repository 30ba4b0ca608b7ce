"""``mcp-auth.json``: the OAuth state of MCP servers, in pi's format and shared with pi.

The file maps a key per server, ``mcp__<name>|<server URL>`` (the URL normalized as a WHATWG URL, so
pi and this pi compute the same key), to that server's state::

    {"serverUrl": "...", "clientInformation": {...}, "tokens": {...}, "tokensExpireAt": <ms>,
     "codeVerifier": "...", "oauthState": "...", "discovery": {"authorizationServerUrl": ..., ...}}

A key by URL alone, written by older versions of pi, is taken over by the first server that loads it.
Changes are made under pi's lock on the file (the directory ``<file>.lock``, as the ``proper-lockfile``
package makes it) and written atomically with mode 0600. Refreshing a server's tokens holds a second
lock per server (``mcp-auth-refresh-<hash>.lock`` beside the file), so two processes never spend one
refresh token twice. This module uses only the standard library: ``pi mcp logout`` needs no SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from .config import namespace

AUTH_FILE = "mcp-auth.json"
#: pi's ``proper-lockfile`` defaults for the file lock: stale after 10 s.
FILE_LOCK_STALE = 10.0
FILE_LOCK_WAIT = 10.0
#: pi's refresh lock: stale after 20 s (its holder renews it), waited for up to 25 s.
REFRESH_LOCK_STALE = 20.0
REFRESH_LOCK_WAIT = 25.0
T = TypeVar("T")


class AuthLockBusy(TimeoutError):
    """Another process held a lock of ``mcp-auth.json`` for the whole wait."""


def normalize_url(url: str) -> str:
    """``url`` as a WHATWG URL serializes it (``String(new URL(url))`` in pi): lower-case scheme and
    host, no default port, ``/`` for an empty path."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host + (f":{port}" if port is not None and port != default else "")
    if parts.username is not None:
        netloc = parts.username + (f":{parts.password}" if parts.password is not None else "") + "@" + netloc
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, parts.fragment))


def server_key(name: str, url: str) -> str:
    return f"{namespace(name)}|{normalize_url(url)}"


def _try_lock(lock: Path, stale: float) -> bool:
    try:
        lock.mkdir()
        return True
    except FileExistsError:
        pass
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age > stale:  # its holder died: take it over
        with contextlib.suppress(OSError):
            lock.rmdir()
    return False


class AuthStore:
    """``<agent dir>/mcp-auth.json``."""

    def __init__(self, agents: Path) -> None:
        self.dir = Path(agents)
        self.path = self.dir / AUTH_FILE

    # -- the file ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.path.exists():
            self._write({})
        real = Path(os.path.realpath(self.path))
        lock = real.with_name(real.name + ".lock")
        deadline = time.monotonic() + FILE_LOCK_WAIT
        delay = 0.005
        while not _try_lock(lock, FILE_LOCK_STALE):
            if time.monotonic() > deadline:
                raise AuthLockBusy(f"{self.path} is locked by another process ({lock} exists)")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                lock.rmdir()

    def read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        if not text.strip():
            return {}
        parsed = json.loads(text)
        return parsed if isinstance(parsed, dict) else {}

    def _write(self, states: dict[str, Any]) -> None:
        target = Path(os.path.realpath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(states, indent=2) + "\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def update(self, change: Callable[[dict[str, Any]], T]) -> T:
        """Run ``change`` on the file's contents under the lock; write them back when they changed."""
        with self._locked():
            states = self.read()
            before = json.dumps(states, sort_keys=True)
            result = change(states)
            if json.dumps(states, sort_keys=True) != before:
                self._write(states)
            return result

    # -- one server ----------------------------------------------------------------------------

    def load(self, name: str, url: str) -> dict[str, Any] | None:
        """The server's state; takes over legacy state stored by URL alone."""
        key, legacy = server_key(name, url), normalize_url(url)
        states = self.read()
        if key in states or legacy not in states:
            state = states.get(key)
            return state if isinstance(state, dict) else None

        def take_over(states: dict[str, Any]) -> Any:
            if key not in states and legacy in states:
                states[key] = states.pop(legacy)
            return states.get(key)

        state = self.update(take_over)
        return state if isinstance(state, dict) else None

    def save(self, name: str, url: str, state: dict[str, Any]) -> None:
        key = server_key(name, url)

        def put(states: dict[str, Any]) -> None:
            states[key] = state

        self.update(put)

    def modify(self, name: str, url: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Change the server's state in place (a new one starts as ``{"serverUrl": ...}``); returns it.
        State stored for another server URL under this key is replaced, so credentials never cross servers."""
        key, server_url = server_key(name, url), normalize_url(url)

        def apply(states: dict[str, Any]) -> dict[str, Any]:
            current = states.get(key)
            state = dict(current) if isinstance(current, dict) and current.get("serverUrl") == server_url \
                else {"serverUrl": server_url}
            change(state)
            states[key] = state
            return state

        return self.update(apply)

    def tokens(self, name: str, url: str) -> dict[str, Any] | None:
        states = self.read()
        state = states.get(server_key(name, url)) or states.get(normalize_url(url))
        tokens = state.get("tokens") if isinstance(state, dict) else None
        return tokens if isinstance(tokens, dict) else None

    def remove(self, name: str, url: str) -> bool:
        """Delete the server's stored credentials; whether there were any."""
        key, legacy = server_key(name, url), normalize_url(url)
        if not self.path.exists():
            return False

        def drop(states: dict[str, Any]) -> bool:
            stored = key if key in states else legacy if legacy in states else None
            if stored is None:
                return False
            del states[stored]
            return True

        return self.update(drop)

    @contextlib.asynccontextmanager
    async def refresh_lock(self, name: str, url: str) -> AsyncIterator[None]:
        """pi's per-server refresh lock; renewed while held, taken over once stale."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        digest = hashlib.sha256(server_key(name, url).encode()).hexdigest()[:16]
        lock = self.dir / f"mcp-auth-refresh-{digest}.lock"
        deadline = time.monotonic() + REFRESH_LOCK_WAIT
        while not _try_lock(lock, REFRESH_LOCK_STALE):
            if time.monotonic() > deadline:
                raise AuthLockBusy("another process is refreshing this MCP server's sign-in")
            await asyncio.sleep(0.1)

        async def renew() -> None:
            while True:
                await asyncio.sleep(REFRESH_LOCK_STALE / 2)
                with contextlib.suppress(OSError):
                    os.utime(lock)

        renewer = asyncio.ensure_future(renew())
        try:
            yield
        finally:
            renewer.cancel()
            with contextlib.suppress(FileNotFoundError):
                lock.rmdir()


__all__ = ["AUTH_FILE", "AuthLockBusy", "AuthStore", "normalize_url", "server_key"]
