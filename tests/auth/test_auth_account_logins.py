"""The account sign-ins of xAI, Kimi Code, Meta and OpenRouter against fake authorization servers."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from auth_fakes import Answer, FakeHTTP, OAuthServer, Request, ScriptedLogin, builtin_registry, now_ms

from pi_core.ai import AuthUrlEvent, DeviceCodeEvent, login_provider


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def device_routes(http: FakeHTTP, oauth: OAuthServer, device_path: str, token_path: str,
                  verification: str = "https://example.com/activate") -> list[dict]:
    polls: list[dict] = []
    http.route("POST", device_path, lambda r: (polls.append({"device": r.body}), Answer(200, {
        "device_code": "dc-1", "user_code": "USER-1", "verification_uri": verification,
        "verification_uri_complete": verification + "?code=USER-1", "interval": 1, "expires_in": 120}))[1])

    def token(request: Request) -> Answer:
        if request.body.get("grant_type") == "refresh_token":
            return oauth._token(request)
        polls.append(request.body)
        if len(polls) < 3:
            return Answer(400, {"error": "authorization_pending"})
        return Answer(200, oauth._tokens())

    http.route("POST", token_path, token)
    return polls


def test_xai_device_sign_in_and_refresh(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/unused", prefix="xai")
        polls = device_routes(http, oauth, "/oauth2/device/code", "/oauth2/token")
        monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://auth.x.ai={http.url}")
        registry = builtin_registry(agent_dir)
        login = ScriptedLogin([])
        run(login_provider(registry, "xai", login))
        assert polls[0]["device"]["scope"].endswith("grok-cli:access api:access")
        assert polls[0]["device"]["referrer"] == "pi" and polls[1]["device_code"] == "dc-1"
        event = login.events[0]
        assert isinstance(event, DeviceCodeEvent) and event.verification_uri.endswith("?code=USER-1")
        stored = json.loads((agent_dir / "auth.json").read_text())["xai"]
        assert stored["access"] == "xai-access-1"
        assert abs(stored["expires"] - (now_ms() + (3600 - 300) * 1000)) < 60_000
        stored["expires"] = now_ms() - 1
        (agent_dir / "auth.json").write_text(json.dumps({"xai": stored}))
        auth = run(registry.resolve_auth("xai"))
        assert auth.api_key == "xai-access-2" and auth.kind == "oauth"


def test_kimi_device_sign_in_on_another_host(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/unused", prefix="kimi")
        device_routes(http, oauth, "/api/oauth/device_authorization", "/api/oauth/token",
                      verification=f"{http.url}/device")
        monkeypatch.setenv("KIMI_CODE_OAUTH_HOST", http.url + "/")
        registry = builtin_registry(agent_dir)
        run(login_provider(registry, "kimi-coding", ScriptedLogin([])))
        assert json.loads((agent_dir / "auth.json").read_text())["kimi-coding"]["refresh"] == "kimi-refresh-1"


def test_meta_mints_a_model_api_key_from_the_identity_token(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/unused", prefix="meta")
        device_routes(http, oauth, "/oidc/device/authorization/", "/oidc/device/token/")
        mints: list[str | None] = []

        def mint(request: Request) -> Answer:
            mints.append(request.headers.get("authorization"))
            if len(mints) > 2:
                return Answer(401, {"error": "session expired"})
            return Answer(200, {"api_key": f"meta-key-{len(mints)}"})

        http.route("POST", "/muse-code/key", mint)
        monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://auth.meta.com={http.url},https://api.meta.ai={http.url}")
        registry = builtin_registry(agent_dir)
        run(login_provider(registry, "meta", ScriptedLogin([])))
        stored = json.loads((agent_dir / "auth.json").read_text())["meta"]
        assert (stored["access"], stored["refresh"]) == ("meta-key-1", "meta-access-1")
        assert mints == ["Bearer meta-access-1"]
        stored["expires"] = now_ms() - 1
        (agent_dir / "auth.json").write_text(json.dumps({"meta": stored}))
        assert run(registry.resolve_auth("meta")).api_key == "meta-key-2"  # refreshing is minting again
        stored = json.loads((agent_dir / "auth.json").read_text())["meta"]
        stored["expires"] = now_ms() - 1
        (agent_dir / "auth.json").write_text(json.dumps({"meta": stored}))
        from pi_core.ai import AuthError

        with pytest.raises(AuthError, match=r"session has expired \(401\)\. Sign in again with `pi auth login meta`"):
            run(registry.resolve_auth("meta"))


class BrowserLogin(ScriptedLogin):
    """Plays the browser: follows the authorization URL's callback with a code."""

    def __init__(self, oauth: OAuthServer) -> None:
        super().__init__([])
        self.oauth = oauth

    async def manual_code(self, message: str, placeholder: str = "") -> str:
        await asyncio.Event().wait()  # nobody pastes; the redirect wins
        return ""

    def notify(self, event: Any) -> None:
        super().notify(event)
        if isinstance(event, AuthUrlEvent):
            params = {k: v[0] for k, v in parse_qs(urlsplit(event.url).query).items()}
            code = self.oauth.issue_code(params["code_challenge"])
            target = f"{params['callback_url']}?code={code}"
            threading.Thread(target=lambda: urllib.request.urlopen(target, timeout=10).read(), daemon=True).start()


def test_openrouter_sign_in_yields_a_permanent_key(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/unused")

        def keys(request: Request) -> Answer:
            from auth_fakes import challenge_of

            challenge = oauth.codes.pop(request.body["code"], None)
            if challenge != challenge_of(request.body["code_verifier"]):
                return Answer(400, {"error": "bad code"})
            return Answer(200, {"key": "sk-or-v1-from-oauth"})

        http.route("POST", "/api/v1/auth/keys", keys)
        monkeypatch.setenv("PI_OAUTH_URL_OVERRIDES", f"https://openrouter.ai={http.url}")
        registry = builtin_registry(agent_dir)
        login = BrowserLogin(oauth)
        run(login_provider(registry, "openrouter", login))
        url = next(e.url for e in login.events if isinstance(e, AuthUrlEvent))
        callback = parse_qs(urlsplit(url).query)["callback_url"][0]
        assert urlsplit(callback).path.startswith("/oauth/callback/") and len(urlsplit(callback).path) > 30
        stored = json.loads((agent_dir / "auth.json").read_text())["openrouter"]
        assert stored["access"] == "sk-or-v1-from-oauth" and stored["expires"] == 2 ** 53 - 1
        assert run(registry.resolve_auth("openrouter")).api_key == "sk-or-v1-from-oauth"
