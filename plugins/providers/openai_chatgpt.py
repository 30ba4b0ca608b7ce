"""Sign in with ChatGPT for the plain ``openai`` provider (pi 1.6's ``/login openai``).

A public-client OAuth flow with PKCE whose token goes straight to ``api.openai.com`` (the Responses API),
as pi does: every login registers a new client (``client_id=dynamic_agent_client``) and OpenAI names the
issued client id in the redirect (``client_id=`` next to ``code`` and ``state``). The redirect comes to
``http://127.0.0.1:1455/auth/callback``; when that port is taken (another login, or the Codex CLI) the
sign-in fails with a clear error instead of catching someone else's redirect. The final redirect URL
can also be pasted (a browser on another machine).

The installation is named to OpenAI by a stable ``urn:uuid:<deviceId>``; the UUID is kept as
``deviceId`` in the global ``settings.json`` (made on first use, as pi does).

The credential (``type: oauth``) carries ``clientId`` and ``scopes``; ``expires`` is three minutes short of
the real expiry, so no request starts with a token about to run out. A refresh sends the same
``client_id`` and ``resource``. Requests with such a token drop the fields this kind of token may not use
(see :func:`is_chatgpt_sign_in` in ``openai_responses``).
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pi_core.ai import (
    AuthResult,
    AuthUrlEvent,
    LoginInteraction,
    OAuthError,
    ProgressEvent,
    auth_request,
    auth_url,
    callback_or_paste,
    pkce_pair,
    random_state,
    start_callback_server,
    token_fields,
)

DYNAMIC_CLIENT_ID = "dynamic_agent_client"
AGENT_NAME = "Pi"
AUTHORIZE_URL = "https://auth.openai.com/api/accounts/authorize"
TOKEN_URL = "https://auth.openai.com/api/accounts/oauth/token"
RESOURCE = "https://api.openai.com/v1"
CALLBACK_PORT = 1455
CALLBACK_PATH = "/auth/callback"
REDIRECT_URI = f"http://127.0.0.1:{CALLBACK_PORT}{CALLBACK_PATH}"
DIRECT_TOKEN_SCOPE = "chatgpt.tokens.use.direct"
SCOPE = f"openid profile email offline_access resource.invoke {DIRECT_TOKEN_SCOPE}"
EXPIRY_MARGIN_MS = 3 * 60 * 1000
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def device_id(agent_dir: Path | None = None) -> str:
    """This installation's ``deviceId`` from the global ``settings.json``, created (and saved) on first use."""
    from pi_core import Settings
    from pi_core import agent_dir as default_agent_dir

    directory = agent_dir or default_agent_dir()
    settings = Settings.load(directory, directory, trusted=False)
    value = settings.scope_data("global").get("deviceId")
    if isinstance(value, str) and _UUID.match(value):
        return value
    value = str(uuid.uuid4())
    directory.mkdir(parents=True, exist_ok=True)
    settings.set_global("deviceId", value)
    return value


def _string(token: dict[str, Any], field: str) -> str:
    value = token.get(field)
    if not isinstance(value, str) or not value.strip():
        raise OAuthError(f"OpenAI OAuth token response has invalid {field}")
    return value


def _credential(token: dict[str, Any], client_id: str) -> dict[str, Any]:
    access, refresh, scope = _string(token, "access_token"), _string(token, "refresh_token"), _string(token, "scope")
    expires_in = token.get("expires_in")
    if isinstance(expires_in, bool) or not isinstance(expires_in, (int, float)) or expires_in <= 0:
        raise OAuthError("OpenAI OAuth token response has invalid expires_in")
    scopes = scope.split()
    if DIRECT_TOKEN_SCOPE not in scopes:
        raise OAuthError(f"OpenAI OAuth grant did not include {DIRECT_TOKEN_SCOPE}")
    return {"type": "oauth", "access": access, "refresh": refresh,
            "expires": int(time.time() * 1000 + expires_in * 1000 - EXPIRY_MARGIN_MS),
            "clientId": client_id, "scopes": scopes}


async def _token(fields: dict[str, str], step: str) -> dict[str, Any]:
    response = await auth_request("POST", TOKEN_URL, data=fields, headers={"accept": "application/json"})
    return token_fields(response, step)


def _pasted(text: str, state: str) -> tuple[str, str]:
    """``(code, client_id)`` from a pasted redirect URL (it must be the loopback address pi asked for)."""
    parts = urlsplit(text.strip())
    if not parts.scheme or not parts.netloc:
        raise OAuthError("Paste the full callback URL from the browser")
    if f"{parts.scheme}://{parts.netloc}{parts.path}" != REDIRECT_URI:
        raise OAuthError(f"The pasted callback URL must start with {REDIRECT_URI}")
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    if query.get("error"):
        raise OAuthError(f"ChatGPT authorization failed: {query['error']}")
    return _checked(query, state)


def _checked(query: dict[str, str], state: str) -> tuple[str, str]:
    if not query.get("code"):
        raise OAuthError("Missing authorization code")
    if not query.get("state"):
        raise OAuthError("Missing OAuth state")
    if query["state"] != state:
        raise OAuthError("OAuth state mismatch")
    client_id = (query.get("client_id") or "").strip()
    if not client_id:
        raise OAuthError("OpenAI OAuth registration callback did not contain an issued client ID")
    return query["code"], client_id


class ChatGPTOAuth:
    """Sign in with ChatGPT on the ``openai`` provider (an :class:`~pi_core.ai.OAuthFlow`)."""

    name = "OpenAI (ChatGPT subscription)"
    login_label = "Sign in with ChatGPT"
    is_subscription = True

    def __init__(self, agent_dir: Path | None = None) -> None:
        self.agent_dir = agent_dir

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        host_id = f"urn:uuid:{device_id(self.agent_dir).lower()}"
        verifier, challenge = pkce_pair()
        state, nonce = random_state(), random_state()
        try:
            callback = await start_callback_server("ChatGPT", port=CALLBACK_PORT, path=CALLBACK_PATH, state=state)
        except OSError as exc:
            raise OAuthError(f"Port {CALLBACK_PORT} is in use, probably by an unfinished login in another pi session "
                             "or by the Codex CLI. Cancel that login and try again.") from exc
        try:
            query = urlencode({"client_id": DYNAMIC_CLIENT_ID, "agent_name_hint": AGENT_NAME,
                               "ext_agent_host_id": host_id, "response_type": "code", "redirect_uri": REDIRECT_URI,
                               "resource": RESOURCE, "scope": SCOPE, "state": state, "code_challenge": challenge,
                               "code_challenge_method": "S256", "nonce": nonce})
            interaction.notify(AuthUrlEvent(auth_url(f"{AUTHORIZE_URL}?{query}"),
                                            "Complete sign-in in your browser. If the callback does not complete, "
                                            "paste the final redirect URL here."))
            got = await callback_or_paste(interaction, callback, "Complete login in your browser, or paste the "
                                          "final redirect URL here:", REDIRECT_URI)
            if got.kind == "callback":
                code, client_id = _checked(callback.query, state)
            else:
                code, client_id = _pasted(got.value, state)
            interaction.notify(ProgressEvent("Exchanging authorization code for tokens..."))
            token = await _token({"grant_type": "authorization_code", "client_id": client_id, "code": code,
                                  "code_verifier": verifier, "redirect_uri": REDIRECT_URI, "resource": RESOURCE},
                                 "OpenAI OAuth token request")
            if not isinstance(token.get("id_token"), str) or not token["id_token"].strip():
                raise OAuthError("OpenAI OAuth token response did not contain an ID token")
            return _credential(token, client_id)
        finally:
            await callback.close()

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        client_id = credential.get("clientId")
        if not isinstance(client_id, str) or not client_id.strip():
            raise OAuthError("Stored OpenAI OAuth credential does not contain an issued client ID; reconnect ChatGPT")
        token = await _token({"grant_type": "refresh_token", "client_id": client_id,
                              "refresh_token": credential["refresh"], "resource": RESOURCE},
                             "OpenAI OAuth token refresh")
        return _credential(token, client_id)

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        return AuthResult(api_key=credential["access"], source="ChatGPT sign-in", kind="oauth")


__all__ = ["ChatGPTOAuth", "device_id"]
