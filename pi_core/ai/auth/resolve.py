"""Which credential a request to a provider uses, in pi's order, and OAuth refresh under the lock.

1. an explicit key (``--api-key``, ``api_key=``);
2. the provider's entry in ``auth.json``: an OAuth credential (refreshed first when it expires within
   five minutes, or when the caller asks because the server answered 401), or an API key (a config
   value: ``!command``, ``$VAR``, literal) with its ``env`` object overlaying the environment;
3. the ``apiKey`` of ``models.json`` or of the plugin's :class:`~pi_core.ai.ProviderConfig`;
4. ambient credentials: the provider's ``ProviderAuth.ambient`` (cloud credential chains, Anthropic's
   bearer token) or else its API-key environment variables.

A stored credential owns its provider: when its refresh fails, resolution fails with an error telling
the user to sign in again; it does not fall back silently to an environment variable.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..credentials import env_api_key, resolve_config_value
from .store import CredentialStore, CredentialStoreError
from .types import AuthError, AuthResult, OAuthFlow, ProviderAuth

if TYPE_CHECKING:
    from ..registry import ProviderConfig

#: A token expiring within this many milliseconds is refreshed before use (pi's rule).
REFRESH_MARGIN_MS = 5 * 60 * 1000
#: How long one refresh request may take.
REFRESH_TIMEOUT_S = 30.0


def now_ms() -> int:
    return int(time.time() * 1000)


def expires_soon(credential: Mapping[str, Any], margin_ms: int = REFRESH_MARGIN_MS) -> bool:
    return now_ms() + margin_ms >= float(credential.get("expires") or 0)


def login_hint(provider: str) -> str:
    return f"Sign in again with `pi auth login {provider}` (or /login {provider})."


def stored_api_key(entry: Mapping[str, Any], environ: Mapping[str, str]) -> AuthResult | None:
    env = dict(entry.get("env") or {})
    key = resolve_config_value(entry.get("key"), {**environ, **env}) if entry.get("key") else None
    if key is None:
        return None
    return AuthResult(api_key=key, env=env or None, source="auth.json")


def oauth_auth(provider: str, entry: dict[str, Any], flow: OAuthFlow | None) -> AuthResult:
    if flow is None:  # a sign-in made by a program whose flow is not installed here: use the token as is
        return AuthResult(api_key=entry.get("access"), source="auth.json (OAuth)", kind="oauth")
    result = flow.to_auth(entry)
    result.kind, result.source = "oauth", result.source or "OAuth"
    return result


async def refresh_credential(store: CredentialStore, provider: str, flow: OAuthFlow, *,
                             force_after: float | None = None,
                             margin_ms: int = REFRESH_MARGIN_MS) -> dict[str, Any] | None:
    """Refresh ``provider``'s stored OAuth credential under the ``auth.json`` lock and store the result.

    Inside the lock the file is read again: when another process (or request) refreshed meanwhile, its
    credential is used and no second refresh is made. ``force_after`` (a token's ``expires``) forces a
    refresh of the token that was rejected, unless the stored one is already newer. The refresh runs to
    completion even if the caller is cancelled, because the server may already have rotated the
    refresh token. Returns the stored credential, or ``None`` when the provider was signed out meanwhile.
    """

    def needs(current: Mapping[str, Any]) -> bool:
        if force_after is not None:
            return float(current.get("expires") or 0) <= force_after
        return expires_soon(current, margin_ms)

    async def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
        if current is None or current.get("type") != "oauth" or not needs(current):
            return None
        try:
            renewed = await asyncio.wait_for(flow.refresh(current), REFRESH_TIMEOUT_S)
        except asyncio.TimeoutError as exc:
            raise AuthError(f"Refreshing the {flow.name} sign-in timed out. {login_hint(provider)}") from exc
        except Exception as exc:
            raise AuthError(f"Refreshing the {flow.name} sign-in failed: {exc}. {login_hint(provider)}") from exc
        return {**renewed, "type": "oauth"}

    task = asyncio.ensure_future(store.modify(provider, change))
    try:
        result = await asyncio.shield(task)
    except CredentialStoreError as exc:
        raise AuthError(f"Could not update {store.path}: {exc}") from exc
    return result if result is not None and result.get("type") == "oauth" else None


class Resolver:
    """The auth steps for one registry (its store, environment and provider configs)."""

    def __init__(self, store: CredentialStore | None, env: Mapping[str, str] | None) -> None:
        self.store = store
        self.env = env

    def environ(self) -> Mapping[str, str]:
        import os

        return os.environ if self.env is None else self.env

    def stored(self, provider: str) -> dict[str, Any] | None:
        return self.store.get(provider) if self.store is not None else None

    # -- the steps ----------------------------------------------------------------------------------
    def configured_key(self, config: ProviderConfig | None, custom: str | None) -> AuthResult | None:
        for value, source in ((custom, "models.json"), (config.api_key if config else None, "provider config")):
            if value:
                key = resolve_config_value(value, self.environ())
                if key:
                    return AuthResult(api_key=key, source=source)
        return None

    def env_key(self, config: ProviderConfig | None) -> AuthResult | None:
        if config is None:
            return None
        for name in config.env_vars():
            key = env_api_key(name, self.environ())
            if key:
                return AuthResult(api_key=key, source=name)
        return None

    async def ambient(self, config: ProviderConfig | None, auth: ProviderAuth) -> AuthResult | None:
        if auth.ambient is None:
            return self.env_key(config)
        result = auth.ambient(self.environ())
        if inspect.isawaitable(result):
            result = await result
        return result

    def ambient_sync(self, config: ProviderConfig | None, auth: ProviderAuth) -> AuthResult | None:
        if auth.ambient is None:
            return self.env_key(config)
        if inspect.iscoroutinefunction(auth.ambient):
            return None
        result = auth.ambient(self.environ())
        if inspect.isawaitable(result):
            result.close()  # type: ignore[union-attr]
            return None
        return result

    # -- resolution ----------------------------------------------------------------------------------
    async def resolve(self, provider: str, config: ProviderConfig | None, auth: ProviderAuth, custom: str | None,
                      explicit: str | None = None, *, reject: AuthResult | None = None,
                      min_validity_ms: int | None = None) -> AuthResult | None:
        """The auth of a request (see the module docstring). ``reject`` is the OAuth auth the server just
        refused with 401: its credential is refreshed once more."""
        if explicit:
            return AuthResult(api_key=explicit, source="--api-key")
        entry = self.stored(provider)
        if entry is not None and entry.get("type") == "oauth":
            return await self._oauth(provider, entry, auth.oauth, reject, min_validity_ms)
        found = self.stored_key(entry, auth)
        if found is not None:
            return found
        keyed = self.configured_key(config, custom) or (self.env_key(config) if auth.ambient is None else None)
        return self.shaped(keyed, auth) if keyed is not None else await self.ambient(config, auth)

    def resolve_sync(self, provider: str, config: ProviderConfig | None, auth: ProviderAuth, custom: str | None,
                     explicit: str | None = None) -> AuthResult | None:
        """Like :meth:`resolve` without refreshing or awaiting (an OAuth token is returned as stored)."""
        if explicit:
            return AuthResult(api_key=explicit, source="--api-key")
        entry = self.stored(provider)
        if entry is not None and entry.get("type") == "oauth":
            return oauth_auth(provider, entry, auth.oauth)
        found = self.stored_key(entry, auth)
        if found is not None:
            return found
        keyed = self.configured_key(config, custom) or (self.env_key(config) if auth.ambient is None else None)
        return self.shaped(keyed, auth) if keyed is not None else self.ambient_sync(config, auth)

    def stored_key(self, entry: dict[str, Any] | None, auth: ProviderAuth) -> AuthResult | None:
        """The auth of a stored API-key credential (``entry``; ``None``: nothing stored), by the
        provider's ``resolve_key`` when it has one."""
        if auth.resolve_key is not None:
            return auth.resolve_key(dict(entry) if entry is not None else None, self.environ())
        found = stored_api_key(entry, self.environ()) if entry is not None else None
        return self.shaped(found, auth) if found is not None else None

    def shaped(self, result: AuthResult, auth: ProviderAuth) -> AuthResult:
        """A key-based result as the provider wants it sent (``ProviderAuth.from_key``)."""
        if auth.from_key is None or not result.api_key:
            return result
        shaped = auth.from_key(result.api_key, {**self.environ(), **(result.env or {})})
        shaped.env = {**(result.env or {}), **(shaped.env or {})} or None
        shaped.source = shaped.source or result.source
        return shaped

    async def _oauth(self, provider: str, entry: dict[str, Any], flow: OAuthFlow | None,
                     reject: AuthResult | None, min_validity_ms: int | None) -> AuthResult | None:
        margin = max(REFRESH_MARGIN_MS, min_validity_ms or 0)
        if flow is None:
            if expires_soon(entry, 0):
                raise AuthError(f"The {provider} sign-in in auth.json has expired and this pi cannot refresh it. "
                                f"{login_hint(provider)}")
            return oauth_auth(provider, entry, None)
        rejected_expiry = reject.extra.get("expires") if reject is not None else None
        if rejected_expiry is not None or expires_soon(entry, margin):
            assert self.store is not None
            renewed = await refresh_credential(self.store, provider, flow, force_after=rejected_expiry,
                                               margin_ms=margin)
            if renewed is None:
                return None  # signed out meanwhile
            if min_validity_ms is not None and expires_soon(renewed, min_validity_ms):
                raise AuthError(f"The refreshed {flow.name} token expires in less than the requested "
                                f"{min_validity_ms // 60000} minutes.")
            entry = renewed
        result = oauth_auth(provider, entry, flow)
        result.extra.setdefault("expires", entry.get("expires"))
        return result

    def configured(self, provider: str, config: ProviderConfig | None, auth: ProviderAuth,
                   custom: str | None) -> bool:
        """Whether some credential is configured, without running commands, refreshing or network."""
        entry = self.stored(provider)
        if entry is not None and entry.get("type") == "oauth":
            return True
        if auth.resolve_key is not None:
            if auth.resolve_key(dict(entry) if entry is not None else None, self.environ()) is not None:
                return True
        elif entry is not None and entry.get("key"):
            return True
        for value in (custom, config.api_key if config else None):
            if value and _config_value_set(value, self.environ()):
                return True
        if auth.ambient_configured is not None:
            return auth.ambient_configured(self.environ())
        if auth.ambient is not None:
            return self.ambient_sync(config, auth) is not None
        return self.env_key(config) is not None


def _config_value_set(value: str, environ: Mapping[str, str]) -> bool:
    if value.startswith("!") and not value.startswith("$!"):
        return True
    return resolve_config_value(value, environ) is not None


__all__ = ["REFRESH_MARGIN_MS", "Resolver", "expires_soon", "login_hint", "refresh_credential"]
