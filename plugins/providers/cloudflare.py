"""Providers ``cloudflare-workers-ai`` and ``cloudflare-ai-gateway``.

Both take a Cloudflare API token (``CLOUDFLARE_API_KEY``) and an account id (``CLOUDFLARE_ACCOUNT_ID``);
the gateway also its id (``CLOUDFLARE_GATEWAY_ID``). The ids fill the ``{...}`` parts of the catalog's
base URLs, from the environment or from the ``env`` object of the provider's ``auth.json`` entry, which
``/login`` fills in. Workers AI is an OpenAI-compatible endpoint with a bearer token; the gateway
forwards to Anthropic, OpenAI and Workers AI and authenticates pi by ``cf-aig-authorization`` (upstream
keys stay in the gateway, or in a ``models.json`` ``Authorization`` header).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_core import hookimpl
from pi_core.ai import AuthResult, ProviderAuth, catalog_provider

ACCOUNT = ("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID")
GATEWAY = ("CLOUDFLARE_GATEWAY_ID", "Enter Cloudflare AI Gateway ID")


def gateway_auth(key: str, env: Mapping[str, str]) -> AuthResult:
    # The gateway's own header; no upstream key is sent unless models.json configures one.
    return AuthResult(headers={"cf-aig-authorization": f"Bearer {key}", "Authorization": None, "x-api-key": None})


@hookimpl
def register_providers(register: Any) -> None:
    workers = catalog_provider("cloudflare-workers-ai", "openai-completions")
    workers.display_name = "Cloudflare Workers AI"
    workers.auth = ProviderAuth(api_key_label="Cloudflare API key", api_key_fields=[ACCOUNT])
    register(workers)
    gateway = catalog_provider("cloudflare-ai-gateway", "openai-completions")
    gateway.display_name = "Cloudflare AI Gateway"
    gateway.auth = ProviderAuth(api_key_label="Cloudflare API key", api_key_fields=[ACCOUNT, GATEWAY],
                                from_key=gateway_auth)
    register(gateway)


__all__ = ["gateway_auth"]
