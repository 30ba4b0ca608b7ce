"""The provider-auth interface: how a provider signs in, and what a request is authenticated with.

A provider plugin attaches a :class:`ProviderAuth` to its :class:`~pi_core.ai.ProviderConfig`:

* ``oauth`` — an :class:`OAuthFlow`: ``login`` runs the sign-in (browser with a loopback redirect, a
  pasted code, or a device code) through a :class:`~pi_core.ai.LoginInteraction` and returns the
  credential to store; ``refresh`` renews it; ``to_auth`` turns a stored credential into request auth.
* ``api_key_login`` — whether ``/login`` may ask for an API key (every provider has this by default).
* ``key_login`` / ``resolve_key`` — an API-key sign-in that asks for more (or less) than a key, and how
  its stored credential is used (a local server's URL with an optional key).
* ``ambient`` — credentials found outside ``auth.json`` (environment variables, cloud credential chains);
  ``ambient_configured`` answers cheaply whether there are any, without network or subprocesses.

Credentials are plain JSON objects in pi's ``auth.json`` format (``{"type": "oauth", "access", "refresh",
"expires", ...}``, ``expires`` in milliseconds since 1970); a flow may add fields of its own (Codex's
``accountId``, Copilot's ``enterpriseUrl``), which are stored and handed back unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .interaction import LoginInteraction

AuthKind = Literal["api_key", "oauth", "ambient"]


@dataclass
class AuthResult:
    """What one request is authenticated with.

    ``api_key`` is handed to the API implementation (``StreamOptions.api_key``); ``headers`` are added to
    the request (an ``Authorization`` bearer, for example; ``None`` removes a header); ``base_url`` replaces the model's (Copilot's
    per-account endpoint); ``env`` overlays the process environment for this provider (a stored
    credential's ``env`` object: Azure resource names, Cloudflare account ids); ``source`` says where the
    credential came from (``--api-key``, ``auth.json``, ``OAuth``, ``models.json``, an environment
    variable's name); ``kind`` is ``oauth`` for tokens that can be refreshed.
    """

    api_key: str | None = None
    headers: dict[str, str | None] | None = None
    base_url: str | None = None
    env: dict[str, str] | None = None
    source: str = ""
    kind: AuthKind = "api_key"
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else a provider's API implementation needs (AWS credentials, a Google token)."""


@runtime_checkable
class OAuthFlow(Protocol):
    """A subscription or account sign-in. Implementations are plain objects with these members."""

    name: str
    """Shown in ``/login``: ``"Anthropic (Claude Pro/Max)"``. A flow may also have a ``login_label``
    (``"Sign in with ChatGPT"``), offered instead of ``Sign in with <name>`` when a provider has two methods."""
    is_subscription: bool

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        """Sign in; return the credential to store (``type`` ``"oauth"``). Raise to fail the login."""
        ...

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        """A renewed credential for ``credential`` (called under the ``auth.json`` lock)."""
        ...

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        """Request auth for a valid (unexpired) credential."""
        ...


AmbientFn = Callable[[Mapping[str, str]], "AuthResult | None | Awaitable[AuthResult | None]"]
KeyLoginFn = Callable[["LoginInteraction", Mapping[str, str]], Awaitable[dict[str, Any]]]
ResolveKeyFn = Callable[["dict[str, Any] | None", Mapping[str, str]], "AuthResult | None"]


@dataclass
class ProviderAuth:
    """How a provider authenticates (see the module docstring)."""

    oauth: OAuthFlow | None = None
    api_key_login: bool = True
    api_key_label: str = "API key"
    ambient: AmbientFn | None = None
    ambient_configured: Callable[[Mapping[str, str]], bool] | None = None
    ambient_label: str = ""
    """Where ambient credentials come from, for messages (``"the AWS credential chain"``)."""
    from_key: Callable[[str, Mapping[str, str]], AuthResult] | None = None
    """How an API key (stored, from ``models.json`` or the environment) is sent, when not as
    ``api_key`` (Cloudflare's gateway wants it in its own header). Gets the key and the environment."""
    api_key_fields: Sequence[tuple[str, str]] = ()
    """Further values an API-key sign-in asks for and stores in the credential's ``env`` object:
    ``(variable, prompt)`` pairs (Cloudflare's account id)."""
    key_login: KeyLoginFn | None = None
    """Replaces the API-key prompt of ``/login`` and ``pi auth login``: asks what the provider needs
    through the :class:`~pi_core.ai.LoginInteraction` (gets it and the environment), checks it if it
    likes, and returns the ``api_key`` credential to store. Its ``key`` may be left out (a local server
    without one); other values go in its ``env`` object. Raise to fail the sign-in (nothing is stored).
    llama.cpp asks for a server URL and an optional key."""
    resolve_key: ResolveKeyFn | None = None
    """How the provider's stored API-key credential (``None`` when there is none) becomes request auth,
    when not simply as its ``key``: gets the credential and the environment, returns the ``AuthResult``
    or ``None`` (then ``models.json``'s key and the environment are tried as usual). It also decides
    whether the provider counts as configured, so it must be cheap: no network, no commands.
    llama.cpp is configured by a server URL, with or without a key."""


class AuthError(RuntimeError):
    """Sign-in or credential resolution failed; the message says what to do."""


__all__ = ["AmbientFn", "AuthError", "AuthKind", "AuthResult", "KeyLoginFn", "OAuthFlow", "ProviderAuth", "ResolveKeyFn"]
