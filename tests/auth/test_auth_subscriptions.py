"""OpenAI Codex (ChatGPT plans) and GitHub Copilot: their sign-ins against fake authorization servers,
the Copilot token exchange, and the request shapes their backends require."""

from __future__ import annotations

import asyncio
import base64
import json
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
    challenge_of,
    chat_sse,
    now_ms,
    responses_sse,
)
from auth_pty import PtyRun

from pi_core.ai import Context, ImageContent, ToolDeclaration, UserMessage, complete


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def jwt(claims: dict[str, Any]) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


def codex_token(n: int) -> str:
    return jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-42"}, "n": n})


CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="hello")],
                  tools=[ToolDeclaration(name="read", description="Read a file",
                                         parameters={"type": "object", "properties": {"path": {"type": "string"}}})])


# -- OpenAI Codex ------------------------------------------------------------------------------------------
@pytest.fixture
def codex_auth(monkeypatch: pytest.MonkeyPatch):
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/oauth/token", prefix="codex")
        oauth.access_maker = codex_token
        monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://auth.openai.com={http.url}")
        yield http, oauth, {"PI_OAUTH_URL_OVERRIDES": f"https://auth.openai.com={http.url}"}


def test_codex_device_code_sign_in(agent_dir: Path, tmp_path: Path, codex_auth) -> None:
    http, oauth, env = codex_auth
    verifier = "device-verifier-123"
    polls: list[Any] = []
    http.route("POST", "/api/accounts/deviceauth/usercode",
               lambda r: Answer(200, {"device_auth_id": "dauth-1", "user_code": "CODE-77", "interval": "1"}))

    def poll(request: Request) -> Answer:
        polls.append(request.body)
        if len(polls) == 1:
            return Answer(403, {"error": {"code": "deviceauth_authorization_pending"}})
        return Answer(200, {"authorization_code": oauth.issue_code(challenge_of(verifier)), "code_verifier": verifier})

    http.route("POST", "/api/accounts/deviceauth/token", poll)
    session = PtyRun(["auth", "login", "openai-codex", "--no-browser"],
                     env={"PI_CODING_AGENT_DIR": str(agent_dir), **env}, cwd=tmp_path)
    try:
        session.expect(r"Select OpenAI Codex login method: Device code login \(headless\)")
        session.expect(r"Open https://auth\.openai\.com/codex/device and enter the code: CODE-77")
        session.expect(r"Logged in to OpenAI Codex\.")
        assert session.wait() == 0
    finally:
        session.kill()
    assert polls == [{"device_auth_id": "dauth-1", "user_code": "CODE-77"}] * 2
    exchange = http.requests_to("/oauth/token")[-1]
    assert exchange.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert exchange.body["redirect_uri"] == "https://auth.openai.com/deviceauth/callback"
    stored = json.loads((agent_dir / "auth.json").read_text())["openai-codex"]
    assert stored["accountId"] == "acct-42" and stored["access"] == codex_token(1)


def test_codex_browser_sign_in_on_the_codex_port(agent_dir: Path, tmp_path: Path, codex_auth) -> None:
    import urllib.request
    from urllib.parse import parse_qs, urlsplit

    http, oauth, env = codex_auth
    session = PtyRun(["auth", "login", "openai-codex"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env},
                     cwd=tmp_path)
    try:
        session.expect(r"Paste the authorization code or redirect URL")
        line = next(x for x in session.output.splitlines() if "/oauth/authorize?" in x)
        params = {k: v[0] for k, v in parse_qs(urlsplit(line.strip()).query).items()}
        assert params["redirect_uri"] == "http://localhost:1455/auth/callback"
        assert params["originator"] == "pi" and params["codex_cli_simplified_flow"] == "true"
        code = oauth.issue_code(params["code_challenge"])
        urllib.request.urlopen(f"http://127.0.0.1:1455/auth/callback?code={code}&state={params['state']}",
                               timeout=10).read()
        session.expect(r"Logged in to OpenAI Codex\.")
        assert session.wait() == 0
    finally:
        session.kill()
    assert json.loads((agent_dir / "auth.json").read_text())["openai-codex"]["accountId"] == "acct-42"


def codex_registry(agent_dir: Path, http: FakeHTTP, expires: int) -> Any:
    auth = {"openai-codex": {"type": "oauth", "access": codex_token(0), "refresh": "codex-refresh-0",
                             "expires": expires, "accountId": "acct-42"}}
    return builtin_registry(agent_dir, models_json={"providers": {"openai-codex": {"baseUrl": f"{http.url}/backend-api"}}},
                            auth_json=auth)


def test_codex_request_shape(agent_dir: Path, codex_auth) -> None:
    http, oauth, _ = codex_auth
    http.route("POST", "/backend-api/codex/responses", lambda r: responses_sse("hi", terminal="response.done"))
    registry = codex_registry(agent_dir, http, now_ms() + 3600_000)
    model = registry.get_model("openai-codex", "gpt-6.2-sol")
    reply = run(complete(model, CONTEXT, registry=registry, session_id="sess-1"))
    assert reply.stop_reason == "stop" and reply.text() == "hi", reply.error_message
    sent = http.requests_to("/backend-api/codex/responses")[0]
    h, b = sent.headers, sent.body
    assert bearer(sent) == codex_token(0) and h["chatgpt-account-id"] == "acct-42"
    assert h["originator"] == "pi" and h["openai-beta"] == "responses=experimental"
    assert h["accept"] == "text/event-stream" and h["session-id"] == h["x-client-request-id"] == "sess-1"
    assert b["store"] is False and b["stream"] is True and b["input"][0] == {"role": "developer", "content": "Be brief."}
    assert b["text"] == {"verbosity": "low"} and b["include"] == ["reasoning.encrypted_content"]
    assert b["tool_choice"] == "auto" and b["parallel_tool_calls"] is True and b["prompt_cache_key"] == "sess-1"
    assert "max_output_tokens" not in b and "strict" not in b["tools"][0]
    assert registry.has_auth("openai-codex") and registry.provider_auth("openai-codex").api_key_login is False


def test_codex_error_events_and_refresh(agent_dir: Path, codex_auth) -> None:
    http, oauth, _ = codex_auth
    oauth.refresh_tokens["codex-refresh-0"] = True
    events = (f"event: error\ndata: {json.dumps({'type': 'error', 'code': 'usage_limit', 'message': 'limit hit'})}"
              "\n\n")
    http.route("POST", "/backend-api/codex/responses",
               lambda r: Answer(200, events, {"content-type": "text/event-stream"}))
    registry = codex_registry(agent_dir, http, now_ms() - 1)
    reply = run(complete(registry.get_model("openai-codex", "gpt-6.2-sol"), CONTEXT, registry=registry))
    assert reply.stop_reason == "error" and reply.error_message == "Codex error: limit hit"
    assert oauth.refresh_calls == 1 and bearer(http.requests_to("/backend-api/codex/responses")[0]) == codex_token(1)
    assert http.requests_to("/oauth/token")[0].body == {"grant_type": "refresh_token",
                                                        "refresh_token": "codex-refresh-0", "client_id":
                                                        "app_EMoamEEZ73f0CkXaXp7hrann"}


# -- GitHub Copilot ------------------------------------------------------------------------------------
COPILOT_TOKEN = "tid=abc;exp=1999999999;sku=copilot;proxy-ep=proxy.individual.githubcopilot.com;8kp=1"


@pytest.fixture
def copilot():
    with FakeHTTP() as http:
        state: dict[str, Any] = {"polls": 0, "exchanges": [], "enabled": []}
        http.route("POST", "/login/device/code", lambda r: Answer(200, {
            "device_code": "gh-dev-1", "user_code": "ABCD-EFGH", "verification_uri": "https://github.com/login/device",
            "interval": 1, "expires_in": 900}))

        def access_token(request: Request) -> Answer:
            state["polls"] += 1
            assert request.body["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code"
            if state["polls"] == 1:
                return Answer(200, {"error": "authorization_pending"})
            return Answer(200, {"access_token": "gho_github_token", "token_type": "bearer"})

        def exchange(request: Request) -> Answer:
            state["exchanges"].append(bearer(request))
            if bearer(request) != "gho_github_token":
                return Answer(401, {"message": "Bad credentials"})
            return Answer(200, {"token": COPILOT_TOKEN, "expires_at": int(now_ms() / 1000) + 1800})

        http.route("POST", "/login/oauth/access_token", access_token)
        http.route("GET", "/gh-api/copilot_internal/v2/token", exchange)
        http.route("GET", "/copilot/models", lambda r: Answer(200, {"data": [
            {"id": "claude-sonnet-5", "model_picker_enabled": True, "policy": {"state": "enabled"},
             "capabilities": {"supports": {"tool_calls": True}}},
            {"id": "gpt-6.2-sol", "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
            {"id": "embedder", "model_picker_enabled": True, "capabilities": {"supports": {"tool_calls": False}}}]}))
        http.route("POST", "/copilot/models/gpt-6.2-sol/policy",
                   lambda r: (state["enabled"].append(r.body), Answer(200, {}))[1])
        env = {"PI_OAUTH_URL_OVERRIDES": f"https://github.com={http.url},https://api.github.com={http.url}/gh-api,"
                                         f"https://api.individual.githubcopilot.com={http.url}/copilot"}
        yield http, state, env


def test_copilot_device_sign_in_token_exchange_and_model_list(agent_dir: Path, tmp_path: Path, copilot) -> None:
    http, state, env = copilot
    session = PtyRun(["auth", "login", "github-copilot"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env},
                     cwd=tmp_path)
    try:
        session.expect(r"GitHub Enterprise URL/domain \(blank for github\.com\) \(company\.ghe\.com\): ")
        session.send("")
        session.expect(r"Open https://github\.com/login/device and enter the code: ABCD-EFGH")
        session.expect(r"Logged in to GitHub Copilot\.")
        assert session.wait() == 0
    finally:
        session.kill()
    assert state["polls"] == 2 and state["exchanges"] == ["gho_github_token"]
    assert state["enabled"] == [{"state": "enabled"}]
    models = http.requests_to("/copilot/models")[0]
    assert bearer(models) == COPILOT_TOKEN and models.headers["x-github-api-version"] == "2026-06-01"
    assert models.headers["editor-version"] == "vscode/1.107.0"
    stored = json.loads((agent_dir / "auth.json").read_text())["github-copilot"]
    assert stored["refresh"] == "gho_github_token" and stored["access"] == COPILOT_TOKEN
    assert stored["availableModelIds"] == ["claude-sonnet-5", "gpt-6.2-sol"]
    assert abs(stored["expires"] - (now_ms() + (1800 - 300) * 1000)) < 60_000
    registry = builtin_registry(agent_dir, env={})
    listed = sorted(m.id for m in registry.available_models() if m.provider == "github-copilot")
    assert listed == ["claude-sonnet-5", "gpt-6.2-sol"]


def copilot_registry(agent_dir: Path, expires: int) -> Any:
    return builtin_registry(agent_dir, auth_json={"github-copilot": {
        "type": "oauth", "refresh": "gho_github_token", "access": "tid=old;proxy-ep=proxy.individual.githubcopilot.com",
        "expires": expires, "availableModelIds": ["claude-sonnet-5", "gpt-6.2-sol", "kimi-k3"]}})


def test_copilot_requests_on_all_three_apis(agent_dir: Path, copilot, monkeypatch: pytest.MonkeyPatch) -> None:
    http, state, env = copilot
    monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", env["PI_OAUTH_URL_OVERRIDES"])
    http.route("POST", "/copilot/v1/messages", lambda r: anthropic_sse("from claude"))
    http.route("POST", "/copilot/chat/completions", lambda r: chat_sse("from kimi"))
    http.route("POST", "/copilot/responses", lambda r: responses_sse("from gpt"))
    registry = copilot_registry(agent_dir, now_ms() - 1)  # expired: exchanged again first
    image = Context(messages=[UserMessage(content=[ImageContent(data="aGk=", mime_type="image/png")])])
    for model_id, context, text in (("claude-sonnet-5", CONTEXT, "from claude"), ("kimi-k3", image, "from kimi"),
                                    ("gpt-6.2-sol", CONTEXT, "from gpt")):
        reply = run(complete(registry.get_model("github-copilot", model_id), context, registry=registry))
        assert reply.text() == text, reply.error_message
    assert state["exchanges"] == ["gho_github_token"]  # one refresh, then the stored token is used
    claude, kimi, gpt = (http.requests_to(p)[0] for p in ("/copilot/v1/messages", "/copilot/chat/completions",
                                                          "/copilot/responses"))
    for sent in (claude, kimi, gpt):
        assert bearer(sent) == COPILOT_TOKEN and "x-api-key" not in sent.headers
        assert sent.headers["copilot-integration-id"] == "vscode-chat"
        assert sent.headers["openai-intent"] == "conversation-edits" and sent.headers["x-initiator"] == "user"
    assert kimi.headers["copilot-vision-request"] == "true" and "copilot-vision-request" not in claude.headers
    assert "reasoning" not in gpt.body or gpt.body["reasoning"].get("effort") != "none"


def test_copilot_token_from_the_environment(agent_dir: Path, copilot, monkeypatch: pytest.MonkeyPatch) -> None:
    http, _, _ = copilot
    http.route("POST", "/v1/messages", lambda r: anthropic_sse("env ok"))
    registry = builtin_registry(agent_dir, env={"COPILOT_GITHUB_TOKEN": "cop-env"},
                                models_json={"providers": {"github-copilot": {"baseUrl": http.url}}})
    reply = run(complete(registry.get_model("github-copilot", "claude-sonnet-5"), CONTEXT, registry=registry))
    assert reply.text() == "env ok", reply.error_message
    sent = http.requests_to("/v1/messages")[0]
    assert bearer(sent) == "cop-env" and "x-api-key" not in sent.headers
