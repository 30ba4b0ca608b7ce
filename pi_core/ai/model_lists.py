"""Model lists a provider fetches at run time, and the file that keeps them: ``<agent dir>/models-store.json``.

Some catalogs cannot be known in advance: OpenRouter narrows its models (and their limits and prices) to
what the user's key may use, a llama.cpp router serves whatever models are loaded on it. A provider plugin
declares a fetcher, ``ProviderConfig.fetch_models``; :meth:`ModelRegistry.refresh_models
<pi_core.ai.ModelRegistry.refresh_models>` calls it with a :class:`ModelListContext` and saves what it
returns. Until the next refresh, the saved list *is* the provider's catalog, offline too; an empty saved
list falls back to the built-in catalog.

The file is pi's (shared with it, written under the same lock as ``auth.json``)::

    {"openrouter": {"models": [{"id": "openai/gpt-4o", "api": "openai-completions", ...}],
                    "checkedAt": 1767225600000}}

Entries of other providers and models of kinds this program does not use (pi's image and classifier
models, ``"type": "image"``) are kept as they are when a list is saved.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .auth.lock import locked_async
from .auth.types import AuthResult
from .types import Model

STORE_FILE = "models-store.json"
#: Seconds one provider's refresh may take (pi gives a refresh 15 s).
REFRESH_TIMEOUT_S = 15.0


def network_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether model lists may be fetched: not with ``PI_OFFLINE`` set (``--offline`` sets it)."""
    value = (os.environ if environ is None else environ).get("PI_OFFLINE", "")
    return value.strip().lower() in ("", "0", "false", "no")


@dataclass
class ModelListContext:
    """What a model-list fetcher gets.

    ``catalog`` is the provider's built-in models (provider defaults filled in); ``stored`` the list saved
    by the last refresh (empty when there is none); ``auth`` the credential a request would use now
    (``auth.api_key``; ``auth.base_url`` when the credential names an endpoint); ``base_url`` the
    provider's endpoint with ``models.json``'s override applied (and the credential's ``base_url`` when it
    has one); ``env`` the environment with the credential's ``env`` object on top.
    """

    provider: str
    catalog: list[Model]
    stored: list[Model]
    auth: AuthResult
    base_url: str
    env: Mapping[str, str] = field(default_factory=dict)


ModelFetcher = Callable[[ModelListContext], Awaitable[list[Model]]]


@dataclass
class ModelRefreshResult:
    """What :meth:`~pi_core.ai.ModelRegistry.refresh_models` did, per provider: ``refreshed`` (fetched and
    saved), ``skipped`` (provider → why: offline, not configured, checked recently) and ``errors``
    (provider → message); ``auth_errors`` names the providers whose error is a sign-in that could not be
    refreshed (signing in again fixes it)."""

    refreshed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    auth_errors: set[str] = field(default_factory=set)


def now_ms() -> int:
    return int(time.time() * 1000)


def _is_chat(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("type", "chat") == "chat"


class ModelStore:
    """One ``models-store.json`` (``path=None``: kept in memory only). Reads are cached until the file
    changes on disk."""

    def __init__(self, path: Path | str | None) -> None:
        self.path = Path(path) if path is not None else None
        self._data: dict[str, Any] = {}
        self._seen: tuple[int, int] | None | bool = False
        self._parsed: dict[str, list[Model]] = {}

    def _revision(self) -> tuple[int, int] | None:
        if self.path is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def _read_disk(self) -> dict[str, Any]:
        if self.path is None:
            return dict(self._data)
        try:
            text = self.path.read_text(encoding="utf-8").removeprefix("\ufeff")
        except OSError:
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError:
            return {}  # half-written by another program, or damaged: nothing saved (a refresh rewrites it)
        return data if isinstance(data, dict) else {}

    def entry(self, provider: str) -> dict[str, Any] | None:
        """The saved entry of ``provider`` as stored (``models``, ``checkedAt``), or ``None``."""
        revision = self._revision()
        if revision != self._seen:
            self._data, self._seen, self._parsed = self._read_disk(), revision, {}
        found = self._data.get(provider)
        return found if isinstance(found, dict) else None

    def models(self, provider: str) -> list[Model]:
        """The saved chat models of ``provider`` (entries that are not valid models are left out)."""
        entry = self.entry(provider)
        if provider not in self._parsed:
            out: list[Model] = []
            raw = entry.get("models") if entry else None
            for item in raw if isinstance(raw, list) else []:
                if not _is_chat(item) or item.get("provider", provider) != provider:
                    continue
                with contextlib.suppress(ValueError):
                    out.append(Model.model_validate({**item, "provider": provider}))
            self._parsed[provider] = out
        return list(self._parsed[provider])

    def checked_at(self, provider: str) -> int | None:
        entry = self.entry(provider)
        value = entry.get("checkedAt") if entry else None
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    async def save(self, provider: str, models: list[Model]) -> None:
        """Replace ``provider``'s saved list (under the lock, keeping every other entry)."""
        if self.path is None:
            self._data = self._merged(self._data, provider, models)
            self._parsed.pop(provider, None)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        async with locked_async(self.path):
            self._write(self._merged(self._read_disk(), provider, models))

    @staticmethod
    def _merged(data: dict[str, Any], provider: str, models: list[Model]) -> dict[str, Any]:
        previous = data.get(provider) if isinstance(data.get(provider), dict) else {}
        kept = [m for m in previous.get("models") or [] if isinstance(m, dict) and not _is_chat(m)]
        listed = [{**m.model_dump(mode="json", by_alias=True, exclude_none=True), "type": "chat"} for m in models]
        return {**data, provider: {"models": listed + kept, "checkedAt": now_ms()}}

    def _write(self, data: dict[str, Any]) -> None:
        assert self.path is not None
        target = Path(os.path.realpath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, indent=2, ensure_ascii=False))
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._seen = False


__all__ = ["STORE_FILE", "ModelFetcher", "ModelListContext", "ModelRefreshResult", "ModelStore",
           "network_allowed"]
