"""OpenRouter's per-key model list: the catalog narrowed to the models the user's key may use, with the
key's limits and prices (``GET <base URL>/models/user``), as pi 1.6 does it.

The request goes to the provider's configured endpoint, so a regional one (``https://us.openrouter.ai/
api/v1`` in ``models.json``) applies its region's filtering. When the endpoint refuses the key (401/403)
or does not exist (404, a proxy in ``models.json``), the catalog stays as it is. A model OpenRouter lists
without a limit keeps the catalog's.
"""

from __future__ import annotations

import re
from typing import Any

from pi_core.ai import Model, ModelListContext, ProviderError, shared_client, user_agent

TIMEOUT_S = 15.0
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _per_million(value: Any, fallback: float) -> float | int:
    """OpenRouter's $/token as $/1M tokens. Missing, unreadable and negative prices (``-1`` for router
    models such as ``openrouter/auto``, whose price depends on the model they pick) use ``fallback``."""
    match = _NUMBER.match(str(value)) if isinstance(value, (str, int, float)) and not isinstance(value, bool) \
        else None
    if match is None:
        return fallback
    per_token = float(match.group())
    if per_token < 0:
        return fallback
    result = float(f"{per_token * 1_000_000:.6f}")
    return int(result) if result.is_integer() else result


def openrouter_cost(pricing: dict[str, Any]) -> dict[str, Any]:
    """pi's ``cost`` for OpenRouter ``pricing``: prompt-length overrides become ``tiers``; overrides by
    time of day are left out (a cost cannot express them)."""
    base = {"input": _per_million(pricing.get("prompt"), 0), "output": _per_million(pricing.get("completion"), 0),
            "cacheRead": _per_million(pricing.get("input_cache_read"), 0),
            "cacheWrite": _per_million(pricing.get("input_cache_write"), 0)}
    tiers = []
    for override in pricing.get("overrides") or []:
        if not isinstance(override, dict) or "min_prompt_tokens" not in override or any(
                k in override for k in ("utc_start", "utc_end", "utc_days")):
            continue
        tiers.append({"inputTokensAbove": override["min_prompt_tokens"],
                      "input": _per_million(override.get("prompt"), base["input"]),
                      "output": _per_million(override.get("completion"), base["output"]),
                      "cacheRead": _per_million(override.get("input_cache_read"), base["cacheRead"]),
                      "cacheWrite": _per_million(override.get("input_cache_write"), base["cacheWrite"])})
    return {**base, "tiers": tiers} if tiers else base


def _personalized(model: Model, entry: dict[str, Any]) -> Model:
    top = entry.get("top_provider") if isinstance(entry.get("top_provider"), dict) else {}
    data = model.model_dump(by_alias=True)
    # `or`: OpenRouter reports a missing limit as absent, null or 0.
    data["contextWindow"] = top.get("context_length") or entry.get("context_length") or model.context_window
    data["maxTokens"] = top.get("max_completion_tokens") or model.max_tokens
    if isinstance(entry.get("pricing"), dict):
        data["cost"] = openrouter_cost(entry["pricing"])
    return Model.model_validate(data)


async def fetch_openrouter_models(context: ModelListContext) -> list[Model]:
    """The :class:`~pi_core.ai.ProviderConfig` ``fetch_models`` of ``openrouter``."""
    key = context.auth.api_key
    if not key:
        return context.catalog
    url = f"{context.base_url.rstrip('/')}/models/user"
    response = await shared_client().get(url, timeout=TIMEOUT_S, headers={
        "accept": "application/json", "authorization": f"Bearer {key}", "user-agent": user_agent()})
    if response.status_code in (401, 403, 404):
        return context.catalog
    if response.status_code >= 400:
        raise ProviderError(f"OpenRouter model list request failed: {response.status_code}")
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ProviderError("OpenRouter sent an invalid model list")
    allowed = {e["id"]: e for e in body["data"] if isinstance(e, dict) and isinstance(e.get("id"), str)}
    return [_personalized(m, allowed[m.id]) for m in context.catalog if m.id in allowed]


__all__ = ["fetch_openrouter_models", "openrouter_cost"]
