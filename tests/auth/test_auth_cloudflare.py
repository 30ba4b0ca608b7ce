"""Cloudflare Workers AI and AI Gateway: account and gateway ids in the base URL, from the environment or
the credential's env object (asked for by the API-key sign-in); the gateway's own auth header."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from auth_fakes import FakeHTTP, ScriptedLogin, anthropic_sse, builtin_registry, chat_sse

from pi_core.ai import Context, UserMessage, complete, login_provider

CONTEXT = Context(messages=[UserMessage(content="hello")])


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_login_asks_for_the_ids_and_requests_fill_the_urls(agent_dir: Path) -> None:
    with FakeHTTP() as http:
        http.route("POST", "/client/v4/accounts/acct-9/ai/v1/chat/completions", lambda r: chat_sse("workers"))
        http.route("POST", "/v1/acct-9/gw-1/anthropic/v1/messages", lambda r: anthropic_sse("gateway"))
        override = {"providers": {
            "cloudflare-workers-ai": {"baseUrl": f"{http.url}/client/v4/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai/v1"},
            "cloudflare-ai-gateway": {"baseUrl": f"{http.url}/v1/{{CLOUDFLARE_ACCOUNT_ID}}/{{CLOUDFLARE_GATEWAY_ID}}/anthropic"}}}
        registry = builtin_registry(agent_dir, models_json=override)
        login = ScriptedLogin(["cf-token", "acct-9", "gw-1"])
        run(login_provider(registry, "cloudflare-ai-gateway", login))
        assert [k for k, _ in login.asked] == ["secret", "text", "text"]
        stored = json.loads((agent_dir / "auth.json").read_text())["cloudflare-ai-gateway"]
        assert stored == {"type": "api_key", "key": "cf-token",
                          "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-9", "CLOUDFLARE_GATEWAY_ID": "gw-1"}}
        gateway_model = next(m for m in registry.get_models("cloudflare-ai-gateway") if m.api == "anthropic-messages")
        reply = run(complete(gateway_model, CONTEXT, registry=registry))
        assert reply.text() == "gateway", reply.error_message
        sent = http.requests_to("/v1/acct-9/gw-1/anthropic/v1/messages")[0]
        assert sent.headers["cf-aig-authorization"] == "Bearer cf-token"
        assert "x-api-key" not in sent.headers and "authorization" not in sent.headers

        workers = builtin_registry(agent_dir, env={"CLOUDFLARE_API_KEY": "cf-env"}, models_json=override)
        missing = run(complete(workers.get_models("cloudflare-workers-ai")[0], CONTEXT, registry=workers))
        assert missing.stop_reason == "error" and "CLOUDFLARE_ACCOUNT_ID" in missing.error_message
        (agent_dir / "auth.json").write_text(json.dumps({"cloudflare-workers-ai": {
            "type": "api_key", "key": "cf-stored", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-9"}}}))
        reply = run(complete(workers.get_models("cloudflare-workers-ai")[0], CONTEXT, registry=workers))
        assert reply.text() == "workers", reply.error_message
        sent = http.requests_to("/client/v4/accounts/acct-9/ai/v1/chat/completions")[0]
        assert sent.headers["authorization"] == "Bearer cf-stored"
