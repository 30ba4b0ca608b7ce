"""Which credential a request uses, OAuth refresh (before expiry and after a 401), and the request shape
of a Claude Pro/Max sign-in — against a fake token server and a fake Anthropic endpoint."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from auth_fakes import (
    Answer,
    FakeHTTP,
    OAuthServer,
    Request,
    anthropic_sse,
    bearer,
    builtin_registry,
    now_ms,
    unauthorized,
)

from pi_core.ai import (
    ApiProvider,
    Context,
    ProviderConfig,
    ToolDeclaration,
    UserMessage,
    complete,
    register_api_provider,
    unregister_api_provider,
)

TOKEN_PATH = "/v1/oauth/token"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch):
    with FakeHTTP() as http:
        oauth = OAuthServer(http, TOKEN_PATH, prefix="sk-ant-oat01")
        monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://platform.claude.com={http.url}")
        yield http, oauth


def signed_in(agent_dir: Path, oauth: OAuthServer, *, expires: int, access: str = "sk-ant-oat01-old") -> dict:
    entry = {"type": "oauth", "access": access, "refresh": oauth.new_refresh(), "expires": expires}
    (agent_dir / "auth.json").parent.mkdir(parents=True, exist_ok=True)
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": entry}))
    return entry


def accept(valid: set[str] | None = None, tool: tuple[str, dict] | None = None):
    def handler(request: Request) -> Answer:
        token = bearer(request)
        if valid is not None and token not in valid:
            return unauthorized()
        return anthropic_sse("hi from claude", tool)
    return handler


def sonnet(agent_dir: Path, http: FakeHTTP, env: dict[str, str] | None = None) -> tuple[Any, Any]:
    registry = builtin_registry(agent_dir, env=env, models_json={"providers": {"anthropic": {"baseUrl": http.url}}})
    return registry, registry.get_model("anthropic", "claude-sonnet-4-5")


CONTEXT = Context(system_prompt="Be helpful.", messages=[UserMessage(content="hello")],
                  tools=[ToolDeclaration(name="read", description="Read a file",
                                         parameters={"type": "object", "properties": {"path": {"type": "string"}}})])


def test_an_expired_sign_in_is_refreshed_stored_and_sent_like_claude_code(agent_dir: Path, servers) -> None:
    http, oauth = servers
    signed_in(agent_dir, oauth, expires=now_ms() - 1000)
    http.route("POST", "/v1/messages", accept({"sk-ant-oat01-access-1"}, tool=("Read", {"path": "a.py"})))
    registry, model = sonnet(agent_dir, http)
    reply = run(complete(model, CONTEXT, registry=registry))
    assert reply.stop_reason == "toolUse", reply.error_message
    assert reply.content[-1].name == "read"  # Claude Code's "Read" maps back to the conversation's tool
    assert oauth.refresh_calls == 1
    stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert stored["access"] == "sk-ant-oat01-access-1" and stored["refresh"] == "sk-ant-oat01-refresh-2"
    assert abs(stored["expires"] - (now_ms() + (3600 - 300) * 1000)) < 60_000
    sent = http.requests_to("/v1/messages")[0]
    assert sent.headers["authorization"] == "Bearer sk-ant-oat01-access-1" and "x-api-key" not in sent.headers
    assert sent.headers["user-agent"].startswith("claude-cli/") and sent.headers["x-app"] == "cli"
    assert sent.headers["anthropic-beta"].split(",")[:2] == ["claude-code-20250219", "oauth-2025-04-20"]
    assert [b["text"] for b in sent.body["system"]] == [
        "You are Claude Code, Anthropic's official CLI for Claude.", "Be helpful."]
    assert [t["name"] for t in sent.body["tools"]] == ["Read"]


def test_a_token_valid_for_more_than_five_minutes_is_used_as_is(agent_dir: Path, servers) -> None:
    http, oauth = servers
    signed_in(agent_dir, oauth, expires=now_ms() + 10 * 60_000)
    http.route("POST", "/v1/messages", accept({"sk-ant-oat01-old"}))
    registry, model = sonnet(agent_dir, http)
    assert run(complete(model, CONTEXT, registry=registry)).stop_reason == "stop"
    assert oauth.refresh_calls == 0


def test_one_expiring_within_five_minutes_is_refreshed_first(agent_dir: Path, servers) -> None:
    http, oauth = servers
    signed_in(agent_dir, oauth, expires=now_ms() + 2 * 60_000)
    http.route("POST", "/v1/messages", accept({"sk-ant-oat01-access-1"}))
    registry, model = sonnet(agent_dir, http)
    assert run(complete(model, CONTEXT, registry=registry)).stop_reason == "stop"
    assert oauth.refresh_calls == 1


def test_a_401_refreshes_once_and_the_request_is_repeated(agent_dir: Path, servers) -> None:
    http, oauth = servers
    signed_in(agent_dir, oauth, expires=now_ms() + 60 * 60_000)  # not expired, but revoked server-side
    http.route("POST", "/v1/messages", accept({"sk-ant-oat01-access-1"}))
    registry, model = sonnet(agent_dir, http)
    reply = run(complete(model, CONTEXT, registry=registry))
    assert reply.stop_reason == "stop", reply.error_message
    assert oauth.refresh_calls == 1
    assert [bearer(r) for r in http.requests_to("/v1/messages")] == ["sk-ant-oat01-old", "sk-ant-oat01-access-1"]


def test_a_401_after_the_refresh_is_a_clear_error(agent_dir: Path, servers) -> None:
    http, oauth = servers
    signed_in(agent_dir, oauth, expires=now_ms() + 60 * 60_000)
    http.route("POST", "/v1/messages", accept(set()))
    registry, model = sonnet(agent_dir, http)
    reply = run(complete(model, CONTEXT, registry=registry))
    assert reply.stop_reason == "error" and oauth.refresh_calls == 1
    assert "refused even after refreshing" in reply.error_message
    assert "pi auth login anthropic" in reply.error_message and reply.error_message.startswith("401")
    assert len(http.requests_to("/v1/messages")) == 2


def test_a_failed_refresh_is_a_clear_error_and_never_falls_back_to_the_environment(agent_dir: Path,
                                                                                    servers) -> None:
    http, oauth = servers
    entry = signed_in(agent_dir, oauth, expires=now_ms() - 1000)
    oauth.fail_refresh = "refresh token revoked"
    http.route("POST", "/v1/messages", accept())
    registry, model = sonnet(agent_dir, http, env={"ANTHROPIC_API_KEY": "sk-ant-api-from-env"})
    reply = run(complete(model, CONTEXT, registry=registry))
    assert reply.stop_reason == "error"
    assert "Refreshing the Anthropic (Claude Pro/Max) sign-in failed" in reply.error_message
    assert "refresh token revoked" in reply.error_message and "pi auth login anthropic" in reply.error_message
    assert http.requests_to("/v1/messages") == []
    assert json.loads((agent_dir / "auth.json").read_text())["anthropic"] == entry


def test_anthropic_environment_tokens_in_pis_order(agent_dir: Path, servers) -> None:
    http, _ = servers
    http.route("POST", "/v1/messages", accept())
    env = {"ANTHROPIC_AUTH_TOKEN": "bearer-tok", "ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-env",
           "ANTHROPIC_API_KEY": "sk-ant-api"}
    for drop, check in ((None, lambda h, b: h["authorization"] == "Bearer bearer-tok" and "x-api-key" not in h
                         and len(b["system"]) == 1),
                        ("ANTHROPIC_AUTH_TOKEN", lambda h, b: h["authorization"] == "Bearer sk-ant-oat01-env"
                         and len(b["system"]) == 2 and "x-api-key" not in h),
                        ("ANTHROPIC_OAUTH_TOKEN", lambda h, b: h["x-api-key"] == "sk-ant-api"
                         and "authorization" not in h)):
        if drop:
            env.pop(drop)
        registry, model = sonnet(agent_dir, http, env=dict(env))
        assert registry.has_auth("anthropic")
        assert run(complete(model, CONTEXT, registry=registry)).stop_reason == "stop"
        sent = http.requests[-1]
        assert check(sent.headers, sent.body), (drop, sent.headers)


def test_bearer_env_token_regular_shape(agent_dir: Path, servers) -> None:
    http, _ = servers
    http.route("POST", "/v1/messages", accept({"bearer-tok"}))
    registry, model = sonnet(agent_dir, http, env={"ANTHROPIC_AUTH_TOKEN": "bearer-tok"})
    assert run(complete(model, CONTEXT, registry=registry)).stop_reason == "stop"
    sent = http.requests[-1]
    assert [b["text"] for b in sent.body["system"]] == ["Be helpful."]
    assert [t["name"] for t in sent.body["tools"]] == ["read"]
    assert not sent.headers["user-agent"].startswith("claude-cli")


class Capture:
    """An API implementation that records the options a request was given."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.options: list[Any] = []

    async def stream(self, model: Any, context: Any, options: Any, writer: Any) -> None:
        self.options.append(options)
        writer.start()
        index = writer.text_start("ok")
        writer.text_end(index)
        writer.finish("stop")


@pytest.fixture
def capture():
    cap = Capture("capture-api")
    register_api_provider(ApiProvider(api=cap.api, stream=cap.stream))
    yield cap
    unregister_api_provider(cap.api)


def custom_model(agent_dir: Path, auth: dict | None, env: dict[str, str], models_key: str | None = None) -> Any:
    provider = {"baseUrl": "https://example.invalid", "api": "capture-api", "models": [{"id": "m"}]}
    if models_key:
        provider["apiKey"] = models_key
    registry = builtin_registry(agent_dir, env=env, models_json={"providers": {"acme": provider}},
                                auth_json=auth or {})
    return registry, registry.get_model("acme", "m")


def test_stored_key_with_env_object_and_command(agent_dir: Path, capture: Capture) -> None:
    auth = {"acme": {"type": "api_key", "key": "$ACME_TOKEN", "env": {"ACME_TOKEN": "from-env-object",
                                                                       "ACME_REGION": "eu"}}}
    registry, model = custom_model(agent_dir, auth, {"ACME_TOKEN": "from-process-env", "ACME_REGION": "us"})
    run(complete(model, CONTEXT, registry=registry))
    options = capture.options[-1]
    assert options.api_key == "from-env-object" and options.auth.source == "auth.json"
    assert options.getenv("ACME_REGION") == "eu"

    command = f"!{sys.executable} -c \"print('from-command')\""
    registry, model = custom_model(agent_dir, {"acme": {"type": "api_key", "key": command}}, {}, "models-json-key")
    assert registry.has_auth("acme")
    run(complete(model, CONTEXT, registry=registry))
    assert capture.options[-1].api_key == "from-command"


def test_a_command_key_runs_once_per_process_and_a_failure_stays_unresolved(agent_dir: Path, tmp_path: Path,
                                                                            capture: Capture) -> None:
    """pi: the command runs when the key is first needed and its output is cached for the process lifetime;
    empty output or a nonzero exit leaves the key unresolved until pi restarts."""
    counter = tmp_path / "runs.txt"
    script = tmp_path / "key.py"
    script.write_text(f"import pathlib\np = pathlib.Path({str(counter)!r})\n"
                      "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\nprint('key-from-vault')\n")
    command = f"!{sys.executable} {script}"
    registry, model = custom_model(agent_dir, {"acme": {"type": "api_key", "key": command}}, {})
    for _ in range(3):
        run(complete(model, CONTEXT, registry=registry))
    assert [o.api_key for o in capture.options[-3:]] == ["key-from-vault"] * 3
    assert counter.read_text() == "x"  # ran once for the three requests

    failing = tmp_path / "fails.py"
    failing.write_text("import sys\nsys.exit(3)\n")
    registry, model = custom_model(agent_dir, {"acme": {"type": "api_key", "key": f"!{sys.executable} {failing}"}}, {})
    assert not registry.has_auth("acme") or registry.get_api_key("acme") is None
    failing.write_text("print('now-it-works')\n")  # fixed, but this process keeps the failure
    assert registry.get_api_key("acme") is None


def test_explicit_then_stored_then_models_json_then_environment(agent_dir: Path, capture: Capture) -> None:
    registry, model = custom_model(agent_dir, None, {}, "models-json-key")
    run(complete(model, CONTEXT, registry=registry, api_key="explicit"))
    run(complete(model, CONTEXT, registry=registry))
    assert [(o.api_key, o.auth.source) for o in capture.options] == [("explicit", "--api-key"),
                                                                      ("models-json-key", "models.json")]
    plugin = ProviderConfig(name="acme2", api="capture-api", base_url="https://x.invalid", api_key_env="ACME2_KEY",
                            models=[model.model_copy(update={"provider": "acme2"})])
    registry = builtin_registry(agent_dir, env={"ACME2_KEY": "env-key"})
    registry._extra.append(plugin)
    registry.reload()
    run(complete(registry.get_model("acme2", "m"), CONTEXT, registry=registry))
    assert (capture.options[-1].api_key, capture.options[-1].auth.source) == ("env-key", "ACME2_KEY")
    (agent_dir / "auth.json").write_text(json.dumps({"acme2": {"type": "api_key", "key": "stored"}}))
    run(complete(registry.get_model("acme2", "m"), CONTEXT, registry=registry))
    assert capture.options[-1].api_key == "stored"  # the store is re-read when the file changes


def test_workload_identity_federation_exchanges_the_identity_token(agent_dir: Path, tmp_path: Path) -> None:
    from plugins.providers import anthropic_auth

    anthropic_auth._federated.clear()
    token_file = tmp_path / "identity.jwt"
    token_file.write_text("eyJ.identity.jwt\n")
    with FakeHTTP() as http:
        exchanges: list[Request] = []
        http.route("POST", "/v1/oauth/token", lambda r: (exchanges.append(r), Answer(200, {
            "access_token": "sk-ant-fed-1", "expires_in": 3600, "token_type": "Bearer"}))[1])
        http.route("POST", "/v1/messages", accept({"sk-ant-fed-1"}))
        env = {"ANTHROPIC_FEDERATION_RULE_ID": "fdrl_1", "ANTHROPIC_ORGANIZATION_ID": "org-1",
               "ANTHROPIC_IDENTITY_TOKEN_FILE": str(token_file), "ANTHROPIC_WORKSPACE_ID": "wrkspc_1",
               "ANTHROPIC_BASE_URL": http.url}
        registry, model = sonnet(agent_dir, http, env=env)
        assert registry.has_auth("anthropic")
        for _ in range(2):
            reply = run(complete(model, CONTEXT, registry=registry))
            assert reply.stop_reason == "stop", reply.error_message
    assert len(exchanges) == 1  # kept until it nearly expires
    assert exchanges[0].body == {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                 "assertion": "eyJ.identity.jwt", "federation_rule_id": "fdrl_1",
                                 "organization_id": "org-1", "workspace_id": "wrkspc_1"}
    assert exchanges[0].headers["anthropic-beta"] == "oauth-2025-04-20,oidc-federation-2026-04-01"
    sent = http.requests_to("/v1/messages")[0]
    assert "x-api-key" not in sent.headers and "oauth-2025-04-20" in sent.headers["anthropic-beta"].split(",")
    assert [b["text"] for b in sent.body["system"]] == ["Be helpful."]  # not a subscription: no Claude Code shape


def test_auth_header_sends_the_resolved_key_as_a_bearer_from_any_source(agent_dir: Path) -> None:
    """models.json ``authHeader: true`` (pi: "send the resolved API key as Authorization: Bearer"): the key
    may come from auth.json or the environment, not only from models.json's ``apiKey``."""
    from pi_core.testing import FakeProviderServer

    with FakeProviderServer(["one", "two"]) as server:
        provider = {"baseUrl": server.url, "api": "anthropic-messages", "authHeader": True,
                    "models": [{"id": "gateway-model"}]}
        registry = builtin_registry(agent_dir, env={}, models_json={"providers": {"gateway": provider}},
                                    auth_json={"gateway": {"type": "api_key", "key": "stored-key"}})
        run(complete(registry.get_model("gateway", "gateway-model"), CONTEXT, registry=registry))
        provider["apiKey"] = "$GATEWAY_KEY"
        registry = builtin_registry(agent_dir, env={"GATEWAY_KEY": "env-key"},
                                    models_json={"providers": {"gateway": provider}}, auth_json={})
        run(complete(registry.get_model("gateway", "gateway-model"), CONTEXT, registry=registry))
        first, second = (r.headers for r in server.requests)
    assert first["authorization"] == "Bearer stored-key"
    assert second["authorization"] == "Bearer env-key"
