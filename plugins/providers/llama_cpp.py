"""Built-in plugin: the ``llama.cpp`` provider (a llama.cpp router server) and the ``/llama`` command.

A router (``llama serve`` without a model) serves many GGUF models and loads them on demand. pi talks
to its OpenAI-compatible ``/v1`` endpoint for chat, and to its management endpoints (``GET /models``,
``GET /props``, ``POST /models/load``, ``POST /models/unload``, ``POST /models``) for the model list and
``/llama``.

Set up with ``/login llama.cpp`` (a server URL, default ``http://127.0.0.1:9931``, and an optional API
key; stored in ``auth.json`` as an ``api_key`` entry whose ``env`` holds ``LLAMA_BASE_URL``, as pi
stores it) or with ``LLAMA_BASE_URL`` / ``LLAMA_API_KEY``. The models in ``/model`` are the router's
loaded and sleeping ones (and, with the router's autoload on, its unloaded presets); the list is
fetched like other run-time lists (:mod:`pi_core.ai.model_lists`) and again after each ``/llama``
action.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_core import Command, hookimpl
from pi_core.ai import AuthResult, Model, ModelListContext, ProviderAuth, ProviderConfig, ProviderError

PROVIDER = "llama.cpp"
DEFAULT_SERVER_URL = "http://127.0.0.1:9931"
#: Seconds one management request may take (a load or download is polled, not waited for in one request).
REQUEST_TIMEOUT_S = 15.0
#: Seconds between polls of the model list while a model loads, unloads or downloads.
POLL_S = 0.25
#: Seconds a load or download may take before ``/llama`` stops waiting for it.
WAIT_LIMIT_S = 3600.0
DEFAULT_CONTEXT = 128_000


# -- URLs and credentials -------------------------------------------------------------------------------
def normalize_server_url(value: str) -> str:
    """The router's root URL: ``http(s)``, no query or fragment, no trailing ``/`` or ``/v1``."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"The llama.cpp server URL must be an http:// or https:// URL, not {value.strip()!r}")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3].rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def inference_url(server_url: str) -> str:
    return f"{normalize_server_url(server_url)}/v1"


def _server_url(credential: Mapping[str, Any] | None, env: Mapping[str, str]) -> str | None:
    stored = (credential or {}).get("env") or {}
    for value in (stored.get("LLAMA_BASE_URL"), env.get("LLAMA_BASE_URL")):
        if isinstance(value, str) and value.strip():
            try:
                return normalize_server_url(value)
            except ValueError:
                return None
    return None


def resolve_key(credential: dict[str, Any] | None, env: Mapping[str, str]) -> AuthResult | None:
    """The ``ProviderAuth.resolve_key`` of llama.cpp: configured when a server URL is known (stored by
    ``/login`` or in ``LLAMA_BASE_URL``). Requests go to that server's ``/v1``; the key is the stored one,
    else ``LLAMA_API_KEY``, else a placeholder (a router without ``--api-key`` ignores it)."""
    server = _server_url(credential, env)
    if server is None:
        return None
    key = (credential or {}).get("key") or env.get("LLAMA_API_KEY") or None
    stored_env = dict((credential or {}).get("env") or {})
    return AuthResult(api_key=key or "local", base_url=inference_url(server),
                      env={**stored_env, "LLAMA_BASE_URL": server},
                      source="auth.json" if credential is not None else "LLAMA_BASE_URL",
                      extra={"server_url": server, "key": key})


async def key_login(interaction: Any, env: Mapping[str, str]) -> dict[str, Any]:
    """The ``ProviderAuth.key_login`` of llama.cpp: the server URL, an optional key, and a check that
    the server answers as a router before anything is stored."""
    default = (env.get("LLAMA_BASE_URL") or "").strip() or DEFAULT_SERVER_URL
    entered = (await interaction.text("llama.cpp server URL", default)).strip()
    server = normalize_server_url(entered or default)
    key = (await interaction.secret("API key (optional, Enter for none)")).strip()
    await LlamaClient(server, key or None).list()
    credential: dict[str, Any] = {"type": "api_key", "env": {"LLAMA_BASE_URL": server}}
    if key:
        credential["key"] = key
    return credential


# -- the router's management API ----------------------------------------------------------------------------
class LlamaClient:
    """The management endpoints of one router."""

    def __init__(self, server_url: str, api_key: str | None = None) -> None:
        self.server_url = normalize_server_url(server_url)
        self.api_key = api_key

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        from pi_core.ai import shared_client, user_agent

        headers = {"accept": "application/json", "user-agent": user_agent()}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        try:
            response = await shared_client().request(method, f"{self.server_url}{path}", json=body,
                                                      headers=headers, timeout=REQUEST_TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise ProviderError(f"Could not reach the llama.cpp server at {self.server_url}: "
                                f"{exc or type(exc).__name__}") from exc
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code >= 400:
            error = payload.get("error") if isinstance(payload, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            raise ProviderError(message if isinstance(message, str) and message
                                else f"llama.cpp returned HTTP {response.status_code}")
        return payload

    async def list(self, *, reload: bool = False) -> list[dict[str, Any]]:
        """The router's models (``GET /models``): ``id``, ``status.value`` (``loaded``, ``loading``,
        ``sleeping``, ``unloaded``, ``downloading``), ``source``, ``meta``, ``architecture``."""
        payload = await self.request("GET", "/models?reload=1" if reload else "/models")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise ProviderError("llama.cpp returned an invalid model list")
        if not all(isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("status"), dict)
                   and isinstance(m["status"].get("value"), str) for m in data):
            raise ProviderError("The server is not a llama.cpp router (start `llama serve` without a model)")
        return data

    async def props(self, model: str | None = None) -> dict[str, Any]:
        path = "/props" + (f"?model={_quote(model)}&autoload=false" if model else "")
        payload = await self.request("GET", path)
        return payload if isinstance(payload, dict) else {}

    async def load(self, model: str) -> None:
        await self.request("POST", "/models/load", {"model": model})

    async def unload(self, model: str) -> None:
        await self.request("POST", "/models/unload", {"model": model})

    async def download(self, model: str) -> None:
        await self.request("POST", "/models", {"model": model})

    async def find(self, model: str) -> dict[str, Any] | None:
        return next((m for m in await self.list() if m["id"] == model), None)

    async def wait_loaded(self, model: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_LIMIT_S
        while time.monotonic() < deadline:
            entry = await self.find(model)
            status = (entry or {}).get("status") or {}
            if status.get("value") == "loaded":
                return entry  # type: ignore[return-value]
            if status.get("failed") or (entry is not None and status.get("value") == "unloaded"
                                        and status.get("exit_code") is not None):
                code = status.get("exit_code")
                raise ProviderError(f"{model} failed to load" + (f" (exit code {code})" if code is not None else ""))
            await asyncio.sleep(POLL_S)
        raise ProviderError(f"{model} did not finish loading")

    async def wait_unloaded(self, model: str) -> None:
        deadline = time.monotonic() + WAIT_LIMIT_S
        while time.monotonic() < deadline:
            entry = await self.find(model)
            if entry is None or entry["status"]["value"] == "unloaded":
                return
            await asyncio.sleep(POLL_S)
        raise ProviderError(f"{model} did not unload")

    async def wait_downloaded(self, model: str) -> None:
        """Until the router lists ``model`` as no longer downloading (a model it already had, on the
        second look: the router may list it only once the download starts)."""
        deadline, polls, downloading = time.monotonic() + WAIT_LIMIT_S, 0, False
        while time.monotonic() < deadline:
            entry = await self.find(model)
            polls += 1
            status = (entry or {}).get("status") or {}
            if status.get("failed"):
                raise ProviderError(f"Downloading {model} failed")
            if status.get("value") == "downloading":
                downloading = True
            elif entry is not None and (downloading or polls >= 2):
                return
            await asyncio.sleep(POLL_S)
        raise ProviderError(f"Downloading {model} did not finish")


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


# -- the model list ----------------------------------------------------------------------------------------
def _status(entry: Mapping[str, Any]) -> str:
    return str((entry.get("status") or {}).get("value", ""))


def _is_loaded(entry: Mapping[str, Any]) -> bool:
    return _status(entry) in ("loaded", "sleeping")


def _selectable(entry: Mapping[str, Any], autoload: bool) -> bool:
    if _is_loaded(entry):
        return True  # a sleeping model wakes when a request names it
    return (autoload and _status(entry) == "unloaded" and not (entry.get("status") or {}).get("failed")
            and entry.get("source") == "preset")


def _modalities(entry: Mapping[str, Any], kind: str) -> list[str]:
    arch = entry.get("architecture") if isinstance(entry.get("architecture"), dict) else {}
    value = arch.get(kind)
    return [str(v) for v in value] if isinstance(value, list) else []


def _is_chat(entry: Mapping[str, Any]) -> bool:
    """Decision models (``output_modalities`` has ``decisions`` and not ``text``) are classifiers only."""
    out = _modalities(entry, "output_modalities")
    return "decisions" not in out or "text" in out


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _configured_context(entry: Mapping[str, Any]) -> int | None:
    args = (entry.get("status") or {}).get("args") or []
    for flag, value in zip(args, args[1:]):
        if flag in ("--ctx-size", "-c", "-ctx"):
            try:
                return _positive(int(value))
            except (TypeError, ValueError):
                return None
    return None


def context_window(entry: Mapping[str, Any], cached: int | None = None) -> int:
    """The running context (``meta.n_ctx``), else the one the router starts the model with (``-c``), else
    what an earlier list said, else the model's training context, else 128k."""
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    return (_positive(meta.get("n_ctx")) or _configured_context(entry) or _positive(cached)
            or _positive(meta.get("n_ctx_train")) or DEFAULT_CONTEXT)


def to_model(entry: Mapping[str, Any], server_url: str, props: Mapping[str, Any] | None = None,
             cached_context: int | None = None) -> Model:
    window = context_window(entry, cached_context)
    template = (props or {}).get("chat_template")
    reasoning = isinstance(template, str) and "enable_thinking" in template
    compat: dict[str, Any] = {"supportsStore": False, "supportsReasoningEffort": False,
                              "supportsUsageInStreaming": True, "supportsStrictMode": False,
                              "maxTokensField": "max_tokens"}
    if reasoning:
        compat["thinkingFormat"] = "qwen-chat-template"
    return Model(id=entry["id"], name=entry["id"], api="openai-completions", provider=PROVIDER,
                 base_url=inference_url(server_url), reasoning=reasoning,
                 input=["text", "image"] if "image" in _modalities(entry, "input_modalities") else ["text"],
                 context_window=window, max_tokens=window, compat=compat,
                 thinking_level_map={"off": "off", "minimal": None, "low": None, "medium": "medium",
                                     "high": None, "xhigh": None} if reasoning else None)


async def _autoload(client: LlamaClient, catalog: list[dict[str, Any]]) -> bool:
    if not any(_status(m) == "unloaded" and m.get("source") == "preset" for m in catalog):
        return False
    try:
        return (await client.props()).get("models_autoload") is True
    except ProviderError:
        return False


async def models_of(client: LlamaClient, catalog: list[dict[str, Any]],
                    cached: Mapping[str, int] | None = None) -> list[Model]:
    """The chat models of a router's ``catalog``. Only loaded models are asked for their chat template
    (asking a sleeping or unloaded one would wake or load it), so thinking support shows once loaded."""
    autoload = await _autoload(client, catalog)
    chosen = [m for m in catalog if _selectable(m, autoload) and _is_chat(m)]

    async def one(entry: dict[str, Any]) -> Model:
        props = await client.props(entry["id"]) if _status(entry) == "loaded" else None
        return to_model(entry, client.server_url, props, (cached or {}).get(entry["id"]))

    return list(await asyncio.gather(*(one(m) for m in chosen)))


async def fetch_models(context: ModelListContext) -> list[Model]:
    """The :class:`~pi_core.ai.ProviderConfig` ``fetch_models`` of llama.cpp."""
    server = context.auth.extra.get("server_url") or _server_url(None, context.env)
    if not server:
        return []
    client = LlamaClient(server, context.auth.extra.get("key"))
    cached = {m.id: m.context_window for m in context.stored}
    return await models_of(client, await client.list(), cached)


def provider_config() -> ProviderConfig:
    return ProviderConfig(
        name=PROVIDER, api="openai-completions", base_url=inference_url(DEFAULT_SERVER_URL),
        display_name="llama.cpp", fetch_models=fetch_models,
        auth=ProviderAuth(api_key_label="llama.cpp server", key_login=key_login, resolve_key=resolve_key))


# -- /llama ----------------------------------------------------------------------------------------------
DOWNLOAD = "Download model…"
CLOSE = "Close"


def _label(entry: Mapping[str, Any]) -> str:
    status = _status(entry)
    mark = {"loaded": "●", "sleeping": "◐", "loading": "…", "downloading": "↓"}.get(status, "○")
    return f"{mark} {entry['id']}  ({status}{', failed' if (entry.get('status') or {}).get('failed') else ''})"


async def _sync(registry: Any) -> None:
    """Refresh the provider's models now (``/llama`` has just talked to the server, so offline too)."""
    result = await registry.refresh_models([PROVIDER], force=True, allow_network=True)
    if PROVIDER in result.errors:
        raise ProviderError(result.errors[PROVIDER])


async def _load(ctx: Any, client: LlamaClient, catalog: list[dict[str, Any]], target: dict[str, Any]) -> None:
    others = [m for m in catalog if m["id"] != target["id"] and _is_loaded(m)]
    if others:
        count = f"{len(others)} model{' is' if len(others) == 1 else 's are'} loaded"
        choice = await ctx.ui.select(f"{count}: {', '.join(m['id'] for m in others)}",
                                     ["Unload all and load", "Keep loaded and load", "Cancel"])
        if choice in (None, "Cancel"):
            return
        if choice == "Unload all and load":
            for model in others:
                await client.unload(model["id"])
                await client.wait_unloaded(model["id"])
    await ctx.ui.notify(f"Loading {target['id']}…", "info")
    await client.load(target["id"])
    await client.wait_loaded(target["id"])
    await _sync(ctx.model_registry)
    await ctx.ui.notify(f"Loaded {target['id']}. Select it with /model.", "info")


async def _unload(ctx: Any, client: LlamaClient, target: dict[str, Any]) -> None:
    if not await ctx.ui.confirm("Unload model?", target["id"]):
        return
    await client.unload(target["id"])
    await client.wait_unloaded(target["id"])
    await _sync(ctx.model_registry)
    await ctx.ui.notify(f"Unloaded {target['id']}.", "info")


async def _download(ctx: Any, client: LlamaClient) -> None:
    name = await ctx.ui.input("Hugging Face model to download (owner/repository[:quantization])",
                              "ggml-org/gemma-3-1b-it-GGUF:Q4_K_M")
    name = (name or "").strip()
    if not name:
        return
    if "/" not in name.split(":", 1)[0]:
        await ctx.ui.notify(f"{name!r} is not owner/repository[:quantization].", "error")
        return
    await ctx.ui.notify(f"Downloading {name}… (the llama.cpp server downloads it)", "info")
    await client.download(name)
    await client.wait_downloaded(name)
    await client.list(reload=True)
    await _sync(ctx.model_registry)
    await ctx.ui.notify(f"Downloaded {name}.", "info")


async def llama_command(args: str, ctx: Any) -> None:
    if ctx.mode != "tui":
        await ctx.ui.notify("/llama is available in interactive mode", "warning")
        return
    registry = ctx.model_registry
    auth = registry.peek_auth(PROVIDER)
    server = auth.extra.get("server_url") if auth is not None else None
    if not server:
        await ctx.ui.notify(f"Configure llama.cpp with /login {PROVIDER} (or set LLAMA_BASE_URL)", "warning")
        return
    client = LlamaClient(server, auth.extra.get("key"))  # type: ignore[union-attr]
    while True:
        try:
            catalog = await client.list()
        except ProviderError as exc:
            choice = await ctx.ui.select(f"llama.cpp at {server}: {exc}", ["Retry", CLOSE])
            if choice == "Retry":
                continue
            return
        options = [_label(m) for m in catalog] + [DOWNLOAD, CLOSE]
        chosen = await ctx.ui.select(f"llama.cpp models at {server} (select to load or unload)", options)
        if chosen in (None, CLOSE):
            return
        try:
            if chosen == DOWNLOAD:
                await _download(ctx, client)
                continue
            target = catalog[options.index(chosen)]
            if _is_loaded(target):
                await _unload(ctx, client, target)
            elif _status(target) == "unloaded":
                await _load(ctx, client, catalog, target)
            else:
                await ctx.ui.notify(f"{target['id']} is {_status(target)}", "warning")
        except ProviderError as exc:
            await ctx.ui.notify(str(exc), "error")


@hookimpl
def register_providers(register: Any) -> None:
    register(provider_config())


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("llama", llama_command, "Manage llama.cpp router models (load, unload, download)"))


__all__ = ["LlamaClient", "context_window", "fetch_models", "key_login", "normalize_server_url",
           "provider_config", "register_commands", "register_providers", "resolve_key", "to_model"]
