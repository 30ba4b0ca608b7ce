"""Provider ``openai-codex`` (ChatGPT Plus/Pro plans) and its API ``openai-codex-responses``.

Sign-in is ChatGPT's own (the Codex CLI's client): a browser sign-in with PKCE whose redirect comes to
``localhost:1455/auth/callback`` (the port the Codex CLI uses; when it is taken, paste the redirect
address), or a device code. The access token is a JWT carrying the ChatGPT account id.

Requests go to ``{baseUrl}/codex/responses`` (``https://chatgpt.com/backend-api``) over SSE, a Responses
dialect: ``Authorization: Bearer``, ``chatgpt-account-id``, ``originator: pi``, ``OpenAI-Beta:
responses=experimental``, the session id as ``session-id``/``x-client-request-id``; the body is stateless
(``store: false``) with the system prompt as the first ``developer`` item, ``text.verbosity``, encrypted
reasoning always included, ``tool_choice: auto`` and parallel tool calls. ``response.done`` and
``response.incomplete`` end a response like ``response.completed``; ``error`` events become
``Codex error: …``. (pi also speaks this API over a WebSocket and compresses bodies with zstd; both are
optional for the backend and not done here.)
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from pi_core import hookimpl
from pi_core.ai import (
    ApiProvider,
    AuthResult,
    AuthUrlEvent,
    Context,
    DeviceCodeEvent,
    LoginInteraction,
    LoginOption,
    MissingApiKeyError,
    Model,
    OAuthError,
    Poll,
    ProviderAuth,
    ProviderError,
    StreamOptions,
    StreamWriter,
    auth_request,
    auth_url,
    callback_or_paste,
    catalog_provider,
    decode_jwt_claims,
    expires_at,
    merge_headers,
    parse_pasted_code,
    pkce_pair,
    poll_device_code,
    random_state,
    start_callback_server,
    token_fields,
)

from .openai_responses import build_payload, run_responses

API = "openai-codex-responses"
CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE = "https://auth.openai.com"
AUTHORIZE_URL = f"{AUTH_BASE}/oauth/authorize"
TOKEN_URL = f"{AUTH_BASE}/oauth/token"
DEVICE_CODE_URL = f"{AUTH_BASE}/api/accounts/deviceauth/usercode"
DEVICE_TOKEN_URL = f"{AUTH_BASE}/api/accounts/deviceauth/token"
DEVICE_PAGE = f"{AUTH_BASE}/codex/device"
DEVICE_REDIRECT = f"{AUTH_BASE}/deviceauth/callback"
DEVICE_TIMEOUT_S = 15 * 60
CALLBACK_PORT = 1455
CALLBACK_PATH = "/auth/callback"
REDIRECT_URI = f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
SCOPE = "openid profile email offline_access"
ACCOUNT_CLAIM = "https://api.openai.com/auth"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"


def account_id(token: str) -> str | None:
    claims = decode_jwt_claims(token) or {}
    value = (claims.get(ACCOUNT_CLAIM) or {}).get("chatgpt_account_id")
    return value if isinstance(value, str) and value else None


def _credential(body: dict[str, Any], step: str) -> dict[str, Any]:
    access, refresh = body.get("access_token"), body.get("refresh_token")
    if not access or not refresh or not isinstance(body.get("expires_in"), (int, float)):
        raise OAuthError(f"{step}: the answer lacks access_token, refresh_token or expires_in")
    account = account_id(access)
    if account is None:
        raise OAuthError(f"{step}: the access token carries no ChatGPT account id")
    return {"type": "oauth", "access": access, "refresh": refresh, "expires": expires_at(body["expires_in"]),
            "accountId": account}


async def _exchange(code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
    response = await auth_request("POST", TOKEN_URL, data={
        "grant_type": "authorization_code", "client_id": CLIENT_ID, "code": code, "code_verifier": verifier,
        "redirect_uri": redirect_uri})
    return _credential(token_fields(response, "OpenAI Codex token exchange"), "OpenAI Codex token exchange")


class CodexOAuth:
    """ChatGPT Plus/Pro sign-in (an :class:`~pi_core.ai.OAuthFlow`)."""

    name = "OpenAI (ChatGPT Plus/Pro)"
    is_subscription = True

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        method = await interaction.select("Select OpenAI Codex login method:", [
            LoginOption("browser", "Browser login (default)"),
            LoginOption("device_code", "Device code login (headless)")])
        if method == "device_code":
            return await self._device(interaction)
        return await self._browser(interaction)

    async def _browser(self, interaction: LoginInteraction) -> dict[str, Any]:
        verifier, challenge = pkce_pair()
        state = random_state()
        query = urlencode({"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI,
                           "scope": SCOPE, "code_challenge": challenge, "code_challenge_method": "S256",
                           "state": state, "id_token_add_organizations": "true",
                           "codex_cli_simplified_flow": "true", "originator": "pi"})
        try:
            callback = await start_callback_server("OpenAI", port=CALLBACK_PORT, path=CALLBACK_PATH, state=state,
                                                   redirect_host="localhost")
        except OSError:
            callback = None  # the Codex CLI may hold the port: the redirect address can be pasted instead
        try:
            interaction.notify(AuthUrlEvent(auth_url(f"{AUTHORIZE_URL}?{query}"),
                                            "Complete the sign-in in your browser."))
            got = await callback_or_paste(interaction, callback, "Paste the authorization code or redirect URL",
                                          REDIRECT_URI)
            code, pasted_state = (got.value, None) if got.kind == "callback" else parse_pasted_code(got.value)
            if pasted_state is not None and pasted_state != state:
                raise OAuthError("The pasted sign-in does not belong to this login (state mismatch).")
            if not code:
                raise OAuthError("No authorization code was given.")
            return await _exchange(code, verifier, REDIRECT_URI)
        finally:
            if callback is not None:
                await callback.close()

    async def _device(self, interaction: LoginInteraction) -> dict[str, Any]:
        response = await auth_request("POST", DEVICE_CODE_URL, json={"client_id": CLIENT_ID})
        if response.status_code == 404:
            raise OAuthError("Device code sign-in is not enabled for this server; use the browser sign-in.")
        device = token_fields(response, "OpenAI Codex device code request")
        try:
            interval = float(str(device.get("interval", "")).strip())
        except ValueError as exc:
            raise OAuthError(f"Invalid OpenAI Codex device code answer: {device}") from exc
        if not device.get("device_auth_id") or not device.get("user_code"):
            raise OAuthError(f"Invalid OpenAI Codex device code answer: {device}")
        interaction.notify(DeviceCodeEvent(device["user_code"], DEVICE_PAGE, interval, DEVICE_TIMEOUT_S))

        async def poll() -> Poll:
            answer = await auth_request("POST", DEVICE_TOKEN_URL, json={
                "device_auth_id": device["device_auth_id"], "user_code": device["user_code"]})
            if answer.status_code in (403, 404):
                return Poll("pending")
            body: Any = {}
            try:
                body = answer.json()
            except ValueError:
                pass
            if answer.status_code < 400 and isinstance(body, dict):
                if body.get("authorization_code") and body.get("code_verifier"):
                    return Poll("complete", body)
                return Poll("failed", message=f"Invalid OpenAI Codex device answer: {body}")
            error = body.get("error") if isinstance(body, dict) else None
            code = error.get("code") if isinstance(error, dict) else error
            if code == "deviceauth_authorization_pending":
                return Poll("pending")
            if code == "slow_down":
                return Poll("slow_down")
            return Poll("failed", message=f"OpenAI Codex device sign-in failed ({answer.status_code}): "
                                          f"{answer.text[:300]}")

        approved = await poll_device_code(poll, interval=interval, expires_in=DEVICE_TIMEOUT_S)
        return await _exchange(approved["authorization_code"], approved["code_verifier"], DEVICE_REDIRECT)

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        response = await auth_request("POST", TOKEN_URL, data={
            "grant_type": "refresh_token", "refresh_token": credential["refresh"], "client_id": CLIENT_ID})
        return _credential(token_fields(response, "OpenAI Codex token refresh"), "OpenAI Codex token refresh")

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        return AuthResult(api_key=credential["access"], source="ChatGPT sign-in", kind="oauth")


# -- the API ---------------------------------------------------------------------------------------------
def codex_url(base_url: str) -> str:
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    return f"{base}/responses" if base.endswith("/codex") else f"{base}/codex/responses"


def codex_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The Responses body, reshaped as the Codex backend wants it."""
    payload = build_payload(model, context, options)
    payload.pop("prompt_cache_retention", None)
    if not options.max_tokens or not (model.compat or {}).get("supportsMaxOutputTokens", True):
        payload.pop("max_output_tokens", None)
    for tool in payload.get("tools") or []:
        tool.pop("strict", None)
    payload.update({"text": {"verbosity": options.extra.get("text_verbosity") or "low"},
                    "include": ["reasoning.encrypted_content"],
                    "tool_choice": options.tool_choice if options.tool_choice is not None else "auto",
                    "parallel_tool_calls": True})
    return payload


def codex_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    token = options.api_key
    if not token:
        raise MissingApiKeyError(model.provider)
    account = account_id(token)
    if account is None:
        raise ProviderError("The ChatGPT token carries no account id; sign in again with "
                            "`pi auth login openai-codex`.")
    base = {"originator": "pi", "accept": "text/event-stream", "OpenAI-Beta": "responses=experimental"}
    session = options.session_id if options.cache_retention != "none" else None
    if session:
        base.update({"session-id": session[:64], "x-client-request-id": session[:64]})
    headers = merge_headers(base, model.headers, options.headers)
    return merge_headers(headers, {"Authorization": f"Bearer {token}", "chatgpt-account-id": account})


def _codex_event(data: dict[str, Any]) -> dict[str, Any] | None:
    kind = data.get("type")
    if kind == "error":
        nested = data.get("error") if isinstance(data.get("error"), dict) else {}
        message = data.get("message") or nested.get("message") or data.get("code") or nested.get("code")
        raise ProviderError(f"Codex error: {message or data}")
    if kind == "response.failed":
        error = (data.get("response") or {}).get("error") or {}
        raise ProviderError(error.get("message") or "Codex response failed")
    if kind in ("response.done", "response.incomplete"):
        return {**data, "type": "response.completed" if kind == "response.done" else kind}
    return data


async def stream_codex(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``openai-codex-responses`` stream function."""
    headers = codex_headers(model, options)
    payload = await options.apply_on_payload(codex_payload(model, context, options))
    await run_responses(codex_url(model.base_url), headers, payload, model, options, writer,
                        label="OpenAI Codex", map_event=_codex_event)


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_codex))
    config = catalog_provider("openai-codex", API)
    config.display_name = "OpenAI Codex"
    config.auth = ProviderAuth(oauth=CodexOAuth(), api_key_login=False)
    register(config)


__all__ = ["API", "CodexOAuth", "codex_payload", "codex_url", "stream_codex"]
