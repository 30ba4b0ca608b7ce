"""Model registry: built-in catalog, models.json (pi's format), auth.json and env keys, --provider/--model
resolution, the default registry built from entry points."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ai_helpers import run

from pi_core.ai import (
    Context,
    Model,
    ModelNotFoundError,
    ModelRegistry,
    ProviderConfig,
    UserMessage,
    catalog_index,
    complete,
    default_registry,
    get_model,
    get_models,
    get_providers,
    load_catalog,
    resolve_config_value,
    set_default_registry,
)


def plugin_items() -> tuple[list[Any], list[Any]]:
    from plugins.providers import anthropic, faux, google, openai_completions, openai_responses

    items: list[Any] = []
    for module in (faux, openai_completions, anthropic, openai_responses, google):
        module.register_providers(lambda item, replaces=None: items.append(item))
    return [i for i in items if hasattr(i, "stream")], [i for i in items if not hasattr(i, "stream")]


@pytest.fixture
def registry_factory(agent_dir: Path):
    def make(models: dict[str, Any] | None = None, auth: dict[str, Any] | None = None,
             env: dict[str, str] | None = None, extra: list[ProviderConfig] = ()) -> ModelRegistry:
        agent_dir.mkdir(parents=True, exist_ok=True)
        if models is not None:
            (agent_dir / "models.json").write_text(json.dumps(models))
        if auth is not None:
            (agent_dir / "auth.json").write_text(json.dumps(auth))
        apis, providers = plugin_items()
        return ModelRegistry(apis, providers, extra_providers=extra, agent_dir=agent_dir, env=env or {})
    return make


def test_builtin_catalog_facts(registry_factory) -> None:
    registry = registry_factory()
    for provider in ("anthropic", "openai", "google", "groq", "openrouter", "mistral", "xai", "faux"):
        assert provider in registry.get_providers()
    sonnet = registry.get_model("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.api == "anthropic-messages" and sonnet.base_url == "https://api.anthropic.com"
    assert (sonnet.context_window, sonnet.max_tokens) == (200_000, 64_000)
    assert (sonnet.cost.input, sonnet.cost.output, sonnet.cost.cache_read, sonnet.cost.cache_write) == (3, 15, 0.3, 3.75)
    assert sonnet.input == ["text", "image"] and sonnet.reasoning is True
    for model in registry.get_models():
        assert registry.get_api(model.api) is not None, f"{model.provider}/{model.id} has no API implementation"
        assert model.context_window > 0 and model.max_tokens > 0
    mistral = registry.get_model("mistral", "devstral-medium-latest")
    assert mistral.api == "mistral-conversations" and mistral.base_url == "https://api.mistral.ai"


def test_catalog_index_documents_env_vars_and_defaults() -> None:
    index = catalog_index()
    assert index["anthropic"]["env"] == ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
    assert index["google"]["env"] == ["GEMINI_API_KEY"]
    for provider, info in index.items():
        assert info["models"] == len(load_catalog(provider))
        assert any(m.id == info["default"] for m in load_catalog(provider)), provider


def test_models_json_custom_provider_in_pi_format(registry_factory) -> None:
    registry = registry_factory({"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:36493/v1", "api": "openai-completions", "apiKey": "fake-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False, "contextWindow": 128000,
                    "maxTokens": 4096, "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}},
                   {"id": "bare"}]}}})
    model = registry.get_model("fake", "fake-model")
    assert model.to_json() == {"id": "fake-model", "name": "Fake Model", "api": "openai-completions", "provider": "fake",
                               "baseUrl": "http://127.0.0.1:36493/v1", "reasoning": False, "input": ["text"],
                               "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25},
                               "contextWindow": 128000, "maxTokens": 4096}
    bare = registry.get_model("fake", "bare")
    assert (bare.name, bare.context_window, bare.max_tokens, bare.input) == ("bare", 128_000, 16_384, ["text"])
    assert registry.get_api_key("fake") == "fake-key"


def test_models_json_overrides_builtin_provider(registry_factory) -> None:
    registry = registry_factory({"providers": {"anthropic": {
        "baseUrl": "https://proxy.example/anthropic", "headers": {"x-team": "core"},
        "modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 1000000, "cost": {"input": 6}}, "nope": {"x": 1}},
        "models": [{"id": "claude-local", "contextWindow": 50000}]}}})
    sonnet = registry.get_model("anthropic", "claude-sonnet-4-5")
    assert sonnet.base_url == "https://proxy.example/anthropic" and sonnet.headers == {"x-team": "core"}
    assert sonnet.context_window == 1_000_000 and sonnet.cost.input == 6 and sonnet.cost.output == 15
    local = registry.get_model("anthropic", "claude-local")
    assert local.api == "anthropic-messages" and local.base_url == "https://proxy.example/anthropic"
    assert registry.get_model("anthropic", "claude-opus-4-5") is not None  # the rest of the catalog stays


def test_models_json_jsonc_and_broken_entries_are_reported(registry_factory) -> None:
    (registry_factory().agent_dir / "models.json").write_text("""{
      // local servers
      "providers": {
        "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
                   "compat": {"supportsDeveloperRole": false},
                   "models": [{"id": "qwen3:8b", "reasoning": true, "compat": {"thinkingFormat": "qwen"}},]},
        "broken": {"models": "not a list"},
        "nourl": {"api": "openai-completions", "models": [{"id": "x"}]},
      }
    }""")
    registry = registry_factory()
    model = registry.get_model("ollama", "qwen3:8b")
    assert model.compat == {"supportsDeveloperRole": False, "thinkingFormat": "qwen"}
    assert any("broken" in e for e in registry.errors) and any("nourl" in e for e in registry.errors)
    assert registry.get_model("anthropic", "claude-sonnet-4-5") is not None


def test_invalid_models_json_keeps_builtins(registry_factory) -> None:
    (registry_factory().agent_dir / "models.json").write_text("{not json")
    registry = registry_factory()
    assert registry.errors and "invalid JSON" in registry.errors[0]
    assert registry.get_model("openai", "gpt-5") is not None


def test_api_key_order_explicit_auth_models_json_env(registry_factory) -> None:
    # pi 1.6's order (checked against the TypeScript pi: a models.json apiKey beats GROQ_API_KEY).
    models = {"providers": {"groq": {"apiKey": "from-models-json"}}}
    registry = registry_factory(models, auth={"groq": {"type": "api_key", "key": "from-auth"}},
                                env={"GROQ_API_KEY": "from-env"})
    assert registry.get_api_key("groq", "explicit") == "explicit"
    assert registry.get_api_key("groq") == "from-auth"
    assert registry_factory(models, auth={}, env={"GROQ_API_KEY": "from-env"}).get_api_key("groq") == "from-models-json"
    assert registry_factory({}, auth={}, env={"GROQ_API_KEY": "from-env"}).get_api_key("groq") == "from-env"
    oauth = registry_factory(auth={"anthropic": {"type": "oauth", "access": "tok", "refresh": "r", "expires": 1}})
    assert oauth.get_api_key("anthropic") == "tok"
    assert registry_factory(auth={}, env={"ANTHROPIC_API_KEY": "k2"}).get_api_key("anthropic") == "k2"
    assert registry_factory(auth={}, env={}).get_api_key("anthropic") is None


def test_config_value_forms(tmp_path: Path) -> None:
    env = {"MY_KEY": "secret", "lower": "x"}
    assert resolve_config_value("$MY_KEY", env) == "secret" and resolve_config_value("${MY_KEY}", env) == "secret"
    assert resolve_config_value("MY_KEY", env) == "secret"  # pi 0.58: a set variable's name
    assert resolve_config_value("literal-key", env) == "literal-key"
    assert resolve_config_value("$!bang", env) == "!bang"
    assert resolve_config_value(f"!{sys.executable} -c \"print('from-cmd')\"", env) == "from-cmd"
    assert resolve_config_value("$UNSET", env) is None


def test_plugin_providers_apply_after_models_json(registry_factory) -> None:
    plugin = ProviderConfig(name="fake", api="openai-completions", base_url="http://plugin/v1",
                            models=[Model(id="plugin-model", api="", provider="")])
    registry = registry_factory({"providers": {"fake": {"baseUrl": "http://json/v1", "api": "openai-completions",
                                                        "apiKey": "k", "models": [{"id": "json-model"}]}}},
                                extra=[plugin])
    assert [m.id for m in registry.get_models("fake")] == ["plugin-model"]
    assert registry.get_model("fake", "plugin-model").base_url == "http://plugin/v1"


# --- resolution -----------------------------------------------------------------------------------

def test_resolve_exact_slash_and_provider_flag(registry_factory) -> None:
    registry = registry_factory()
    assert registry.resolve("anthropic", "claude-sonnet-4-5").id == "claude-sonnet-4-5"
    assert registry.resolve(None, "anthropic/claude-sonnet-4-5").provider == "anthropic"
    assert registry.resolve("ANTHROPIC", "claude-sonnet-4-5").provider == "anthropic"
    assert registry.resolve(None, "openai/gpt-4o").provider == "openai"  # provider "openai" has gpt-4o
    assert registry.resolve("openrouter", "openai/gpt-4o").id == "openai/gpt-4o"
    assert registry.resolve(None, "openrouter/openai/gpt-4o").provider == "openrouter"


def test_resolve_fuzzy_prefers_aliases_and_reads_thinking_suffix(registry_factory) -> None:
    registry = registry_factory()
    assert registry.resolve("anthropic", "sonnet-4-5").id == "claude-sonnet-4-5"  # the alias, not a dated one
    with_level = registry.resolve_full("anthropic", "claude-sonnet-4-5:high")
    assert with_level.model.id == "claude-sonnet-4-5" and with_level.thinking_level == "high"
    assert registry.resolve("faux", "echo").api == "faux"
    assert registry.resolve("faux").id == "echo"


def test_resolve_errors_name_close_matches(registry_factory) -> None:
    registry = registry_factory()
    with pytest.raises(ModelNotFoundError) as excinfo:
        registry.resolve("anthropic", "claude-sonet-4-5x")
    assert "anthropic/claude-sonnet-4-5" in str(excinfo.value)
    with pytest.raises(ModelNotFoundError, match='Unknown provider "antropic".*anthropic'):
        registry.resolve("antropic", "x")
    custom = registry.resolve_full("openai", "gpt-99-preview", allow_custom=True)
    assert custom.model.id == "gpt-99-preview" and custom.model.api == "openai-responses" and custom.warnings


def test_available_models_need_a_key_unless_local_or_keyless(registry_factory) -> None:
    models = {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
                                       "models": [{"id": "llama3"}]}}}
    registry = registry_factory(models, auth={}, env={"GROQ_API_KEY": "k"})
    assert {m.provider for m in registry.available_models()} == {"groq", "ollama"}
    # the keyless faux is usable but never offered: only when asked for by name
    assert {m.provider for m in registry.available_models(unlisted=True)} == {"faux", "groq", "ollama"}


def test_default_registry_comes_from_entry_points() -> None:
    set_default_registry(None)
    try:
        registry = default_registry()
        assert {"anthropic", "openai", "google", "faux"} <= set(get_providers())
        assert get_model("faux", "echo") is not None and get_models("faux")[0].id == "echo"
        assert registry.get_api("openai-completions") is not None
        reply = run(complete(get_model("faux", "echo"), Context(messages=[UserMessage(content="standalone")])))
        assert reply.text() == "standalone"
    finally:
        set_default_registry(None)


def test_stream_uses_registry_keys(registry_factory, agent_dir: Path) -> None:
    from pi_core.testing import FakeProviderServer, Reply

    async def scenario() -> str:
        reply = Reply(chunks=[b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\n'])
        async with FakeProviderServer([reply]) as server:
            registry = registry_factory({"providers": {"local": {"baseUrl": "http://example.invalid/v1",
                                                                 "api": "openai-completions", "apiKey": "$LOCAL_KEY",
                                                                 "models": [{"id": "m"}]}}},
                                        env={"LOCAL_KEY": "env-secret"})
            model = registry.get_model("local", "m").model_copy(update={"base_url": server.url + "/v1"})
            await complete(model, Context(messages=[UserMessage(content="hi")]), registry=registry)
            return server.requests[0].headers["authorization"]

    assert run(scenario()) == "Bearer env-secret"
