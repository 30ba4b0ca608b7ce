"""Azure OpenAI: endpoint from AZURE_OPENAI_* (or the auth.json env object), deployment names, api-version,
the Responses and Chat Completions request shapes — against a fake Azure endpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from auth_fakes import FakeHTTP, builtin_registry, chat_sse, responses_sse

from pi_core.ai import Context, StreamOptions, UserMessage, complete

CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="hello")])


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def azure():
    with FakeHTTP() as http:
        http.route("POST", "/openai/v1/responses", lambda r: responses_sse("from responses"))
        http.route("POST", "/openai/v1/chat/completions", lambda r: chat_sse("from foundry"))
        yield http


def test_responses_and_chat_models_with_deployment_names(agent_dir: Path, azure: FakeHTTP,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", f"{azure.url}/openai/v1")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-6.2-sol=my-gpt, deepseek-v4-pro=my-ds")
    registry = builtin_registry(agent_dir, process_env=True)
    assert registry.has_auth("azure")
    gpt = run(complete(registry.get_model("azure", "gpt-6.2-sol"), CONTEXT, registry=registry))
    ds = run(complete(registry.get_model("azure", "deepseek-v4-pro"), CONTEXT, registry=registry))
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
    run(complete(registry.get_model("azure", "gpt-6.2-sol"), CONTEXT, registry=registry))
    assert (gpt.text(), ds.text()) == ("from responses", "from foundry"), (gpt.error_message, ds.error_message)
    first, second = azure.requests_to("/openai/v1/responses")
    assert first.query == {"api-version": "v1"} and second.query == {"api-version": "2025-04-01-preview"}
    assert first.headers["api-key"] == "az-key" and "authorization" not in first.headers
    assert first.body["model"] == "my-gpt" and first.body["store"] is False
    chat = azure.requests_to("/openai/v1/chat/completions")[0]
    assert chat.headers["authorization"] == "Bearer az-key" and chat.query == {}
    assert chat.body["model"] == "my-ds" and gpt.model == "gpt-6.2-sol"


def test_endpoint_and_key_from_the_auth_json_entry(agent_dir: Path, azure: FakeHTTP) -> None:
    auth = {"azure": {"type": "api_key", "key": "stored-key", "env": {"AZURE_OPENAI_BASE_URL": azure.url + "/openai/v1/"}}}
    registry = builtin_registry(agent_dir, env={}, auth_json=auth)
    reply = run(complete(registry.get_model("azure", "gpt-6.2-sol"), CONTEXT, registry=registry))
    assert reply.text() == "from responses", reply.error_message
    sent = azure.requests_to("/openai/v1/responses")[0]
    assert sent.headers["api-key"] == "stored-key" and sent.body["model"] == "gpt-6.2-sol"


def test_resource_names_and_base_urls_are_normalized() -> None:
    from plugins.providers.azure import normalize_base_url, prepare

    assert normalize_base_url("https://res.openai.azure.com") == "https://res.openai.azure.com/openai/v1"
    assert normalize_base_url("https://r.cognitiveservices.azure.com/openai/") == \
        "https://r.cognitiveservices.azure.com/openai/v1"
    assert normalize_base_url("https://r.services.ai.azure.com/openai/v1/responses") == \
        "https://r.services.ai.azure.com/openai/v1"
    assert normalize_base_url("https://proxy.example.com/azure/") == "https://proxy.example.com/azure"
    from pi_core.ai import Model

    model = Model(id="gpt-x", api="azure-openai-responses", provider="azure", base_url="")
    options = StreamOptions(env={"AZURE_OPENAI_RESOURCE_NAME": "myres"})
    assert prepare(model, options).base_url == "https://myres.openai.azure.com/openai/v1"


def test_a_missing_endpoint_is_a_clear_error(agent_dir: Path) -> None:
    registry = builtin_registry(agent_dir, env={"AZURE_OPENAI_API_KEY": "k"})
    reply = run(complete(registry.get_model("azure", "gpt-6.2-sol"), CONTEXT, registry=registry))
    assert reply.stop_reason == "error"
    assert "AZURE_OPENAI_BASE_URL" in reply.error_message and "AZURE_OPENAI_RESOURCE_NAME" in reply.error_message
