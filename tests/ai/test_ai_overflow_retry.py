"""Overflow classification over a corpus of real error bodies, retry classification and backoff, and
the opt-in retrying stream against a fake server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pi_core.testing import FakeProviderServer, Reply, json_reply
from ai_helpers import run

from pi_core.ai import (
    AbortController,
    ApiProvider,
    AssistantMessage,
    Context,
    Model,
    ModelRegistry,
    RetryPolicy,
    Usage,
    UserMessage,
    classify_error,
    format_http_error,
    is_context_overflow,
    stream,
)
from plugins.providers.openai_completions import API, stream_completions

CORPUS = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "ai" / "overflow_corpus.json").read_text())


def failed(provider: str, text: str) -> AssistantMessage:
    return AssistantMessage(api="x", provider=provider, model="m", stop_reason="error", error_message=text)


@pytest.mark.parametrize("case", CORPUS["cases"], ids=lambda c: f"{c['provider']}-{c['status']}-{c['kind']}")
def test_http_error_corpus(case: dict[str, Any]) -> None:
    text = format_http_error(case["status"], case["body"], case["style"])
    if "message" in case:
        assert text == case["message"]
    message = failed(case["provider"], text)
    assert is_context_overflow(message) is (case["kind"] == "overflow"), text
    assert classify_error(message) == case["kind"], text


@pytest.mark.parametrize("case", CORPUS["stream_errors"], ids=lambda c: c["message"][:40])
def test_stream_error_corpus(case: dict[str, Any]) -> None:
    assert classify_error(failed(case["provider"], case["message"])) == case["kind"]


def test_corpus_covers_every_built_in_api_family() -> None:
    providers = {c["provider"] for c in CORPUS["cases"] if c["kind"] == "overflow"}
    assert {"anthropic", "openai", "google", "xai", "groq", "openrouter", "mistral", "llama-cpp", "lmstudio",
            "ollama", "vllm", "cerebras"} <= providers


def test_bodyless_400_is_overflow_only_for_cerebras() -> None:
    assert is_context_overflow(failed("cerebras", "400 status code (no body)"))
    assert not is_context_overflow(failed("openai", "400 status code (no body)"))


def test_silent_and_length_overflow_use_the_context_window() -> None:
    silent = AssistantMessage(provider="zai", stop_reason="stop", usage=Usage(input=130_000, cache_read=1000))
    assert is_context_overflow(silent, 128_000) and not is_context_overflow(silent)
    assert not is_context_overflow(silent, 200_000)
    truncated = AssistantMessage(stop_reason="length", usage=Usage(input=127_500, output=0))
    assert is_context_overflow(truncated, 128_000)
    assert not is_context_overflow(truncated.model_copy(update={"usage": Usage(input=127_500, output=5)}), 128_000)


def test_a_400_mentioning_500_is_not_transient() -> None:
    text = '400: {"message":"max_tokens: 500000 > 64000, which is the maximum allowed","type":"invalid_request_error"}'
    assert classify_error(failed("anthropic", text)) == "fatal"
    assert classify_error(AssistantMessage(stop_reason="aborted", error_message="Request was aborted")) == "aborted"
    assert classify_error(ConnectionResetError("Connection reset by peer")) == "transient"


def test_backoff_policy() -> None:
    policy = RetryPolicy()
    assert [policy.delay_ms(n) for n in (1, 2, 3)] == [2000, 4000, 8000]
    assert policy.delay_ms(1, retry_after_ms=7000) == 7000
    assert policy.delay_ms(1, retry_after_ms=61_000) is None  # longer than allowed: give up now
    assert RetryPolicy(base_delay_ms=50_000).delay_ms(3) == 60_000
    transient = failed("openai", "503: {}")
    assert policy.should_retry(transient, 3) and not policy.should_retry(transient, 4)
    assert not policy.should_retry(failed("openai", "400: {}"), 1)
    assert not RetryPolicy(enabled=False).should_retry(transient, 1)


# --- the retrying stream ------------------------------------------------------------------------------

OK = Reply(chunks=[b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":"stop"}]}\n\n'])
REGISTRY = ModelRegistry([ApiProvider(API, stream_completions)], load_files=False)
FAST = RetryPolicy(base_delay_ms=10)


async def retried(replies: list[Any], policy: RetryPolicy = FAST, **options: Any) -> tuple[AssistantMessage, list, Any]:
    async with FakeProviderServer(replies) as server:
        model = Model(id="m", api=API, provider="local", base_url=server.url + "/v1")
        s = stream(model, Context(messages=[UserMessage(content="hi")]), registry=REGISTRY, api_key="k",
                   retry=policy, **options)
        events = [e async for e in s]
        return await s.result(), events, server


def test_transient_errors_are_retried_with_visible_events() -> None:
    replies = [json_reply(503, {"error": {"message": "overloaded", "type": "server_error"}}),
               json_reply(429, {"error": {"message": "slow down", "type": "requests"}}), OK]
    message, events, server = run(retried(replies))
    assert message.stop_reason == "stop" and message.text() == "fine"
    retries = [e for e in events if e.type == "retry"]
    assert [(r.attempt, r.max_attempts, r.delay_ms) for r in retries] == [(1, 3, 10), (2, 3, 20)]
    assert retries[0].error_message.startswith("503: ") and retries[0].to_json()["type"] == "retry"
    assert len(server.requests) == 3 and events[-1].type == "done"


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_never_retried(status: int) -> None:
    message, events, server = run(retried([json_reply(status, {"error": {"message": "no"}}), OK]))
    assert message.stop_reason == "error" and len(server.requests) == 1
    assert not any(e.type == "retry" for e in events)


def test_overflow_is_never_retried() -> None:
    body = {"error": {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}}
    message, _, server = run(retried([json_reply(400, body), OK]))
    assert classify_error(message) == "overflow" and len(server.requests) == 1


def test_retries_stop_after_the_limit() -> None:
    bad = [json_reply(500, {"error": {"message": "boom"}}) for _ in range(5)]
    message, events, server = run(retried(bad, RetryPolicy(max_retries=2, base_delay_ms=1)))
    assert message.stop_reason == "error" and len(server.requests) == 3
    assert [e.attempt for e in events if e.type == "retry"] == [1, 2]


def test_retry_after_header_is_honoured() -> None:
    replies = [json_reply(429, {"error": {"message": "wait"}}, {"retry-after-ms": "30"}), OK]
    message, events, _ = run(retried(replies))
    assert message.stop_reason == "stop" and [e.delay_ms for e in events if e.type == "retry"] == [30]


def test_connection_reset_is_retried() -> None:
    cut = Reply(chunks=[b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n', b"x"], cut_after=1)
    message, events, _ = run(retried([cut, OK]))
    assert message.text() == "fine" and sum(e.type == "start" for e in events) == 2


def test_abort_during_backoff_ends_aborted() -> None:
    async def scenario() -> tuple[AssistantMessage, int]:
        controller = AbortController()
        async with FakeProviderServer([json_reply(500, {"error": {"message": "x"}}), OK]) as server:
            model = Model(id="m", api=API, provider="local", base_url=server.url + "/v1")
            s = stream(model, Context(messages=[UserMessage(content="hi")]), registry=REGISTRY, api_key="k",
                       retry=RetryPolicy(base_delay_ms=5000), signal=controller.signal)
            async for event in s:
                if event.type == "retry":
                    asyncio.get_running_loop().call_later(0.05, controller.abort)
            return await s.result(), len(server.requests)

    message, requests = run(scenario())
    assert message.stop_reason == "aborted" and requests == 1
