"""Registration objects (:class:`ApiProvider`, :class:`ProviderConfig`) and the :class:`ModelRegistry`.

An *API* is a wire protocol implementation (``anthropic-messages``); a *provider* is an endpoint with
its auth and model catalog (``anthropic``, ``groq``, ``ollama``). Plugins register both through the
``register_providers`` hook. The registry merges, in pi's order: built-in providers, then
``<agent dir>/models.json``, then providers of other plugins; it resolves ``--provider/--model``, finds
credentials in pi's order (explicit → ``auth.json`` → ``models.json`` → environment; see
:mod:`pi_core.ai.auth.resolve`), and the stream function of a model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .auth.resolve import Resolver
from .auth.store import CredentialStore
from .auth.types import AuthError, AuthResult, ProviderAuth
from .credentials import agent_dir, resolve_config_value
from .http import is_loopback_url
from .model_lists import REFRESH_TIMEOUT_S, STORE_FILE, ModelFetcher, ModelListContext, ModelRefreshResult, ModelStore, network_allowed
from .models_json import ProviderEntry, load_models_json
from .options import StreamFn, StreamOptions
from .types import THINKING_LEVELS, Context, Model


@dataclass(frozen=True)
class ApiProvider:
    """A wire protocol: ``api`` names it (``Model.api`` selects it), ``stream`` implements it."""

    api: str
    stream: StreamFn

    @property
    def name(self) -> str:
        return self.api


@dataclass
class ProviderConfig:
    """A provider: endpoint, default API, API-key environment variables and model catalog.

    ``models`` may be a callable returning the models, so a large catalog loads only when asked for.
    Models missing ``provider``/``api``/``base_url`` take this provider's; ``headers`` and ``compat`` are
    merged under each model's own. ``api_key`` is a config value (``!cmd``, ``$VAR``, literal) used when
    neither ``auth.json`` nor the environment has a key.
    """

    name: str
    api: str
    base_url: str = ""
    api_key_env: list[str] | str | None = None
    models: Sequence[Model] | Callable[[], Iterable[Model]] = ()
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    default_model: str | None = None
    api_key: str | None = None
    auth_header: bool = False
    requires_api_key: bool = True
    """``False`` for providers that work without a key (scripted or local ones)."""
    auth: ProviderAuth | None = None
    """How the provider signs in (OAuth flows, ambient credentials); ``None``: API keys only."""
    display_name: str = ""
    """The provider's name in messages and ``/login`` (``"GitHub Copilot"``); default: ``name``."""
    listed: bool = True
    """``False``: its models are used only when asked for by name (``--model``, ``set_model``), never offered in
    model lists, cycling or the start-up choice; ``PI_FAUX=1`` lists them anyway (the offline ``faux``)."""
    filter_models: Callable[[list[Model], dict[str, Any] | None], list[Model]] | None = None
    """Which models the signed-in account may use (gets the models and the stored credential); used by
    :meth:`ModelRegistry.available_models`. Copilot lists only the models the account has."""
    prepare: Callable[[Model, StreamOptions], Model] | None = None
    """Called before each request with the authenticated model and options; returns the model to call
    (Azure resolves its endpoint and deployment name from the environment here)."""
    request_headers: Callable[[Context, StreamOptions], Mapping[str, str] | None] | None = None
    """Headers that depend on the request (Copilot's ``X-Initiator``, OpenCode's session header); they sit
    under the headers given to ``stream()``. ``{NAME}`` in a base URL is replaced by the environment
    value ``NAME`` (a credential's ``env`` object first), as in Cloudflare's account URLs."""
    fetch_models: ModelFetcher | None = None
    """Fetches the provider's models at run time (an async function of a
    :class:`~pi_core.ai.ModelListContext` returning the whole list); see :meth:`ModelRegistry.refresh_models`.
    The saved list replaces ``models`` until the next refresh."""
    models_refresh_interval: float = 0.0
    """Seconds a fetched list stays fresh: a refresh within it is skipped unless forced (``0``: every
    refresh fetches, as pi does for OpenRouter)."""
    route: Callable[..., Any] | None = None
    """A virtual provider (pi's ``registerVirtualModel``): given a :class:`~pi_core.ai.RouteRequest`, returns
    the :class:`~pi_core.ai.Route` (a real model of the registry) each request is sent to. Build one with
    :func:`~pi_core.ai.virtual_provider`."""

    def env_vars(self) -> list[str]:
        names = self.api_key_env
        return [] if not names else [names] if isinstance(names, str) else list(names)

    def load_models(self) -> list[Model]:
        """The catalog with provider-level defaults filled in."""
        raw = self.models() if callable(self.models) else self.models
        return [self.fill(m) for m in raw]

    def fill(self, model: Model) -> Model:
        updates: dict[str, Any] = {}
        if not model.provider:
            updates["provider"] = self.name
        if not model.api:
            updates["api"] = self.api
        if not model.base_url and self.base_url:
            updates["base_url"] = self.base_url
        if self.headers:
            updates["headers"] = {**self.headers, **(model.headers or {})}
        if self.compat:
            updates["compat"] = _merge_compat(self.compat, model.compat)
        return model.model_copy(update=updates) if updates else model


class ModelNotFoundError(LookupError):
    """``--provider/--model`` named nothing known; the message lists close names."""


@dataclass
class ResolvedModel:
    """A model pattern resolved (``provider/id:level``): the ``model``, the ``thinking_level`` the pattern
    named (or ``None``) and ``warnings`` about how it was matched."""

    model: Model
    thinking_level: str | None = None
    warnings: list[str] = field(default_factory=list)


def _merge_compat(base: Mapping[str, Any] | None, over: Mapping[str, Any] | None) -> dict[str, Any]:
    merged = dict(base or {})
    for key, value in (over or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            value = {**merged[key], **value}
        merged[key] = value
    return merged


_DATED = re.compile(r"-\d{8}$")


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


_adhoc_apis: dict[str, ApiProvider] = {}


def register_api_provider(api: ApiProvider) -> None:
    """Make an API usable by every registry of this process (pi's ``registerApiProvider``)."""
    _adhoc_apis[api.api] = api


def unregister_api_provider(api: str) -> None:
    _adhoc_apis.pop(api, None)


class _Provider:
    """One provider inside the registry: its config and lazily built models, plus overrides."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.extra_models: dict[str, Model] = {}
        self.overrides: dict[str, dict[str, Any]] = {}
        self.patch: dict[str, Any] = {}
        self.replace_models = False
        self.fetched: Callable[[], list[Model]] | None = None
        self._models: dict[str, Model] | None = None

    def models(self) -> dict[str, Model]:
        if self._models is None:
            fetched = [self.config.fill(m) for m in self.fetched()] if self.fetched is not None else []
            base = {m.id: m for m in fetched} if fetched else (
                {} if self.replace_models else {m.id: m for m in self.config.load_models()})
            for model_id, patch in self.overrides.items():
                if model_id in base:
                    base[model_id] = _patch_model(base[model_id], patch)
            if self.patch:
                base = {k: _patch_model(m, self.patch) for k, m in base.items()}
            # models.json models take the provider's headers too (a model's own header wins)
            headers = self.patch.get("headers")
            base.update({k: m.model_copy(update={"headers": {**headers, **(m.headers or {})}}) if headers else m
                         for k, m in self.extra_models.items()})
            self._models = base
        return self._models


def _patch_model(model: Model, patch: Mapping[str, Any]) -> Model:
    data = model.model_dump(by_alias=True)
    for key, value in patch.items():
        if key in ("cost", "headers") and isinstance(value, dict):
            value = {**(data.get(key) or {}), **value}
        elif key == "compat" and isinstance(value, dict):
            value = _merge_compat(data.get("compat"), value)
        data[key] = value
    return Model.model_validate(data)


class ModelRegistry:
    """All models of all providers, with auth. See the module docstring for the merge order."""

    def __init__(self, apis: Iterable[ApiProvider] = (), providers: Iterable[ProviderConfig] = (), *,
                 extra_providers: Iterable[ProviderConfig] = (), agent_dir: Path | str | None = None,
                 load_files: bool = True, env: Mapping[str, str] | None = None) -> None:
        self._apis = {a.api: a for a in apis}
        self._base = list(providers)
        self._extra = list(extra_providers)
        self._agent_dir = Path(agent_dir) if agent_dir is not None else None
        self._load_files = load_files
        self._env = env
        self._runtime_keys: dict[str, str] = {}
        self._runtime_api_names: set[str] = set()
        self.errors: list[str] = []
        self.reload()

    @property
    def agent_dir(self) -> Path:
        return self._agent_dir if self._agent_dir is not None else agent_dir()

    def reload(self) -> None:
        """Re-read ``models.json`` and ``auth.json`` (pi re-reads them when the model list opens)."""
        self.errors = []
        self._providers: dict[str, _Provider] = {}
        for config in self._base:
            self._providers[config.name] = _Provider(config)
        self._custom_keys: dict[str, str] = {}
        self._auth_header: set[str] = set()  # models.json "authHeader": the resolved key as a bearer too
        if self._load_files:
            entries, errors = load_models_json(self.agent_dir / "models.json")
            self.errors.extend(errors)
            for name, entry in entries.items():
                self._apply_entry(name, entry)
        for config in self._extra:
            self._apply_plugin(config)
        if self._load_files or not hasattr(self, "model_store"):
            self.model_store = ModelStore(self.agent_dir / STORE_FILE if self._load_files else None)
        for name, provider in self._providers.items():
            if provider.config.fetch_models is not None:
                provider.fetched = lambda name=name: self.model_store.models(name)
        self.credentials = CredentialStore(self.agent_dir / "auth.json") if self._load_files else None
        self._resolver = Resolver(self.credentials, self._env)
        if self.credentials is not None:
            self.credentials.read_all()
            self.errors.extend(self.credentials.errors)

    # -- merging ------------------------------------------------------------------------------
    def _apply_plugin(self, config: ProviderConfig) -> None:
        current = self._providers.get(config.name)
        if current is None or config.models:
            self._providers[config.name] = _Provider(config)
            return
        patch = {k: v for k, v in (("baseUrl", config.base_url), ("headers", config.headers),
                                   ("compat", config.compat)) if v}
        current.patch.update(patch)
        current._models = None

    def _apply_entry(self, name: str, entry: ProviderEntry) -> None:
        current = self._providers.get(name)
        if entry.api_key:
            self._custom_keys[name] = entry.api_key
        if current is None:
            if not entry.models:
                self.errors.append(f"models.json: provider {name!r} is not a known provider and defines no models")
                return
            if not entry.base_url or not entry.api and not all(m.api for m in entry.models):
                self.errors.append(f"models.json: provider {name!r} needs \"baseUrl\" and \"api\"")
                return
            current = _Provider(ProviderConfig(name=name, api=entry.api or "", base_url=entry.base_url))
            current.replace_models = True
            self._providers[name] = current
        if entry.name:
            current.config = dataclasses.replace(current.config, display_name=entry.name)
        patch: dict[str, Any] = {}
        if entry.base_url:
            patch["baseUrl"] = entry.base_url
        if entry.headers:
            patch["headers"] = self._resolve_headers(entry.headers)
        if entry.compat:
            patch["compat"] = entry.compat
        current.patch.update(patch)
        for model_id, override in (entry.model_overrides or {}).items():
            current.overrides[model_id] = override
        for item in entry.models or []:
            self._add_custom_model(name, current, entry, item)
        if entry.auth_header:
            self._auth_header.add(name)
        current._models = None

    def _add_custom_model(self, name: str, provider: _Provider, entry: ProviderEntry, item: Any) -> None:
        data = item.model_dump(by_alias=True)
        data.setdefault("name", item.id)
        data["provider"] = name
        data["api"] = item.api or entry.api or provider.config.api
        data["baseUrl"] = item.base_url or entry.base_url or provider.config.base_url
        if item.headers:
            data["headers"] = self._resolve_headers(item.headers)
        if entry.compat or item.compat:
            data["compat"] = _merge_compat(entry.compat, item.compat)
        try:
            provider.extra_models[item.id] = Model.model_validate(data)
        except ValueError as exc:
            self.errors.append(f"models.json: model {name}/{item.id} skipped: {exc}")

    def _resolve_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        resolved = {k: resolve_config_value(v, self._env) for k, v in headers.items()}
        return {k: v for k, v in resolved.items() if v is not None}

    # -- queries ------------------------------------------------------------------------------
    def get_api(self, api: str) -> ApiProvider | None:
        """The implementation of wire protocol ``api``."""
        return self._apis.get(api) or _adhoc_apis.get(api)

    def get_apis(self) -> list[str]:
        return sorted({*self._apis, *_adhoc_apis})

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def get_provider(self, name: str) -> ProviderConfig | None:
        provider = self._providers.get(name)
        return provider.config if provider else None

    def get_provider_display_name(self, name: str) -> str:
        """The provider's display name (its ``display_name``, a ``models.json`` ``name``), else ``name``;
        pi's ``getProviderDisplayName``."""
        config = self.get_provider(name)
        return (config.display_name if config is not None else "") or name

    def get_models(self, provider: str | None = None) -> list[Model]:
        """Models of ``provider`` (or of all providers), in catalog order."""
        if provider is not None:
            found = self._providers.get(provider)
            return list(found.models().values()) if found else []
        return [m for p in self._providers.values() for m in p.models().values()]

    def get_model(self, provider: str, model_id: str) -> Model | None:
        found = self._providers.get(provider)
        return found.models().get(model_id) if found else None

    def default_model(self, provider: str) -> Model | None:
        found = self._providers.get(provider)
        if found is None:
            return None
        models = found.models()
        wanted = found.config.default_model
        return models.get(wanted) if wanted in models else next(iter(models.values()), None)

    # -- auth -----------------------------------------------------------------------------------
    def environ(self) -> Mapping[str, str]:
        """The environment this registry reads credentials from (its own ``env``, else the process's)."""
        return self._resolver.environ()

    def provider_auth(self, provider: str) -> ProviderAuth:
        """How ``provider`` signs in (API keys only unless its config says more)."""
        config = self.get_provider(provider)
        return config.auth if config is not None and config.auth is not None else ProviderAuth()

    async def resolve_auth(self, provider: str, explicit: str | None = None, *, reject: AuthResult | None = None,
                           min_validity_ms: int | None = None) -> AuthResult | None:
        """The credential of a request to ``provider``: explicit → ``auth.json`` (OAuth tokens refreshed
        when they expire within five minutes) → ``models.json`` → environment/ambient. ``reject`` is an
        OAuth result the server refused with 401: it is refreshed once more. Raises
        :class:`~pi_core.ai.AuthError` when a stored sign-in cannot be refreshed."""
        explicit = explicit or self._runtime_keys.get(provider)
        result = await self._resolver.resolve(provider, self.get_provider(provider), self.provider_auth(provider),
                                              self._custom_keys.get(provider), explicit, reject=reject,
                                              min_validity_ms=min_validity_ms)
        if result is not None and self._env is not None:  # a registry given its own environment: providers read it
            result.env = {**self._env, **(result.env or {})}
        return self._with_auth_header(provider, result)

    def _with_auth_header(self, provider: str, result: AuthResult | None) -> AuthResult | None:
        """pi's ``authHeader``: the resolved key (from wherever it came) also as ``Authorization: Bearer``."""
        if provider in self._auth_header and result is not None and result.api_key:
            result.headers = {**(result.headers or {}), "Authorization": f"Bearer {result.api_key}"}
        return result

    def peek_auth(self, provider: str, explicit: str | None = None) -> AuthResult | None:
        """Like :meth:`resolve_auth` without refreshing (an OAuth token is returned as stored) and without
        awaiting ambient credentials that need it."""
        explicit = explicit or self._runtime_keys.get(provider)
        return self._with_auth_header(provider, self._resolver.resolve_sync(
            provider, self.get_provider(provider), self.provider_auth(provider), self._custom_keys.get(provider),
            explicit))

    def get_api_key(self, provider: str, explicit: str | None = None) -> str | None:
        """The API key of :meth:`peek_auth`."""
        found = self.peek_auth(provider, explicit)
        return found.api_key if found is not None else None

    def api_key_hint(self, provider: str) -> str:
        """Where a key for ``provider`` can go, for an error message that names the fix."""
        auth = self.agent_dir / "auth.json"
        config = self.get_provider(provider)
        places = [f"set {' or '.join(config.env_vars())}"] if config is not None and config.env_vars() else []
        places.append(f"run `pi auth login {provider}`")
        places.append(f'add "{provider}": {{"type": "api_key", "key": "..."}} to {auth}')
        if provider in self._custom_keys or (config is not None and not config.env_vars()):
            places.append(f'set "apiKey" of provider "{provider}" in {self.agent_dir / "models.json"}')
        return "To fix it: " + ", or ".join(places) + " (or pass --api-key for one run)"

    def has_auth(self, provider: str) -> bool:
        """Whether requests to ``provider`` can be authenticated (a credential is configured, or none is
        needed). Runs no commands and makes no requests."""
        config = self.get_provider(provider)
        if config is not None and not config.requires_api_key:
            return True
        return self._resolver.configured(provider, config, self.provider_auth(provider),
                                         self._custom_keys.get(provider))

    # -- model lists fetched at run time ---------------------------------------------------------------
    async def refresh_models(self, providers: Iterable[str] | None = None, *, force: bool = False,
                             allow_network: bool | None = None) -> ModelRefreshResult:
        """Fetch the model lists of providers that declare ``fetch_models`` (all of them, or ``providers``)
        and save them in ``models-store.json``, concurrently.

        A provider is skipped when the network is not allowed (``allow_network``, default: unless
        ``PI_OFFLINE`` is set), when it has no credential configured, or when its last fetch is younger
        than its ``models_refresh_interval`` (unless ``force``). A failure leaves the saved list as it was
        and is reported in the result's ``errors``; this method does not raise for it.
        """
        names = [n for n in (providers if providers is not None else self.get_providers())
                 if (c := self.get_provider(n)) is not None and c.fetch_models is not None]
        result = ModelRefreshResult()
        if allow_network is None:
            allow_network = network_allowed(self._env)
        await asyncio.gather(*(self._refresh_one(name, result, force=force, allow_network=allow_network)
                               for name in names))
        return result

    async def _refresh_one(self, name: str, result: ModelRefreshResult, *, force: bool, allow_network: bool) -> None:
        from .errors import describe_exception

        provider = self._providers[name]
        config = provider.config
        assert config.fetch_models is not None
        if not allow_network:
            result.skipped[name] = "offline"
            return
        checked = self.model_store.checked_at(name)
        if (not force and config.models_refresh_interval > 0 and checked is not None
                and time.time() * 1000 - checked < config.models_refresh_interval * 1000):
            result.skipped[name] = "checked recently"
            return
        if not self.has_auth(name):
            result.skipped[name] = "not configured"
            return
        try:
            auth = await self.resolve_auth(name)
            if auth is None:
                result.skipped[name] = "not configured"
                return
            env = {**(os.environ if self._env is None else self._env), **(auth.env or {})}
            context = ModelListContext(provider=name, catalog=config.load_models(),
                                       stored=self.model_store.models(name), auth=auth,
                                       base_url=auth.base_url or provider.patch.get("baseUrl") or config.base_url,
                                       env=env)
            models = await asyncio.wait_for(config.fetch_models(context), REFRESH_TIMEOUT_S)
            await self.model_store.save(name, [config.fill(m) for m in models])
        except AuthError as exc:
            result.errors[name] = str(exc)
            result.auth_errors.add(name)
            return
        except asyncio.TimeoutError:
            result.errors[name] = f"the model list did not arrive within {REFRESH_TIMEOUT_S:.0f} s"
            return
        except Exception as exc:  # noqa: BLE001 - a fetcher's failure is reported, the saved list stays
            result.errors[name] = describe_exception(exc)
            return
        provider._models = None
        result.refreshed.append(name)

    # -- resolution -----------------------------------------------------------------------------
    def resolve(self, provider: str | None = None, model: str | None = None, *,
                allow_custom: bool = False) -> Model:
        """The model CLI-style ``--provider``/``--model`` name (``provider/model``, fuzzy).

        Raises :class:`ModelNotFoundError` naming close matches. With ``allow_custom`` an unknown id of a
        known provider becomes a copy of that provider's default model with the id replaced, as pi does for
        models newer than its catalog. :meth:`resolve_full` also returns a ``model:level`` thinking level
        and the warnings.
        """
        return self.resolve_full(provider, model, allow_custom=allow_custom).model

    def resolve_full(self, provider: str | None = None, model: str | None = None, *,
                     allow_custom: bool = False) -> ResolvedModel:
        """Like :meth:`resolve`, with the thinking level of a ``:level`` suffix and any warnings."""
        from .resolution import resolve_model

        return resolve_model(self, provider, model, allow_custom=allow_custom)

    def available_models(self, *, unlisted: bool = False) -> list[Model]:
        """Models that can be used now: their provider has an API key, or needs none (local servers,
        providers registered with ``requires_api_key=False`` such as ``faux``). Providers registered with
        ``listed=False`` are left out unless ``unlisted`` (or ``PI_FAUX=1``)."""
        out = []
        unlisted = unlisted or os.environ.get("PI_FAUX") == "1"
        for name in self.get_providers():
            config = self.get_provider(name)
            if config is not None and not config.listed and not unlisted:
                continue
            models = self.get_models(name)
            if self.has_auth(name):
                if config is not None and config.filter_models is not None:
                    stored = self.credentials.get(name) if self.credentials is not None else None
                    models = config.filter_models(models, stored)
                out += models
            else:
                out += [m for m in models if is_loopback_url(m.base_url)]
        return out

    # -- pi's extension-facing names (ctx.model_registry) --------------------------------------------
    def find(self, provider: str, model_id: str) -> Model | None:
        """The model ``provider``/``model_id`` (``None`` when unknown); pi's ``find``."""
        return self.get_model(provider, model_id)

    def get_all(self) -> list[Model]:
        return self.get_models()

    def get_available(self) -> list[Model]:
        """Models that can be used now (see :meth:`available_models`)."""
        return self.available_models()

    def has_configured_auth(self, model: Model) -> bool:
        """Whether a request to ``model`` can be authenticated (a credential is configured, or none is
        needed)."""
        return self.has_auth(model.provider) or is_loopback_url(model.base_url)

    async def get_provider_auth(self, provider: str) -> AuthResult | None:
        """The credential a request to ``provider`` would use now (``api_key``, ``headers``,
        ``base_url``, ``env``); ``None`` when there is none. pi's ``getProviderAuth``."""
        return await self.resolve_auth(provider)

    def set_api_key(self, provider: str, key: str | None) -> None:
        """Use ``key`` for ``provider`` before any other source, for this registry only (``--api-key``)."""
        if key:
            self._runtime_keys[provider] = key
        else:
            self._runtime_keys.pop(provider, None)

    def stream(self, model: Model, context: Any, **options: Any) -> Any:
        """:func:`pi_core.ai.stream` through this registry (its providers and credentials).
        ``reasoning_effort`` is accepted as pi's name for ``reasoning``."""
        from .client import stream

        if "reasoning_effort" in options:
            options["reasoning"] = options.pop("reasoning_effort")
        return stream(model, context, registry=self, **options)

    async def complete(self, model: Model, context: Any, **options: Any) -> Any:
        """The final :class:`~pi_core.ai.AssistantMessage` of :meth:`stream`; never raises for provider
        failures (they end in a message with ``stop_reason`` ``error``)."""
        events = self.stream(model, context, **options)
        async for _ in events:
            pass
        return await events.result()

    def register_provider(self, item: ApiProvider | ProviderConfig) -> None:
        """Add an API implementation or a provider at run time (a provider of the same name is replaced;
        unregistering it brings back what it replaced)."""
        if getattr(item, "stream", None) is not None:  # an API implementation (the plugin host's rule)
            api: Any = item
            self._apis[api.api] = api
            self._runtime_api_names.add(api.api)
            return
        config: Any = item
        self._extra = [c for c in self._extra if c.name != config.name] + [config]
        self.reload()

    def unregister_provider(self, name: str) -> bool:
        """Remove a provider (or API implementation) added with :meth:`register_provider`."""
        before = len(self._extra)
        self._extra = [c for c in self._extra if c.name != name]
        if name in self._runtime_api_names:
            self._runtime_api_names.discard(name)
            del self._apis[name]
            return True
        if len(self._extra) == before:
            return False
        self.reload()
        return True

    def close_names(self, text: str, provider: str | None = None, limit: int = 5) -> list[str]:
        names = [f"{m.provider}/{m.id}" for m in self.get_models(provider)]
        lowered = {n.lower(): n for n in names}
        ids = {n.split("/", 1)[1].lower(): n for n in names}
        hits = difflib.get_close_matches(text.lower(), list(lowered) + list(ids), n=limit, cutoff=0.5)
        out: list[str] = []
        for hit in hits:
            name = lowered.get(hit) or ids[hit]
            if name not in out:
                out.append(name)
        if len(out) < limit:
            out += [n for n in names if text.lower() in n.lower() and n not in out][: limit - len(out)]
        return out


_default: ModelRegistry | None = None


def default_registry() -> ModelRegistry:
    """The registry used when ``stream()``/``get_model()`` get none: every installed ``pi`` entry point
    that implements ``register_providers``, plus the agent dir's files. Built on first use."""
    global _default
    if _default is None:
        from .discovery import collect_entry_point_providers

        apis, builtin, others, errors = collect_entry_point_providers()
        _default = ModelRegistry(apis, builtin, extra_providers=others)
        _default.errors[:0] = errors
    return _default


def set_default_registry(registry: ModelRegistry | None) -> None:
    """Replace (or, with ``None``, forget) the process-wide default registry."""
    global _default
    _default = registry


def valid_thinking_level(level: str) -> bool:
    return level in THINKING_LEVELS or level == "max"


__all__ = [
    "ApiProvider",
    "ModelNotFoundError",
    "ModelRegistry",
    "ProviderConfig",
    "ResolvedModel",
    "default_registry",
    "register_api_provider",
    "set_default_registry",
    "unregister_api_provider",
]


def get_model(provider: str, model_id: str) -> Model | None:
    """A model of the default registry (``None`` when unknown)."""
    return default_registry().get_model(provider, model_id)


def get_models(provider: str | None = None) -> list[Model]:
    """Models of ``provider`` (all providers when ``None``) in the default registry."""
    return default_registry().get_models(provider)


def get_providers() -> list[str]:
    """Provider names of the default registry."""
    return default_registry().get_providers()


__all__ += ["get_model", "get_models", "get_providers"]
