"""Provider ``azure`` (Azure OpenAI and Microsoft Foundry) and its API ``azure-openai-responses``.

OpenAI models go through the Responses API at ``{base}/responses?api-version=<v>`` with an ``api-key``
header; Foundry models (``api: "openai-completions"``) through Chat Completions at
``{base}/chat/completions`` with a bearer key. The endpoint, per request, is ``AZURE_OPENAI_BASE_URL``, else
``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1``, else the model's ``baseUrl``
(``models.json``); resource roots on ``openai.azure.com``, ``cognitiveservices.azure.com`` and
``ai.azure.com`` get the ``/openai/v1`` path. The request's ``model`` is the deployment:
``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,...``) or the model id.
``AZURE_OPENAI_API_VERSION`` (default ``v1``) sets the Responses API version. The variables may also
be stored in the ``env`` object of the ``azure`` entry in ``auth.json``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from pi_core import hookimpl
from pi_core.ai import (
    ApiProvider,
    Context,
    MissingApiKeyError,
    Model,
    ProviderAuth,
    ProviderError,
    StreamOptions,
    StreamWriter,
    catalog_provider,
    merge_headers,
)

from .openai_responses import build_payload, run_responses

API = "azure-openai-responses"
DEFAULT_API_VERSION = "v1"
AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def deployment_map(text: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in (text or "").split(","):
        model_id, sep, deployment = entry.strip().partition("=")
        if sep and model_id.strip() and deployment.strip():
            out[model_id.strip()] = deployment.strip()
    return out


def normalize_base_url(url: str) -> str:
    parts = urlsplit(url.strip().rstrip("/"))
    if not parts.scheme or not parts.netloc:
        raise ProviderError(f"Invalid Azure OpenAI base URL: {url}")
    path = parts.path.rstrip("/")
    if (parts.hostname or "").endswith(AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")).rstrip("/")


def resolve_base_url(model: Model, options: StreamOptions) -> str:
    base = options.getenv("AZURE_OPENAI_BASE_URL")
    resource = options.getenv("AZURE_OPENAI_RESOURCE_NAME")
    if not base and resource:
        base = f"https://{resource}.openai.azure.com/openai/v1"
    base = base or model.base_url
    if not base:
        raise ProviderError("Azure OpenAI needs an endpoint: set AZURE_OPENAI_BASE_URL "
                            "(https://<resource>.openai.azure.com) or AZURE_OPENAI_RESOURCE_NAME, or give the "
                            'model a "baseUrl" in models.json.')
    return normalize_base_url(base)


def prepare(model: Model, options: StreamOptions) -> Model:
    """The endpoint and deployment of this request (see the module docstring)."""
    deployment = deployment_map(options.getenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")).get(model.id, model.id)
    if deployment != model.id and not getattr(options.on_payload, "_azure", False):
        inner = options.on_payload

        async def with_deployment(payload: Any) -> Any:
            if isinstance(payload, dict):
                payload = {**payload, "model": deployment}
            if inner is None:
                return payload
            result = inner(payload)
            if hasattr(result, "__await__"):
                result = await result
            return payload if result is None else result

        with_deployment._azure = True  # type: ignore[attr-defined]
        options.on_payload = with_deployment
    return model.model_copy(update={"base_url": resolve_base_url(model, options)})


async def stream_azure_responses(model: Model, context: Context, options: StreamOptions,
                                 writer: StreamWriter) -> None:
    """The ``azure-openai-responses`` stream function."""
    if not options.api_key:
        raise MissingApiKeyError(model.provider)
    headers = merge_headers({"accept": "application/json", "api-key": options.api_key}, model.headers,
                            options.headers)
    payload = await options.apply_on_payload(build_payload(model, context, options))
    version = options.getenv("AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION
    url = f"{model.base_url.rstrip('/')}/responses?{urlencode({'api-version': version})}"
    await run_responses(url, headers, payload, model, options, writer, label="Azure OpenAI Responses")


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_azure_responses))
    config = catalog_provider("azure", API)
    config.display_name = "Azure"
    config.auth = ProviderAuth(api_key_label="Azure OpenAI API key")
    config.prepare = prepare
    register(config)


__all__ = ["API", "deployment_map", "normalize_base_url", "prepare", "stream_azure_responses"]
