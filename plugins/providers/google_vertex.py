"""Provider ``google-vertex`` and its API ``google-vertex``: Gemini on Google Cloud's Vertex AI.

Requests are the Gemini API's ``streamGenerateContent`` (same body and stream as
``google-generative-ai``) at ``https://{location}-aiplatform.googleapis.com/v1beta1/projects/{project}/
locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`` (``location``
``global``: ``aiplatform.googleapis.com``). Authentication is a Google Cloud API key
(``GOOGLE_CLOUD_API_KEY``, sent as ``x-goog-api-key`` to the project-less express endpoint), or
application default credentials through google-auth: ``GOOGLE_APPLICATION_CREDENTIALS`` (a service-account
or other credential file) or ``gcloud auth application-default login``'s file, then the metadata server;
google-auth refreshes the access token. The project is ``GOOGLE_CLOUD_PROJECT``/``GCLOUD_PROJECT`` (else the
credential's), the location ``GOOGLE_CLOUD_LOCATION``.

google-auth is an optional dependency: ``pip install 'pi-core-agent[vertex]'``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pi_core import hookimpl
from pi_core.ai import (
    ApiProvider,
    AuthResult,
    Context,
    Model,
    ProviderAuth,
    ProviderError,
    StreamOptions,
    StreamWriter,
    auth_url,
    catalog_provider,
    merge_headers,
)

from .google import build_payload, run_google

API = "google-vertex"
EXTRA = "pip install 'pi-core-agent[vertex]'"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
API_VERSION = "v1beta1"
_cache: dict[str, Any] = {}
_lock = threading.Lock()


def _adc_file(env: Mapping[str, str]) -> Path:
    explicit = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    return Path(explicit) if explicit else Path.home() / ".config" / "gcloud" / "application_default_credentials.json"


def ambient_configured(env: Mapping[str, str]) -> bool:
    """pi's check: an API key, or a credential file with a project and a location."""
    if env.get("GOOGLE_CLOUD_API_KEY"):
        return True
    project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")
    return bool(project and env.get("GOOGLE_CLOUD_LOCATION") and _adc_file(env).is_file())


class _HttpxRequest:
    """google-auth's transport interface on httpx, so no second HTTP library is needed (token requests
    follow ``PI_OAUTH_URL_OVERRIDES`` like every sign-in request)."""

    def __call__(self, url: str, method: str = "GET", body: Any = None, headers: Any = None,
                 timeout: float | None = None, **kwargs: Any) -> Any:
        import httpx
        from google.auth import exceptions

        try:
            response = httpx.request(method, auth_url(url), content=body, headers=headers, timeout=timeout or 30)
        except httpx.HTTPError as exc:
            raise exceptions.TransportError(str(exc)) from exc
        return _Response(response)


class _Response:
    def __init__(self, response: Any) -> None:
        self.status, self.headers, self.data = response.status_code, dict(response.headers), response.content


def adc_token(env: Mapping[str, str]) -> tuple[str, str | None]:
    """A valid access token and the credential's project, refreshed by google-auth when needed."""
    try:
        import google.auth
    except ImportError as exc:
        raise ProviderError(f"Google Vertex AI with application default credentials needs google-auth, an "
                            f"optional dependency: {EXTRA}") from exc
    key = str(_adc_file(env))
    with _lock:
        if key not in _cache:
            try:
                _cache[key] = google.auth.default(scopes=SCOPES)
            except google.auth.exceptions.DefaultCredentialsError as exc:
                raise ProviderError(f"No Google application default credentials: {exc}") from exc
        credentials, project = _cache[key]
        if not credentials.valid:
            try:
                credentials.refresh(_HttpxRequest())
            except google.auth.exceptions.GoogleAuthError as exc:
                raise ProviderError(f"Refreshing the Google credentials failed: {exc}") from exc
        return credentials.token, project


async def ambient_auth(env: Mapping[str, str]) -> AuthResult | None:
    key = (env.get("GOOGLE_CLOUD_API_KEY") or "").strip()
    if key:
        return AuthResult(api_key=key, source="GOOGLE_CLOUD_API_KEY")
    if not ambient_configured(env) and not env.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return None
    token, project = await asyncio.to_thread(adc_token, dict(env))
    return AuthResult(headers={"Authorization": f"Bearer {token}"}, source="application default credentials",
                      kind="ambient", extra={"gcp_project": project})


def vertex_url(model: Model, options: StreamOptions) -> str:
    method = f"publishers/google/models/{model.id}:streamGenerateContent?alt=sse"
    base = model.base_url.strip().rstrip("/")
    if options.api_key:  # express mode: the key names the project
        root = "https://aiplatform.googleapis.com" if not base or "{location}" in base else base
        return f"{root}/{API_VERSION}/{method}"
    auth = options.auth
    project = options.getenv("GOOGLE_CLOUD_PROJECT") or options.getenv("GCLOUD_PROJECT") or \
        (auth.extra.get("gcp_project") if auth is not None else None)
    if not project:
        raise ProviderError("Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT).")
    location = options.getenv("GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ProviderError("Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (us-central1, global, ...).")
    if not base or "{location}" in base:
        host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
        base = f"https://{host}"
    version = "" if any(part.startswith("v1") for part in base.split("/")[3:]) else f"/{API_VERSION}"
    return f"{base}{version}/projects/{project}/locations/{location}/{method}"


async def stream_vertex(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``google-vertex`` stream function."""
    header_auth = any(k.lower() == "authorization" for k in merge_headers(model.headers, options.headers))
    if not options.api_key and not header_auth:
        raise ProviderError("No Google Cloud credentials for Vertex AI: set GOOGLE_CLOUD_API_KEY, or "
                            "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION with application default "
                            "credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS)")
    base = {"x-goog-api-key": options.api_key} if options.api_key else {}
    headers = merge_headers(base, model.headers, options.headers)
    payload = await options.apply_on_payload(build_payload(model, context, options))
    await run_google(vertex_url(model, options), headers, payload, model, options, writer)


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_vertex))
    config = catalog_provider("google-vertex", API)
    config.display_name = "Google Vertex AI"
    config.auth = ProviderAuth(api_key_label="Google Cloud API key", ambient=ambient_auth,
                               ambient_configured=ambient_configured,
                               ambient_label="Google application default credentials")
    register(config)


def _forget_credentials() -> None:
    """Drop cached credentials (tests; a changed GOOGLE_APPLICATION_CREDENTIALS is seen anyway)."""
    with _lock:
        _cache.clear()


__all__ = ["API", "ambient_auth", "stream_vertex", "vertex_url"]
