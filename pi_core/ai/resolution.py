"""``--provider`` / ``--model`` resolution, following pi's rules.

1. The provider is ``--provider`` (case-insensitive) or the text before the first ``/`` when it names a
   known provider.
2. Within the candidates: an exact ``id`` or ``provider/id``; else a case-insensitive substring of id or
   name, preferring aliases (ids without a ``-YYYYMMDD`` suffix, or ending ``-latest``), the highest
   sorted one; else the highest dated one.
3. No match and a ``:`` in the pattern: ``model:level`` with a valid thinking level selects the model
   and the level.
4. A provider inferred from a slash that matched nothing: the whole text is tried across all models
   (OpenRouter ids such as ``openai/gpt-4o`` contain slashes).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from .types import Model

if TYPE_CHECKING:
    from .registry import ModelRegistry, ResolvedModel


def _find_provider(registry: ModelRegistry, name: str) -> str | None:
    if name in registry.get_providers():
        return name
    lowered = name.lower()
    return next((p for p in registry.get_providers() if p.lower() == lowered), None)


def _pick_exact(registry: ModelRegistry, hits: list[Model]) -> tuple[Model, list[str]]:
    if len(hits) == 1:
        return hits[0], []
    authed = [m for m in hits if registry.has_auth(m.provider)]
    chosen = (authed or hits)[0]
    others = ", ".join(f"{m.provider}/{m.id}" for m in hits if m is not chosen)
    return chosen, [f"Model id {chosen.id!r} exists for several providers; using {chosen.provider} "
                    f"(others: {others}). Use provider/model to choose."]


def match_pattern(registry: ModelRegistry, pattern: str, candidates: list[Model]) -> tuple[Model | None, list[str]]:
    """Steps (a) and (b): exact reference, then substring with alias preference."""
    exact = [m for m in candidates if m.id == pattern or f"{m.provider}/{m.id}" == pattern]
    if not exact:
        lowered = pattern.lower()
        exact = [m for m in candidates if m.id.lower() == lowered or f"{m.provider}/{m.id}".lower() == lowered]
    if exact:
        return _pick_exact(registry, exact)
    lowered = pattern.lower()
    fuzzy = [m for m in candidates if lowered in m.id.lower() or lowered in (m.name or "").lower()]
    if not fuzzy:
        return None, []
    aliases = [m for m in fuzzy if _alias(m.id)]
    pool = aliases or fuzzy
    return max(pool, key=lambda m: (m.id, m.provider)), []


def _alias(model_id: str) -> bool:
    from .registry import _is_alias

    return _is_alias(model_id)


def _match_with_level(registry: ModelRegistry, pattern: str,
                      candidates: list[Model]) -> tuple[Model | None, str | None, list[str]]:
    model, warnings = match_pattern(registry, pattern, candidates)
    if model is not None or ":" not in pattern:
        return model, None, warnings
    prefix, _, level = pattern.rpartition(":")
    from .registry import valid_thinking_level

    if not valid_thinking_level(level):
        return None, None, []
    model, warnings = match_pattern(registry, prefix, candidates)
    return model, (level if model is not None else None), warnings


def resolve_model(registry: ModelRegistry, provider: str | None, model: str | None, *,
                  allow_custom: bool = False) -> ResolvedModel:
    from .registry import ModelNotFoundError, ResolvedModel

    if provider is not None:
        found = _find_provider(registry, provider)
        if found is None:
            names = registry.get_providers()
            close = [p for p in names if provider.lower() in p.lower()] or \
                difflib.get_close_matches(provider, names, n=5, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ModelNotFoundError(f'Unknown provider "{provider}".{hint} '
                                     f"Known providers: {', '.join(registry.get_providers())}")
        provider = found
    if not model:
        if provider is None:
            raise ModelNotFoundError("No model given: pass --model (and optionally --provider).")
        default = registry.default_model(provider)
        if default is None:
            raise ModelNotFoundError(f'Provider "{provider}" has no models.')
        return ResolvedModel(default)
    inferred = False
    pattern = model
    if provider is None and "/" in model:
        head, _, rest = model.partition("/")
        found = _find_provider(registry, head)
        if found is not None:
            provider, pattern, inferred = found, rest, True
    elif provider is not None and model.lower().startswith(provider.lower() + "/"):
        pattern = model[len(provider) + 1:]
    candidates = registry.get_models(provider)
    hit, level, warnings = _match_with_level(registry, pattern, candidates)
    if hit is None and inferred:
        hit, level, warnings = _match_with_level(registry, model, registry.get_models())
    if hit is not None:
        return ResolvedModel(hit, level, warnings)
    if allow_custom and provider is not None and registry.default_model(provider) is not None:
        base = registry.default_model(provider)
        assert base is not None
        custom = base.model_copy(update={"id": pattern, "name": pattern})
        return ResolvedModel(custom, None, [f'Model "{pattern}" is not in the {provider} catalog; '
                                            f"using it with the settings of {base.id}."])
    close = registry.close_names(pattern, provider) or registry.close_names(model)
    where = f" for provider {provider}" if provider else ""
    hint = f" Close matches: {', '.join(close)}." if close else ""
    raise ModelNotFoundError(f'Model "{model}" not found{where}.{hint} '
                             f"List models with `pi --list-models`.")


__all__ = ["match_pattern", "resolve_model"]
