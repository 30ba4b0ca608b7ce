"""`openai-completions` dialect flags (`compat`) as pi 1.6 applies them: what a real `pi -p` run sends to the
local fake server for catalog models (their base URL moved there through `models.json`) and for custom models.
The expected fields are those pi 1.6 sent for the same runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from test_cli_run import pi

LEVELS = {"off": "none", "high": "hi-effort"}


def sent(tmp_path: Path, providers: dict[str, Any], model: str,
         env: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    with FakeOpenAI([{"text": "ok"}]) as server:
        for provider in providers.values():
            provider["baseUrl"] = server.base_url
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
        result = pi(tmp_path, agent, "--model", model, "--no-session", "-p", "hi", env=env)
    assert result.returncode == 0, result.stderr
    request = server.requests[0]
    return request["body"], request["headers"]


def custom(compat: dict[str, Any]) -> dict[str, Any]:
    model = {"id": "m", "reasoning": True, "input": ["text"], "contextWindow": 128000, "maxTokens": 32000,
             "thinkingLevelMap": LEVELS, "compat": compat}
    return {"custom": {"api": "openai-completions", "apiKey": "k", "models": [model]}}


@pytest.mark.parametrize(("provider", "model", "expected", "absent"), [
    ("ant-ling", "Ring-2.6-1T:high", {"reasoning": {"effort": "high"}, "max_tokens": 65536}, ["reasoning_effort"]),
    ("baseten", "zai-org/GLM-5.2:high", {"chat_template_args": {"enable_thinking": True},
                                         "reasoning_effort": "high"}, []),
    ("baseten", "zai-org/GLM-5.2:off", {"chat_template_args": {"enable_thinking": False},
                                        "reasoning_effort": "none"}, []),
    ("zai", "glm-5.3:high", {"tool_stream": True, "thinking": {"type": "enabled", "clear_thinking": False},
                             "reasoning_effort": "high"}, []),
    ("qwen-token-plan", "glm-5.3:high", {"enable_thinking": True, "reasoning_effort": "high"}, []),
])
def test_catalog_models_send_their_dialect(tmp_path: Path, provider: str, model: str, expected: dict[str, Any],
                                          absent: list[str]) -> None:
    body, _ = sent(tmp_path, {provider: {"apiKey": "k"}}, f"{provider}/{model}")
    assert {k: body.get(k) for k in expected} == expected
    assert not [k for k in absent if k in body]


def test_chat_template_values_fill_their_placeholders(tmp_path: Path) -> None:
    kwargs = {"enable_thinking": {"$var": "thinking.enabled"}, "budget": {"$var": "thinking.budget"},
              "effort": {"$var": "thinking.effort", "omitWhenOff": True}, "fixed": 3}
    on, _ = sent(tmp_path, custom({"thinkingFormat": "chat-template", "chatTemplateKwargs": kwargs}), "custom/m:high")
    off, _ = sent(tmp_path, custom({"thinkingFormat": "chat-template", "chatTemplateKwargs": kwargs}), "custom/m:off")
    assert on["chat_template_kwargs"] == {"enable_thinking": True, "budget": 16384, "effort": "hi-effort", "fixed": 3}
    assert off["chat_template_kwargs"] == {"enable_thinking": False, "fixed": 3}


def test_string_thinking_sends_the_mapped_level(tmp_path: Path) -> None:
    on, _ = sent(tmp_path, custom({"thinkingFormat": "string-thinking"}), "custom/m:high")
    off, _ = sent(tmp_path, custom({"thinkingFormat": "string-thinking"}), "custom/m:off")
    assert (on["thinking"], off["thinking"]) == ("hi-effort", "none")
    assert "reasoning_effort" not in on


def test_priority_gateway_routing_tool_stream_cache_key_and_budget(tmp_path: Path) -> None:
    compat = {"vllmPriority": 5, "vercelGatewayRouting": {"only": ["a"], "order": ["b", "a"]}, "zaiToolStream": True,
              "promptCacheKeyMode": "enabled", "supportsThinkingTokenBudget": True}
    body, _ = sent(tmp_path, custom(compat), "custom/m:high", env={"PI_CACHE_RETENTION": "long"})
    assert body["priority"] == 5 and body["tool_stream"] is True and body["thinking_token_budget"] == 16384
    assert body["providerOptions"] == {"gateway": {"only": ["a"], "order": ["b", "a"]}}
    assert body["prompt_cache_key"] and body["prompt_cache_retention"] == "24h"


@pytest.mark.parametrize(("style", "names"), [
    (None, {"session_id", "x-client-request-id", "x-session-affinity"}),
    ("openai-nosession", {"x-client-request-id", "x-session-affinity"}),
    ("openrouter", {"x-session-id"}),
])
def test_session_affinity_headers_follow_the_format(tmp_path: Path, style: str | None, names: set[str]) -> None:
    compat: dict[str, Any] = {"sendSessionAffinityHeaders": True}
    if style:
        compat["sessionAffinityFormat"] = style
    _, headers = sent(tmp_path, custom(compat), "custom/m:high")
    assert {k for k in headers if "session" in k or "request-id" in k} == names
