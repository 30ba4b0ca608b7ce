"""The built-in model catalog: one JSON file per provider, generated from pi 1.6.0's bundled model list
by ``generate.py`` (see ``README.md`` for where every figure comes from)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..types import Model

if TYPE_CHECKING:
    from ..registry import ProviderConfig

HERE = Path(__file__).resolve().parent


@functools.cache
def catalog_index() -> dict[str, Any]:
    """``providers.json``: per provider its API-key env vars, APIs, model count and default model."""
    return json.loads((HERE / "providers.json").read_text(encoding="utf-8"))["providers"]


@functools.cache
def _raw(provider: str) -> tuple[dict[str, Any], ...]:
    path = HERE / f"{provider}.json"
    if not path.is_file():
        raise KeyError(f"no built-in catalog for provider {provider!r}")
    return tuple(json.loads(path.read_text(encoding="utf-8")))


def load_catalog(provider: str, api: str | None = None) -> list[Model]:
    """The built-in models of ``provider`` (only those speaking ``api`` when given)."""
    return [Model.model_validate(m) for m in _raw(provider) if api is None or m["api"] == api]


def catalog_providers(api: str | None = None) -> list[str]:
    """Providers with a built-in catalog (those having models of ``api`` when given)."""
    return [name for name, info in catalog_index().items() if api is None or api in info["apis"]]


def catalog_provider(name: str, api: str | None = None) -> ProviderConfig:
    """A :class:`~pi_core.ai.ProviderConfig` for a built-in catalog provider; its models load lazily."""
    from ..registry import ProviderConfig

    info = catalog_index()[name]
    if "baseUrl" in info and api:  # the index knows the endpoint: the model file is read only when listed
        base_url = info["baseUrl"]
    else:
        first = _raw(name)[0]
        api, base_url = api or first["api"], first.get("baseUrl", "")
    return ProviderConfig(name=name, api=api, base_url=base_url,
                          api_key_env=list(info["env"]), models=lambda: load_catalog(name),
                          default_model=info.get("default"))


__all__ = ["catalog_index", "catalog_provider", "catalog_providers", "load_catalog"]
