"""Provider ``github-copilot``: a GitHub Copilot plan, through the API implementations its models speak
(``anthropic-messages``, ``openai-completions``, ``openai-responses``).

Sign-in is GitHub's device flow (github.com or a GitHub Enterprise domain) with the Copilot editor
client's id. The GitHub token is kept as the credential's ``refresh`` value and exchanged at
``api.<domain>/copilot_internal/v2/token`` for a short-lived Copilot token (``access``), whose
``proxy-ep`` names the account's API endpoint (``proxy.individual.githubcopilot.com`` →
``https://api.individual.githubcopilot.com``). "Refreshing" is that exchange again. After signing in,
the account's model list is read (``GET /models``) and models whose policy is still unconfigured are
enabled, as the editor does; ``availableModelIds`` limits the models pi lists. ``COPILOT_GITHUB_TOKEN``
may hold a Copilot token instead.

Requests carry the editor's identity headers (from the catalog), ``Authorization: Bearer``,
``X-Initiator`` (``user`` when the last message is the user's, else ``agent``), ``Openai-Intent:
conversation-edits`` and ``Copilot-Vision-Request`` when images are sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pi_core import hookimpl
from pi_core.ai import (
    AuthResult,
    Context,
    DeviceCodeEvent,
    ImageContent,
    LoginInteraction,
    Model,
    OAuthError,
    Poll,
    ProgressEvent,
    ProviderAuth,
    StreamOptions,
    ToolResultMessage,
    UserMessage,
    auth_request,
    auth_url,
    catalog_provider,
    poll_device_code,
    token_fields,
)

PROVIDER = "github-copilot"
CLIENT_ID = "Iv1.b507a08c87ecfe98"
EDITOR_HEADERS = {"User-Agent": "GitHubCopilotChat/0.35.0", "Editor-Version": "vscode/1.107.0",
                  "Editor-Plugin-Version": "copilot-chat/0.35.0", "Copilot-Integration-Id": "vscode-chat"}
API_VERSION = "2026-06-01"
INDIVIDUAL_API = "https://api.individual.githubcopilot.com"
EXPIRY_MARGIN_MS = 5 * 60 * 1000


def normalize_domain(text: str) -> str | None:
    value = text.strip()
    if not value:
        return None
    host = urlsplit(value if "://" in value else f"https://{value}").hostname
    return host or None


def api_base(token: str | None, enterprise: str | None) -> str:
    """The account's API endpoint, from the token's ``proxy-ep`` (else the enterprise or individual one)."""
    match = re.search(r"proxy-ep=([^;]+)", token or "")
    if match:
        return "https://" + re.sub(r"^proxy\.", "api.", match.group(1))
    return f"https://copilot-api.{enterprise}" if enterprise else INDIVIDUAL_API


async def _exchange(github_token: str, enterprise: str | None) -> dict[str, Any]:
    domain = enterprise or "github.com"
    response = await auth_request("GET", f"https://api.{domain}/copilot_internal/v2/token",
                                  headers={"Authorization": f"Bearer {github_token}", **EDITOR_HEADERS})
    body = token_fields(response, "Copilot token exchange")
    if not isinstance(body.get("token"), str) or not isinstance(body.get("expires_at"), (int, float)):
        raise OAuthError(f"Copilot token exchange returned an unexpected answer: {response.text[:200]}")
    credential = {"type": "oauth", "refresh": github_token, "access": body["token"],
                  "expires": int(body["expires_at"] * 1000 - EXPIRY_MARGIN_MS)}
    if enterprise:
        credential["enterpriseUrl"] = enterprise
    return credential


async def _account_models(token: str, enterprise: str | None) -> tuple[list[str], list[str]]:
    """``(available ids, ids to enable)`` from the account's model list."""
    base = api_base(token, enterprise)
    response = await auth_request("GET", f"{base}/models", headers={
        "Authorization": f"Bearer {token}", **EDITOR_HEADERS, "X-GitHub-Api-Version": API_VERSION})
    data = token_fields(response, "Copilot model list").get("data")
    if not isinstance(data, list):
        raise OAuthError("Copilot model list has no data")
    rows = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        supports = (item.get("capabilities") or {}).get("supports") or {}
        if supports.get("tool_calls") is False:
            continue
        rows.append((item["id"], item.get("model_picker_enabled") is True, (item.get("policy") or {}).get("state")))
    picker = [i for i, shown, state in rows if shown and state != "disabled"]
    fallback = base == INDIVIDUAL_API and not picker  # some individual accounts flag no model for the picker
    available = [i for i, _, state in rows if state == "enabled"] if fallback else picker
    known = {m for m in _catalog_ids()}
    to_enable = [i for i, shown, state in rows if state == "unconfigured" and i in known and (shown or fallback)]
    return available, to_enable


def _catalog_ids() -> list[str]:
    from pi_core.ai import load_catalog

    return [m.id for m in load_catalog(PROVIDER)]


async def _enable(token: str, enterprise: str | None, ids: list[str]) -> list[str]:
    enabled = []
    base = api_base(token, enterprise)
    for model_id in ids:
        try:
            response = await auth_request("POST", f"{base}/models/{model_id}/policy", json={"state": "enabled"},
                                          headers={"Authorization": f"Bearer {token}", **EDITOR_HEADERS,
                                                   "openai-intent": "chat-policy",
                                                   "x-interaction-type": "chat-policy"}, timeout=5)
        except OAuthError:
            continue
        if response.status_code == 429:
            break  # rate limited: enabling is best effort
        if response.status_code < 400:
            enabled.append(model_id)
    return enabled


class CopilotOAuth:
    """GitHub Copilot sign-in (an :class:`~pi_core.ai.OAuthFlow`)."""

    name = "GitHub Copilot"
    is_subscription = True

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        answer = await interaction.text("GitHub Enterprise URL/domain (blank for github.com)", "company.ghe.com")
        enterprise = normalize_domain(answer)
        if answer.strip() and enterprise is None:
            raise OAuthError("That is not a GitHub Enterprise URL or domain.")
        domain = enterprise or "github.com"
        response = await auth_request("POST", f"https://{domain}/login/device/code",
                                      data={"client_id": CLIENT_ID, "scope": "read:user"},
                                      headers={"User-Agent": EDITOR_HEADERS["User-Agent"]})
        device = token_fields(response, "GitHub device code request")
        uri = device.get("verification_uri")
        if not isinstance(device.get("device_code"), str) or not isinstance(uri, str) or \
                not isinstance(device.get("user_code"), str):
            raise OAuthError("GitHub's device code answer lacks fields")
        if urlsplit(uri).scheme not in ("https", "http"):
            raise OAuthError("GitHub's device code answer has an untrusted verification address")
        interaction.notify(DeviceCodeEvent(device["user_code"], uri, device.get("interval"), device.get("expires_in")))

        async def poll() -> Poll:
            reply = await auth_request("POST", f"https://{domain}/login/oauth/access_token", data={
                "client_id": CLIENT_ID, "device_code": device["device_code"],
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code"},
                headers={"User-Agent": EDITOR_HEADERS["User-Agent"]})
            body = token_fields(reply, "GitHub device sign-in")
            if isinstance(body.get("access_token"), str):
                return Poll("complete", body["access_token"])
            error = body.get("error")
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                interval = body.get("interval")
                return Poll("slow_down", interval=interval if isinstance(interval, (int, float)) else None)
            detail = f": {body['error_description']}" if body.get("error_description") else ""
            return Poll("failed", message=f"GitHub device sign-in failed: {error}{detail}")

        github_token = await poll_device_code(poll, interval=device.get("interval"),
                                              expires_in=device.get("expires_in"), wait_first=True)
        credential = await _exchange(github_token, enterprise)
        available, to_enable = await _account_models(credential["access"], enterprise)
        if to_enable:
            interaction.notify(ProgressEvent("Enabling models..."))
            available += [i for i in await _enable(credential["access"], enterprise, to_enable) if i not in available]
        return {**credential, "availableModelIds": available}

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        enterprise = normalize_domain(str(credential.get("enterpriseUrl") or ""))
        renewed = await _exchange(credential["refresh"], enterprise)
        available, _ = await _account_models(renewed["access"], enterprise)
        return {**renewed, "availableModelIds": available}

    def to_auth(self, credential: dict[str, Any]) -> AuthResult:
        enterprise = normalize_domain(str(credential.get("enterpriseUrl") or ""))
        return _bearer(credential["access"], base_url=auth_url(api_base(credential["access"], enterprise)),
                       source="GitHub Copilot sign-in")


def _bearer(token: str, base_url: str | None = None, source: str = "") -> AuthResult:
    # Every Copilot API takes a bearer token, Anthropic's Messages included.
    return AuthResult(api_key=token, headers={"Authorization": f"Bearer {token}"}, base_url=base_url, source=source)


def request_headers(context: Context, options: StreamOptions) -> dict[str, str]:
    messages = context.messages
    last = messages[-1] if messages else None
    headers = {"X-Initiator": "user" if isinstance(last, UserMessage) else "agent",
               "Openai-Intent": "conversation-edits"}
    if any(isinstance(m, (UserMessage, ToolResultMessage)) and not isinstance(m.content, str)
           and any(isinstance(b, ImageContent) for b in m.content) for m in messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def filter_models(models: list[Model], credential: dict[str, Any] | None) -> list[Model]:
    ids = (credential or {}).get("availableModelIds") if (credential or {}).get("type") == "oauth" else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return models
    return [m for m in models if m.id in set(ids)]


def _from_key(key: str, env: Mapping[str, str]) -> AuthResult:
    return _bearer(key)


@hookimpl
def register_providers(register: Any) -> None:
    config = catalog_provider(PROVIDER, "openai-completions")
    config.display_name = "GitHub Copilot"
    config.auth = ProviderAuth(oauth=CopilotOAuth(), api_key_label="GitHub Copilot token", from_key=_from_key)
    config.request_headers = request_headers
    config.filter_models = filter_models
    register(config)


__all__ = ["CopilotOAuth", "api_base", "filter_models", "request_headers"]
