"""Collecting ``register_providers`` contributions without a plugin host (standalone ``pi_core.ai`` use).

The plugin host of a session does this through the plugin framework; ``pi_core.ai.stream()`` used on its own (a
script, a notebook) needs the same providers, so the entry points are read here too (the scan itself is
cached per process by :func:`pi_core.entry_points.scan_entry_points`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from .registry import ApiProvider, ProviderConfig


def split_items(items: Iterable[Any]) -> tuple[list[ApiProvider], list[ProviderConfig]]:
    """Items with a ``stream`` attribute are APIs, the rest providers (the plugin host's rule)."""
    apis: list[ApiProvider] = []
    providers: list[ProviderConfig] = []
    for item in items:
        (apis if hasattr(item, "stream") else providers).append(item)
    return apis, providers


def collect_from(plugin: Any) -> list[Any]:
    """What ``plugin`` (a module or an object with a ``register_providers`` method) registers."""
    hook = getattr(plugin, "register_providers", None)
    if hook is None:
        return []
    items: list[Any] = []
    hook(lambda item, replaces=None: items.append(item))
    return items


def collect_entry_point_providers() -> tuple[list[ApiProvider], list[ProviderConfig], list[ProviderConfig], list[str]]:
    """APIs, built-in providers, third-party providers and load errors of the installed entry points."""
    from ..entry_points import scan_entry_points

    apis: list[ApiProvider] = []
    builtin: list[ProviderConfig] = []
    others: list[ProviderConfig] = []
    errors: list[str] = []
    for spec in scan_entry_points():
        try:
            module = importlib.import_module(spec.module.split(":")[0])
            items = collect_from(module)
        except Exception as exc:  # a broken plugin must not take the model layer down
            errors.append(f"plugin {spec.name!r} ({spec.module}): {type(exc).__name__}: {exc}")
            continue
        found_apis, found_providers = split_items(items)
        apis.extend(found_apis)
        (builtin if spec.source == "builtin" else others).extend(found_providers)
    return apis, builtin, others, errors


__all__ = ["collect_entry_point_providers", "collect_from", "split_items"]
