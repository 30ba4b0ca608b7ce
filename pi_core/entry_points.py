"""The ``pi`` entry points of the installed distributions, scanned once per process.

This sits below both the model layer (``pi_core.ai`` reads provider plugins from it when used on its
own) and the plugin framework (``pi_core.extensions`` builds a session's plugins from it), so that
neither has to import the other. It imports nothing of pi_core but the version.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GROUP = "pi"
DISTRIBUTION = "pi-core-agent"

#: Built-in plugins as ``(name, module)``; used only when this distribution's metadata is missing
#: (running from a source tree that was never installed). Must equal ``[project.entry-points.pi]``
#: in pyproject.toml (tests/extensions/test_discovery.py checks it).
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("read", "plugins.tools.read"),
    ("write", "plugins.tools.write"),
    ("edit", "plugins.tools.edit"),
    ("bash", "plugins.tools.bash"),
    ("grep", "plugins.tools.grep"),
    ("find", "plugins.tools.find"),
    ("ls", "plugins.tools.ls"),
    ("toolsets", "plugins.tools.toolsets"),
    ("faux", "plugins.providers.faux"),
    ("openai-completions", "plugins.providers.openai_completions"),
    ("anthropic", "plugins.providers.anthropic"),
    ("openai-responses", "plugins.providers.openai_responses"),
    ("google", "plugins.providers.google"),
    ("openai-codex", "plugins.providers.openai_codex"),
    ("github-copilot", "plugins.providers.github_copilot"),
    ("azure", "plugins.providers.azure"),
    ("cloudflare", "plugins.providers.cloudflare"),
    ("amazon-bedrock", "plugins.providers.amazon_bedrock"),
    ("google-vertex", "plugins.providers.google_vertex"),
    ("llama.cpp", "plugins.providers.llama_cpp"),
    ("model-lists", "plugins.model_lists"),
    ("mcp", "plugins.mcp"),
    ("tool-search", "plugins.tool_search"),
    ("codemode", "plugins.codemode"),
    ("session", "plugins.sessions"),
    ("auth", "plugins.commands.auth"),
    ("commands-general", "plugins.commands.general"),
    ("commands-model", "plugins.commands.model"),
    ("commands-session", "plugins.commands.session"),
    ("commands-info", "plugins.commands.info"),
    ("commands-settings", "plugins.commands.settings"),
    ("commands-transfer", "plugins.commands.transfer"),
)


@dataclass(frozen=True)
class PluginSpec:
    """A plugin before it is imported."""

    name: str
    module: str
    source: str
    """``builtin``, ``entrypoint``, ``global``, ``project``, ``cli`` or ``sdk``."""
    dist: str | None = None
    version: str | None = None
    path: Path | None = None


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@functools.cache
def _all_entry_points() -> object:
    from importlib import metadata

    # One pass over the installed distributions serves every group pi reads (plugins, resources).
    return metadata.entry_points()


def entry_points_in(*groups: str) -> list[Any]:
    """The installed entry points of the given groups, in that order (one cached scan per process)."""
    found = _all_entry_points()
    select = getattr(found, "select", None)
    if select is None:  # a plain sequence of entry points
        return [ep for ep in found if ep.group in groups]  # type: ignore[attr-defined]
    return [ep for group in groups for ep in select(group=group)]


@functools.cache
def scan_entry_points() -> tuple[PluginSpec, ...]:
    """Every ``pi`` entry point of every installed distribution, sorted by (builtin first, name).

    Cached for the life of the process: reading distribution metadata is slow and does not change
    under a running ``pi``. Call :func:`clear_entry_point_cache` (or ``scan_entry_points.cache_clear()``)
    after installing a plugin or changing ``sys.path``.
    """
    specs: list[PluginSpec] = []
    seen: set[tuple[str, str]] = set()
    # entry_points() reads each distribution's entry_points.txt only; the (slow) METADATA
    # file is parsed for the few distributions that have a ``pi`` entry point.
    # ``dist.name`` and ``dist.version`` parse METADATA again at every access: once per distribution.
    described: dict[int, tuple[str, str | None]] = {}
    for ep in entry_points_in(GROUP):
        dist = ep.dist
        if id(dist) not in described:
            metadata = dist.metadata if dist is not None else None
            described[id(dist)] = ((metadata.get("Name") or "") if metadata is not None else "",
                                   metadata.get("Version") if metadata is not None else None)
        dist_name, version = described[id(dist)]
        key = (_normalise(dist_name), ep.name)
        if key in seen:  # the same distribution on sys.path twice
            continue
        seen.add(key)
        builtin = _normalise(dist_name) == DISTRIBUTION
        specs.append(PluginSpec(
            name=ep.name, module=ep.value, source="builtin" if builtin else "entrypoint",
            dist=dist_name, version=version,
        ))
    has_builtins = any(s.source == "builtin" for s in specs)
    if not has_builtins:
        from ._version import __version__

        specs.extend(PluginSpec(name, module, "builtin", DISTRIBUTION, __version__)
                     for name, module in BUILTIN_PLUGINS)
    specs.sort(key=lambda s: (s.source != "builtin", s.name, s.dist or ""))
    return tuple(specs)


def clear_entry_point_cache() -> None:
    """Forget the scanned entry points (after ``sys.path`` changed or something was installed)."""
    _all_entry_points.cache_clear()
    _clear_specs()


_clear_specs = scan_entry_points.cache_clear
# ``scan_entry_points.cache_clear()`` (the documented way) must forget the shared scan too.
scan_entry_points.cache_clear = clear_entry_point_cache  # type: ignore[method-assign]


__all__ = ["BUILTIN_PLUGINS", "DISTRIBUTION", "GROUP", "PluginSpec", "clear_entry_point_cache", "entry_points_in",
           "scan_entry_points"]
