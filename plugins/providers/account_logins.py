"""Account sign-ins of API-key providers that also offer one: xAI (SuperGrok / X Premium), Kimi Code,
Meta (Muse) and OpenRouter. Each is an :class:`~pi_core.ai.OAuthFlow`; the provider plugins attach them.

* xAI and Kimi Code: a device code, then ordinary refresh tokens (``KIMI_CODE_OAUTH_HOST`` points Kimi at
  another authorization host).
* Meta: a device code yields an identity token that cannot be refreshed and is not accepted for
  inference; it is exchanged for a Model API key (about a day long). The identity token is kept as
  ``refresh`` and the key as ``access``, so "refreshing" mints a new key; when Meta refuses, sign in again.
* OpenRouter: PKCE with a loopback redirect (a random path stands in for the state OpenRouter does not
  send) exchanges the code for a permanent, user-controlled API key, stored as a credential that never
  expires.
"""

from __future__ import annotations

import os
import secrets
from typing import Any
from urllib.parse import urlencode

from pi_core.ai import (
    AuthResult,
    AuthUrlEvent,
    DeviceCodeOAuth,
    LoginInteraction,
    OAuthError,
    ProgressEvent,
    auth_request,
    auth_url,
    callback_or_paste,
    parse_pasted_code,
    pkce_pair,
    start_callback_server,
    token_fields,
)

FIVE_MINUTES = 300.0


def xai_login() -> DeviceCodeOAuth:
    return DeviceCodeOAuth("xAI (Grok/X subscription)", client_id="b1a00492-073a-47ea-816f-4c329264a828",
                           device_url="https://auth.x.ai/oauth2/device/code", token_url="https://auth.x.ai/oauth2/token",
                           scope="openid profile email offline_access grok-cli:access api:access",
                           device_fields={"referrer": "pi"}, margin_s=FIVE_MINUTES, default_expires_in=3600)


class KimiLogin(DeviceCodeOAuth):
    def __init__(self) -> None:
        super().__init__("Kimi Code (subscription)", client_id="17e5f671-d194-4dfb-9706-5516cb48c098",
                         device_url="/api/oauth/device_authorization", token_url="/api/oauth/token",
                         https_only=False)

    def urls(self) -> tuple[str, str]:
        host = (os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST")
                or "https://auth.kimi.com").rstrip("/")
        return host + self.device_url, host + self.token_url


class MetaLogin(DeviceCodeOAuth):
    MINT_URL = "https://api.meta.ai/muse-code/key"
    KEY_LIFETIME_S = 24 * 3600

    def __init__(self) -> None:
        super().__init__("Meta (Muse subscription)", client_id="1031625952748946",
                         device_url="https://auth.meta.com/oidc/device/authorization/",
                         token_url="https://auth.meta.com/oidc/device/token/")

    async def credential(self, tokens: dict[str, Any], previous: dict[str, Any] | None,
                         interaction: LoginInteraction | None = None) -> dict[str, Any]:
        if interaction is not None:
            interaction.notify(ProgressEvent("Enabling Meta Model API access..."))
        return await self._mint(tokens["access_token"])

    async def _mint(self, identity: str) -> dict[str, Any]:
        import time

        response = await auth_request("POST", self.MINT_URL, json={}, headers={
            "Authorization": f"Bearer {identity}", "x-api-version": "1.0.0"})
        if response.status_code in (401, 403):
            raise OAuthError(f"the Meta session has expired ({response.status_code})")
        body = token_fields(response, "Meta API key mint")
        if not isinstance(body.get("api_key"), str) or not body["api_key"]:
            action = body.get("action_url")
            raise OAuthError("Meta did not issue an API key." + (f" Complete the setup at {action}" if
                                                                 isinstance(action, str) else ""))
        return {"type": "oauth", "refresh": identity, "access": body["api_key"],
                "expires": int((time.time() + self.KEY_LIFETIME_S) * 1000)}

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        return await self._mint(credential["refresh"])


class OpenRouterLogin:
    """OpenRouter's PKCE sign-in, which yields an API key (an :class:`~pi_core.ai.OAuthFlow`)."""

    name = "OpenRouter OAuth"
    is_subscription = False
    AUTHORIZE_URL = "https://openrouter.ai/auth"
    KEYS_URL = "https://openrouter.ai/api/v1/auth/keys"

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        verifier, challenge = pkce_pair()
        path = f"/oauth/callback/{secrets.token_hex(16)}"
        callback = await start_callback_server("OpenRouter", port=0, path=path, state=None)
        try:
            query = urlencode({"callback_url": callback.redirect_uri, "code_challenge": challenge,
                               "code_challenge_method": "S256"})
            interaction.notify(AuthUrlEvent(auth_url(f"{self.AUTHORIZE_URL}?{query}"),
                                            "Complete the sign-in in your browser. If the browser runs on another "
                                            "machine, paste the address it was sent to here."))
            got = await callback_or_paste(interaction, callback, "Paste the authorization code or redirect URL",
                                          callback.redirect_uri)
            code = got.value if got.kind == "callback" else parse_pasted_code(got.value)[0]
            if not code:
                raise OAuthError("No authorization code was given.")
            interaction.notify(ProgressEvent("Exchanging the authorization code for an API key..."))
            response = await auth_request("POST", self.KEYS_URL, json={
                "code": code, "code_verifier": verifier, "code_challenge_method": "S256"})
            body = token_fields(response, "OpenRouter key exchange")
            if not isinstance(body.get("key"), str) or not body["key"]:
                raise OAuthError('OpenRouter\'s answer carries no "key"')
            return {"type": "oauth", "access": body["key"], "refresh": "", "expires": 2 ** 53 - 1}
        finally:
            await callback.close()

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        return credential  # the key does not expire

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        return AuthResult(api_key=credential["access"], source="OpenRouter sign-in", kind="oauth")


__all__ = ["KimiLogin", "MetaLogin", "OpenRouterLogin", "xai_login"]
