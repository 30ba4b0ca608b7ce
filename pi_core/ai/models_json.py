"""``<agent dir>/models.json``: custom providers and models, and overrides of built-in ones, in pi's format.

```json
{"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
                          "apiKey": "ollama", "compat": {"supportsDeveloperRole": false},
                          "models": [{"id": "qwen3:8b", "reasoning": true, "contextWindow": 40960}]}}}
```

The file may contain ``//`` and ``/* */`` comments and trailing commas (pi accepts JSONC). Each provider
is validated on its own: a broken entry is reported and skipped, the rest still applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..safejson import parse_json
from .types import PiModel


class ModelEntry(PiModel):
    """One entry of a provider's ``models`` list (unset fields take pi's defaults)."""

    id: str
    name: str | None = None
    api: str | None = None
    base_url: str | None = None
    reasoning: bool | None = None
    input: list[str] | None = None
    cost: dict[str, Any] | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    thinking_level_map: dict[str, str | None] | None = None
    sampling_params: dict[str, Any] | None = None
    sampling_params_by_thinking_level: dict[str, dict[str, Any]] | None = None
    input_limits: dict[str, Any] | None = None


class ProviderEntry(PiModel):
    """One provider of ``models.json``."""

    name: str | None = None
    """The provider's display name (``/login``, ``ModelRegistry.get_provider_display_name``)."""
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] | None = None
    auth_header: bool | None = None
    compat: dict[str, Any] | None = None
    models: list[ModelEntry] | None = None
    model_overrides: dict[str, dict[str, Any]] | None = None


def strip_jsonc(text: str) -> str:
    """JSON text without ``//`` / ``/* */`` comments and trailing commas (strings left untouched)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def load_models_json(path: Path) -> tuple[dict[str, ProviderEntry], list[str]]:
    """The valid providers of ``path`` and the problems found (missing file: nothing, no problem)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"{path}: {exc}"]
    try:
        data = parse_json(strip_jsonc(text)) if text.strip() else {}
    except ValueError as exc:
        return {}, [f"{path}: invalid JSON ({exc}); custom models are not loaded"]
    providers = data.get("providers") if isinstance(data, dict) else None
    if providers is None:
        return {}, []
    if not isinstance(providers, dict):
        return {}, [f"{path}: \"providers\" must be an object"]
    valid: dict[str, ProviderEntry] = {}
    errors: list[str] = []
    for name, raw in providers.items():
        try:
            valid[name] = ProviderEntry.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(entry)'}: {e['msg']}" for e in exc.errors())
            errors.append(f"{path}: provider {name!r} skipped: {problems}")
    return valid, errors


__all__ = ["ModelEntry", "ProviderEntry", "load_models_json", "strip_jsonc"]
