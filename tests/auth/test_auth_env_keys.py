"""Every provider of pi 1.6's "single primary API-key variable" table (docs/providers.md, "Use an API key from
the environment") is a built-in provider here, configured by that variable alone, and its key reaches the
provider's endpoint (pointed at a local fake server through ``models.json``). Providers needing more than
one value have their own tests (Copilot's token exchange, Azure, Cloudflare, Bedrock, Vertex); Radius and
TypeSafe are pi-only services."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from auth_fakes import FakeHTTP, builtin_registry, responses_sse

from pi_core.ai import Context, UserMessage, complete
from pi_core.testing import FakeProviderServer

#: pi 1.6's table: (provider as pi names it, variable), and the provider ids here that the variable configures.
PI_ENV_TABLE: list[tuple[str, str, list[str]]] = [
    ("Anthropic", "ANTHROPIC_API_KEY", ["anthropic"]),
    ("Ant Ling", "ANT_LING_API_KEY", ["ant-ling"]),
    ("OpenAI", "OPENAI_API_KEY", ["openai"]),
    ("DeepSeek", "DEEPSEEK_API_KEY", ["deepseek"]),
    ("NVIDIA NIM", "NVIDIA_API_KEY", ["nvidia"]),
    ("Google Gemini", "GEMINI_API_KEY", ["google"]),
    ("Mistral", "MISTRAL_API_KEY", ["mistral"]),
    ("Groq", "GROQ_API_KEY", ["groq"]),
    ("Cerebras", "CEREBRAS_API_KEY", ["cerebras"]),
    ("xAI", "XAI_API_KEY", ["xai"]),
    ("OpenRouter", "OPENROUTER_API_KEY", ["openrouter"]),
    ("Vercel AI Gateway", "AI_GATEWAY_API_KEY", ["vercel-ai-gateway"]),
    ("ZAI Coding Plan (Global)", "ZAI_API_KEY", ["zai"]),
    ("ZAI Coding Plan (China)", "ZAI_CODING_CN_API_KEY", ["zai-coding-cn"]),
    ("OpenCode Zen and Go", "OPENCODE_API_KEY", ["opencode", "opencode-go"]),
    ("Hugging Face", "HF_TOKEN", ["huggingface"]),
    ("Fireworks", "FIREWORKS_API_KEY", ["fireworks"]),
    ("Together AI", "TOGETHER_API_KEY", ["together"]),
    ("Baseten", "BASETEN_API_KEY", ["baseten"]),
    ("Kimi For Coding", "KIMI_API_KEY", ["kimi-coding"]),
    ("Meta", "META_API_KEY", ["meta"]),
    ("MiniMax", "MINIMAX_API_KEY", ["minimax"]),
    ("MiniMax (China)", "MINIMAX_CN_API_KEY", ["minimax-cn"]),
    ("Moonshot AI (Global and China)", "MOONSHOT_API_KEY", ["moonshotai", "moonshotai-cn"]),
    ("Qwen Token Plan Team", "QWEN_TOKEN_PLAN_TEAM_API_KEY", ["qwen-token-plan"]),
    ("Qwen Token Plan Team (China)", "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", ["qwen-token-plan-cn"]),
    ("Qwen Token Plan Individual", "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", ["qwen-token-plan-individual"]),
    ("Qwen Token Plan Individual (China)", "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", ["qwen-token-plan-individual-cn"]),
    ("Xiaomi MiMo", "XIAOMI_API_KEY", ["xiaomi"]),
    ("Xiaomi MiMo Token Plan (China)", "XIAOMI_TOKEN_PLAN_CN_API_KEY", ["xiaomi-token-plan-cn"]),
    ("Xiaomi MiMo Token Plan (Amsterdam)", "XIAOMI_TOKEN_PLAN_AMS_API_KEY", ["xiaomi-token-plan-ams"]),
    ("Xiaomi MiMo Token Plan (Singapore)", "XIAOMI_TOKEN_PLAN_SGP_API_KEY", ["xiaomi-token-plan-sgp"]),
]
CASES = [(variable, provider) for _, variable, providers in PI_ENV_TABLE for provider in providers]


def test_each_variable_configures_exactly_its_providers(agent_dir: Path) -> None:
    empty = builtin_registry(agent_dir)
    for _, variable, providers in PI_ENV_TABLE:
        registry = builtin_registry(agent_dir, env={variable: "k"})
        configured = {p for p in registry.get_providers() if registry.has_auth(p) and not empty.has_auth(p)}
        assert configured == set(providers), variable


@pytest.mark.parametrize(("variable", "provider"), CASES)
def test_the_key_from_the_environment_reaches_the_provider(agent_dir: Path, variable: str, provider: str) -> None:
    key = f"key-for-{provider}"
    probe = builtin_registry(agent_dir, env={variable: key})
    config = probe.get_provider(provider)
    model_id = config.default_model or probe.get_models(provider)[0].id
    api = probe.get_model(provider, model_id).api
    # the Responses API is spoken by the auth fakes; the others by pi_core.testing's server
    with (FakeHTTP() if api == "openai-responses" else FakeProviderServer(["hello from the fake"])) as server:
        if isinstance(server, FakeHTTP):
            server.route("POST", "/v1/responses", lambda request: responses_sse("hello from the fake"))
        base = server.url if api in ("anthropic-messages", "mistral-conversations") else server.url + "/v1"
        registry = builtin_registry(agent_dir, env={variable: key},
                                    models_json={"providers": {provider: {"baseUrl": base}}})
        model = registry.get_model(provider, model_id)
        reply = asyncio.run(asyncio.wait_for(complete(model, Context(messages=[UserMessage(content="hi")]),
                                                      registry=registry), 30))
        assert reply.stop_reason == "stop", reply.error_message
        assert reply.text() == "hello from the fake"
        sent = server.requests[0]
    headers = {k.lower(): v for k, v in sent.headers.items()}
    assert key in (headers.get("authorization", "").removeprefix("Bearer "), headers.get("x-api-key"),
                   headers.get("x-goog-api-key"))
