"""Signing in and out: run a provider's sign-in through a :class:`LoginInteraction` and store the result.

Hosts (``pi auth login``, ``/login``, an SDK application) call :func:`login_provider` with the registry whose
providers they offer; the credential goes to that registry's ``auth.json`` under the lock, so a sign-in
made while another pi runs is seen by it at its next request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .interaction import LoginCancelled, LoginInteraction
from .types import AuthError

if TYPE_CHECKING:
    from ..registry import ModelRegistry

Method = Literal["oauth", "api_key"]


@dataclass
class LoginMethod:
    """One way to sign in to a provider that ``/login`` offers: ``kind`` ``oauth`` (a sign-in flow) or
    ``api_key`` (a key typed in), shown as ``label``."""

    kind: Method
    label: str
    login_label: str = ""
    """What ``/login`` offers for this method when it is not ``Sign in with <label>`` (a flow's optional
    ``login_label``: ``"Sign in with ChatGPT"``)."""


def provider_label(registry: ModelRegistry, provider: str) -> str:
    config = registry.get_provider(provider)
    return (config.display_name if config is not None and config.display_name else "") or provider


def login_methods(registry: ModelRegistry, provider: str) -> list[LoginMethod]:
    """How ``provider`` can be signed in to: its account sign-in first (when it has one), then an API key."""
    auth = registry.provider_auth(provider)
    config = registry.get_provider(provider)
    methods = ([LoginMethod("oauth", auth.oauth.name, getattr(auth.oauth, "login_label", "") or "")]
               if auth.oauth is not None else [])
    if auth.api_key_login and (config is None or config.requires_api_key or auth.key_login is not None):
        methods.append(LoginMethod("api_key", auth.api_key_label))
    return methods


def _store(registry: ModelRegistry) -> Any:
    if registry.credentials is None:
        raise AuthError("This registry has no auth.json (it was made with load_files=False).")
    return registry.credentials


async def login_provider(registry: ModelRegistry, provider: str, interaction: LoginInteraction,
                method: Method | None = None) -> dict[str, Any]:
    """Sign in to ``provider`` (``method`` default: the account sign-in if it has one, else an API key)
    and store the credential. Returns it. Raises :class:`AuthError`, :class:`LoginCancelled` or the
    flow's error; nothing is stored then."""
    if registry.get_provider(provider) is None:
        raise AuthError(f'Unknown provider "{provider}".')
    methods = {m.kind: m for m in login_methods(registry, provider)}
    kind = method or ("oauth" if "oauth" in methods else "api_key")
    if kind not in methods:
        label = provider_label(registry, provider)
        raise AuthError(f"{label} has no API key sign-in; sign in with its account instead." if kind == "api_key"
                        else f"{label} has no account sign-in; use an API key.")
    store = _store(registry)
    if kind == "oauth":
        flow = registry.provider_auth(provider).oauth
        assert flow is not None
        credential = {**await flow.login(interaction), "type": "oauth"}
    elif (key_login := registry.provider_auth(provider).key_login) is not None:
        credential = {**await key_login(interaction, registry.environ()), "type": "api_key"}
    else:
        key = (await interaction.secret(f"Enter {methods['api_key'].label}")).strip()
        if not key:
            raise LoginCancelled("No API key was entered.")
        credential: dict[str, Any] = {"type": "api_key", "key": key}
        previous = store.get(provider)
        env = dict(previous.get("env") or {}) if previous is not None and previous.get("type") == "api_key" else {}
        for name, prompt in registry.provider_auth(provider).api_key_fields:
            value = (await interaction.text(prompt, env.get(name, ""))).strip() or env.get(name, "")
            if not value:
                raise LoginCancelled(f"No value was entered for {name}.")
            env[name] = value
        if env:
            credential["env"] = env  # kept from the old entry, or asked for just now
    store.set(provider, credential)
    return credential


def logout_provider(registry: ModelRegistry, provider: str) -> bool:
    """Remove the stored credential of ``provider``; ``False`` when none was stored. Environment variables
    and ``models.json`` are not touched."""
    return bool(_store(registry).delete(provider))


__all__ = ["LoginMethod", "login_methods", "login_provider", "logout_provider", "provider_label"]
