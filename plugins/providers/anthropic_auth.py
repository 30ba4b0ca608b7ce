"""How the ``anthropic`` provider signs in: Claude Pro/Max (OAuth with PKCE), API keys, and the
environment (``ANTHROPIC_AUTH_TOKEN`` as a bearer token, ``ANTHROPIC_OAUTH_TOKEN``, ``ANTHROPIC_API_KEY``).

The browser sign-in listens for the redirect on ``localhost:53692`` (any free port when that one is
taken; Anthropic accepts any loopback port); a browser on another machine can paste the redirect URL
instead. The "copy code" sign-in shows a code on Anthropic's page to paste back. Endpoints and the
client id are those of Anthropic's own Claude Code client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from pi_core.ai import (
    AuthResult,
    AuthUrlEvent,
    LoginInteraction,
    LoginOption,
    OAuthError,
    ProgressEvent,
    ProviderAuth,
    auth_request,
    auth_url,
    callback_or_paste,
    expires_at,
    parse_pasted_code,
    pkce_pair,
    start_callback_server,
    token_fields,
)

CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
CALLBACK_PORT = 53692
CALLBACK_PATH = "/callback"
COPY_CODE_REDIRECT = "https://platform.claude.com/oauth/code/callback"
SCOPES = ("org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers "
          "user:file_upload")
#: Tokens are stored as expiring five minutes early, as pi does, so both programs refresh at the same time.
EXPIRY_MARGIN_S = 300


def _authorize_url(redirect_uri: str, challenge: str, state: str) -> str:
    query = urlencode({"code": "true", "client_id": CLIENT_ID, "response_type": "code", "redirect_uri": redirect_uri,
                       "scope": SCOPES, "code_challenge": challenge, "code_challenge_method": "S256",
                       "state": state})
    return auth_url(f"{AUTHORIZE_URL}?{query}")


def _credential(body: dict[str, Any], step: str) -> dict[str, Any]:
    if not body.get("access_token") or not body.get("refresh_token"):
        raise OAuthError(f"{step}: the answer has no access_token/refresh_token")
    return {"type": "oauth", "refresh": body["refresh_token"], "access": body["access_token"],
            "expires": expires_at(body.get("expires_in"), EXPIRY_MARGIN_S)}


async def _exchange(code: str, state: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
    response = await auth_request("POST", TOKEN_URL, json={
        "grant_type": "authorization_code", "client_id": CLIENT_ID, "code": code, "state": state,
        "redirect_uri": redirect_uri, "code_verifier": verifier})
    return _credential(token_fields(response, "Anthropic token exchange"), "Anthropic token exchange")


class AnthropicOAuth:
    """Claude Pro/Max sign-in (an :class:`~pi_core.ai.OAuthFlow`)."""

    name = "Anthropic (Claude Pro/Max)"
    is_subscription = True

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        method = await interaction.select("Select Anthropic login method:", [
            LoginOption("browser", "Browser login (default)"),
            LoginOption("copy_code", "Copy code login (headless)")])
        if method == "copy_code":
            return await self._copy_code(interaction)
        return await self._browser(interaction)

    async def _browser(self, interaction: LoginInteraction) -> dict[str, Any]:
        verifier, challenge = pkce_pair()
        callback = None
        for port in (CALLBACK_PORT, 0):
            try:
                callback = await start_callback_server("Anthropic", port=port, path=CALLBACK_PATH, state=verifier,
                                                       redirect_host="localhost")
                break
            except OSError:
                continue
        redirect_uri = callback.redirect_uri if callback else f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
        try:
            interaction.notify(AuthUrlEvent(_authorize_url(redirect_uri, challenge, verifier),
                                            "Complete the sign-in in your browser. If the browser runs on another "
                                            "machine, paste the address it was sent to here."))
            got = await callback_or_paste(interaction, callback, "Paste the authorization code or redirect URL",
                                          redirect_uri)
            code, state = (got.value, verifier) if got.kind == "callback" else parse_pasted_code(got.value)
            if state is not None and state != verifier:
                raise OAuthError("The pasted sign-in does not belong to this login (state mismatch).")
            if not code:
                raise OAuthError("No authorization code was given.")
            interaction.notify(ProgressEvent("Exchanging the authorization code for tokens..."))
            return await _exchange(code, state or verifier, verifier, redirect_uri)
        finally:
            if callback is not None:
                await callback.close()

    async def _copy_code(self, interaction: LoginInteraction) -> dict[str, Any]:
        verifier, challenge = pkce_pair()
        interaction.notify(AuthUrlEvent(_authorize_url(COPY_CODE_REDIRECT, challenge, verifier),
                                        "Sign in in your browser, then copy the code Anthropic shows."))
        code, state = parse_pasted_code(await interaction.manual_code("Paste the code Anthropic shows", "code#state"))
        if state is not None and state != verifier:
            raise OAuthError("The pasted code does not belong to this login (state mismatch).")
        if not code:
            raise OAuthError("No authorization code was given.")
        interaction.notify(ProgressEvent("Exchanging the authorization code for tokens..."))
        return await _exchange(code, state or verifier, verifier, COPY_CODE_REDIRECT)

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        response = await auth_request("POST", TOKEN_URL, json={
            "grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": credential["refresh"]})
        return _credential(token_fields(response, "Anthropic token refresh"), "Anthropic token refresh")

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        return AuthResult(api_key=credential["access"], source="Claude Pro/Max sign-in", kind="oauth")


def environment_auth(env: Mapping[str, str]) -> AuthResult | None:
    """pi's order: ``ANTHROPIC_AUTH_TOKEN`` (bearer), ``ANTHROPIC_OAUTH_TOKEN``, ``ANTHROPIC_API_KEY``."""
    token = (env.get("ANTHROPIC_AUTH_TOKEN") or "").strip()
    if token:
        return AuthResult(headers={"Authorization": f"Bearer {token}"}, source="ANTHROPIC_AUTH_TOKEN")
    for name in ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"):
        value = (env.get(name) or "").strip()
        if value:
            return AuthResult(api_key=value, source=name)
    return None


# -- workload identity federation ---------------------------------------------------------------------
FEDERATION_VARS = ("ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_IDENTITY_TOKEN_FILE")
FEDERATION_BETAS = ("oauth-2025-04-20", "oidc-federation-2026-04-01")
_federated: dict[tuple[str, ...], tuple[str, float]] = {}


def federation_configured(env: Mapping[str, str]) -> bool:
    return all(env.get(name) for name in FEDERATION_VARS)


async def federated_token(env: Mapping[str, str]) -> str:
    """An Anthropic access token for this workload's identity token (RFC 7523 jwt-bearer grant), kept
    until a minute before it expires; the identity token file is read again for every exchange, so a
    rotated file (a projected Kubernetes token) keeps working."""
    import time

    key = tuple(env.get(n) or "" for n in (*FEDERATION_VARS, "ANTHROPIC_SERVICE_ACCOUNT_ID", "ANTHROPIC_WORKSPACE_ID"))
    cached = _federated.get(key)
    if cached is not None and cached[1] - 60 > time.time():
        return cached[0]
    path = env["ANTHROPIC_IDENTITY_TOKEN_FILE"]
    try:
        assertion = open(path, encoding="utf-8").read().strip()
    except OSError as exc:
        raise OAuthError(f"Cannot read the identity token file {path}: {exc}") from exc
    if len(assertion) > 16 * 1024:
        raise OAuthError(f"The identity token in {path} is larger than Anthropic's 16 KiB limit")
    body = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion,
            "federation_rule_id": env["ANTHROPIC_FEDERATION_RULE_ID"],
            "organization_id": env["ANTHROPIC_ORGANIZATION_ID"]}
    for name, field in (("ANTHROPIC_SERVICE_ACCOUNT_ID", "service_account_id"),
                        ("ANTHROPIC_WORKSPACE_ID", "workspace_id")):
        if env.get(name):
            body[field] = env[name]
    base = (env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com").rstrip("/")
    response = await auth_request("POST", f"{base}/v1/oauth/token", json=body,
                                  headers={"anthropic-beta": ",".join(FEDERATION_BETAS)})
    if response.status_code == 401:
        hint = "" if env.get("ANTHROPIC_WORKSPACE_ID") else \
            " If the federation rule covers several workspaces, set ANTHROPIC_WORKSPACE_ID."
        raise OAuthError(f"Anthropic refused the identity token (401): check the federation rule.{hint}")
    data = token_fields(response, "Anthropic workload identity token exchange")
    if not isinstance(data.get("access_token"), str) or not isinstance(data.get("expires_in"), (int, float)):
        raise OAuthError("Anthropic's token exchange answer lacks access_token or expires_in")
    _federated[key] = (data["access_token"], time.time() + float(data["expires_in"]))
    return data["access_token"]


def ambient_auth(env: Mapping[str, str]) -> AuthResult | None | Any:
    """The environment's keys and tokens, then workload identity federation (last, as in the SDK). Only
    the federation needs a request, so only it is awaitable (synchronous callers get the keys)."""
    found = environment_auth(env)
    if found is not None or not federation_configured(env):
        return found
    return _federated_auth(env)


async def _federated_auth(env: Mapping[str, str]) -> AuthResult:
    token = await federated_token(env)
    return AuthResult(headers={"Authorization": f"Bearer {token}"}, source="workload identity federation",
                      kind="ambient", extra={"anthropic_betas": ["oauth-2025-04-20"]})


def anthropic_auth() -> ProviderAuth:
    return ProviderAuth(oauth=AnthropicOAuth(), api_key_label="Anthropic API key", ambient=ambient_auth,
                        ambient_configured=lambda env: environment_auth(env) is not None or federation_configured(env),
                        ambient_label="ANTHROPIC_* environment variables")


__all__ = ["AnthropicOAuth", "anthropic_auth", "environment_auth"]
