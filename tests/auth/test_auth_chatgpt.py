"""Sign in with ChatGPT on the plain ``openai`` provider (pi 1.6's ``/login openai``): the sign-in against a
fake OpenAI authorization server, the token refresh, and the Responses requests such a token makes.

The requests go to ``https://api.openai.com/v1`` itself (pi tells a ChatGPT token from an API key only
there), so the test runs a local HTTPS CONNECT proxy that presents a certificate for ``api.openai.com``
from a test CA (``HTTPS_PROXY`` and ``SSL_CERT_FILE`` point ``pi`` at them): no network is used.
The loopback redirect listens on a random 127.x.y.z address (``PI_OAUTH_CALLBACK_HOST``), so the fixed
port 1455 never collides with another test run on the machine.
"""

from __future__ import annotations

import json
import os
import random
import socket
import ssl
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trustme
from auth_fakes import Answer, FakeHTTP, OAuthServer, now_ms, responses_sse
from auth_pty import PtyRun


# -- api.openai.com through a local CONNECT proxy --------------------------------------------------------
class FakeOpenAI:
    """``HTTPS_PROXY`` target: answers ``CONNECT api.openai.com:443``, then speaks TLS as api.openai.com."""

    def __init__(self, tmp_path: Path) -> None:
        self.ca = trustme.CA()
        self.ca_file = tmp_path / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert("api.openai.com").configure_cert(self.tls)
        self.requests: list[dict[str, Any]] = []
        self.connects: list[str] = []
        self.answer: Any = lambda request: responses_sse("hi from openai")
        fake = self

        class Inner(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                           "body": json.loads(raw or b"{}")}
                fake.requests.append(request)
                body, headers = fake.answer(request).encoded()
                status = fake.answer(request).status
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

        class Proxy(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_CONNECT(self) -> None:
                fake.connects.append(self.path)
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                try:
                    tls_socket = fake.tls.wrap_socket(self.connection, server_side=True)
                    Inner(tls_socket, self.client_address, self.server)
                except (ssl.SSLError, OSError):
                    pass
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def env(self) -> dict[str, str]:
        return {"HTTPS_PROXY": self.proxy, "https_proxy": self.proxy, "SSL_CERT_FILE": str(self.ca_file)}

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def openai_api(tmp_path: Path) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(tmp_path) as fake:
        yield fake


@pytest.fixture
def chatgpt_auth() -> Iterator[tuple[FakeHTTP, OAuthServer, dict[str, str]]]:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/api/accounts/oauth/token", prefix="chatgpt", expires_in=3600)
        oauth.extra_fields = {"id_token": "id.token.x", "scope": "openid profile email offline_access "
                                                                 "resource.invoke chatgpt.tokens.use.direct"}
        host = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
        yield http, oauth, {"PI_OAUTH_URL_OVERRIDES": f"https://auth.openai.com={http.url}",
                            "PI_OAUTH_CALLBACK_HOST": host}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if "proxy" not in k.lower() and not k.startswith(("OPENAI_", "SSL_CERT"))}
    return {**env, **extra}


def run_pi(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def write_auth(agent_dir: Path, credential: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "auth.json").write_text(json.dumps({"openai": credential}))


def chatgpt_credential(expires: int, access: str = "chatgpt-access-0") -> dict[str, Any]:
    return {"type": "oauth", "access": access, "refresh": "chatgpt-refresh-0", "expires": expires,
            "clientId": "issued-client-7", "scopes": ["openid", "chatgpt.tokens.use.direct"]}


# -- the sign-in -----------------------------------------------------------------------------------------
def test_sign_in_with_chatgpt_for_the_openai_provider(agent_dir: Path, tmp_path: Path, chatgpt_auth) -> None:
    http, oauth, env = chatgpt_auth
    session = PtyRun(["auth", "login", "openai"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env}, cwd=tmp_path)
    try:
        session.expect(r"paste the final redirect URL here")
        line = next(x for x in session.output.splitlines() if "/api/accounts/authorize?" in x)
        url = urlsplit(line.strip().split()[-1])
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        device = json.loads((agent_dir / "settings.json").read_text())["deviceId"]
        assert params["client_id"] == "dynamic_agent_client" and params["agent_name_hint"] == "Pi"
        assert params["ext_agent_host_id"] == f"urn:uuid:{device}"
        assert params["redirect_uri"] == "http://127.0.0.1:1455/auth/callback"
        assert params["resource"] == "https://api.openai.com/v1"
        assert params["scope"].split() == ["openid", "profile", "email", "offline_access", "resource.invoke",
                                           "chatgpt.tokens.use.direct"]
        assert params["response_type"] == "code" and params["code_challenge_method"] == "S256"
        assert params["nonce"] and params["state"]
        code = oauth.issue_code(params["code_challenge"])
        urllib.request.urlopen(f"http://{env['PI_OAUTH_CALLBACK_HOST']}:1455/auth/callback?code={code}"
                               f"&state={params['state']}&client_id=issued-client-7", timeout=10).read()
        session.expect(r"Logged in to OpenAI\.")
        assert session.wait() == 0
    finally:
        session.kill()
    exchange = http.requests_to("/api/accounts/oauth/token")[0]
    assert exchange.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert exchange.body["client_id"] == "issued-client-7" and exchange.body["grant_type"] == "authorization_code"
    assert exchange.body["redirect_uri"] == "http://127.0.0.1:1455/auth/callback"
    assert exchange.body["resource"] == "https://api.openai.com/v1"
    stored = json.loads((agent_dir / "auth.json").read_text())["openai"]
    assert stored["type"] == "oauth" and stored["access"] == "chatgpt-access-1" and stored["clientId"] == "issued-client-7"
    assert "chatgpt.tokens.use.direct" in stored["scopes"]
    # three minutes short of the hour the server granted
    assert now_ms() + 3600_000 - 3 * 60_000 - 60_000 < stored["expires"] <= now_ms() + 3600_000 - 3 * 60_000
    # the device id is stable: a second login names the same installation
    assert json.loads((agent_dir / "settings.json").read_text())["deviceId"] == device


def test_pasted_redirect_and_the_answers_pi_refuses(agent_dir: Path, tmp_path: Path, chatgpt_auth) -> None:
    http, oauth, env = chatgpt_auth
    oauth.extra_fields = {"id_token": "id.token.x", "scope": "openid offline_access"}  # no direct-use scope
    session = PtyRun(["auth", "login", "openai"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env}, cwd=tmp_path)
    try:
        session.expect(r"paste the final redirect URL here")
        line = next(x for x in session.output.splitlines() if "/api/accounts/authorize?" in x)
        params = {k: v[0] for k, v in parse_qs(urlsplit(line.strip().split()[-1]).query).items()}
        code = oauth.issue_code(params["code_challenge"])
        session.send(f"http://127.0.0.1:1455/auth/callback?code={code}&state={params['state']}&client_id=c-9")
        session.expect(r"did not include chatgpt\.tokens\.use\.direct")
        assert session.wait() != 0
    finally:
        session.kill()
    assert http.requests_to("/api/accounts/oauth/token")[0].body["client_id"] == "c-9"
    assert not (agent_dir / "auth.json").exists() or "openai" not in json.loads((agent_dir / "auth.json").read_text())


def test_the_callback_port_taken_fails_clearly(agent_dir: Path, tmp_path: Path, chatgpt_auth) -> None:
    _, _, env = chatgpt_auth
    with socket.socket() as holder:
        holder.bind((env["PI_OAUTH_CALLBACK_HOST"], 1455))
        holder.listen()
        session = PtyRun(["auth", "login", "openai"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env},
                         cwd=tmp_path)
        try:
            session.expect(r"Port 1455 is in use, probably by an unfinished login in another pi session or by the "
                           r"Codex CLI")
            assert session.wait() != 0
        finally:
            session.kill()


# -- requests with the token -----------------------------------------------------------------------------
def test_chatgpt_token_requests_drop_the_fields_it_may_not_use(agent_dir: Path, tmp_path: Path,
                                                               openai_api: FakeOpenAI, chatgpt_auth) -> None:
    http, oauth, auth_env = chatgpt_auth
    oauth.refresh_tokens["chatgpt-refresh-0"] = True
    write_auth(agent_dir, chatgpt_credential(now_ms() - 1))
    env = clean_env(PI_CODING_AGENT_DIR=str(agent_dir), **openai_api.env(), **auth_env)
    done = run_pi(["--model", "openai/gpt-6.2-sol", "--thinking", "off", "-p", "hello"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hi from openai" in done.stdout
    assert openai_api.connects == ["api.openai.com:443"]
    sent = openai_api.requests[0]
    assert sent["path"] == "/v1/responses"
    # the expired token was refreshed first, with the issued client id and the resource
    assert sent["headers"]["authorization"] == "Bearer chatgpt-access-1"
    refresh = http.requests_to("/api/accounts/oauth/token")[0].body
    assert refresh == {"grant_type": "refresh_token", "client_id": "issued-client-7",
                       "refresh_token": "chatgpt-refresh-0", "resource": "https://api.openai.com/v1"}
    body = sent["body"]
    assert "max_output_tokens" not in body and "temperature" not in body and "prompt_cache_retention" not in body
    assert body["store"] is False and body["stream"] is True and body["model"] == "gpt-6.2-sol"
    stored = json.loads((agent_dir / "auth.json").read_text())["openai"]
    assert stored["access"] == "chatgpt-access-1" and stored["clientId"] == "issued-client-7"


def test_an_api_key_keeps_the_full_request(agent_dir: Path, tmp_path: Path, openai_api: FakeOpenAI) -> None:
    env = clean_env(PI_CODING_AGENT_DIR=str(agent_dir), OPENAI_API_KEY="sk-test-key", **openai_api.env())
    done = run_pi(["--model", "openai/gpt-6.2-sol", "--thinking", "off", "-p", "hello"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = openai_api.requests[0]
    assert sent["headers"]["authorization"] == "Bearer sk-test-key"
    assert isinstance(sent["body"]["max_output_tokens"], int)


def test_the_subscription_usage_limit_is_not_retried_and_says_where_to_look(agent_dir: Path, tmp_path: Path,
                                                                            openai_api: FakeOpenAI) -> None:
    openai_api.answer = lambda request: Answer(429, {"error": {
        "code": "subscription_sharing_usage_limit_exceeded", "message": "You have reached your usage limit.",
        "type": "usage_limit"}})
    write_auth(agent_dir, chatgpt_credential(now_ms() + 3600_000))
    env = clean_env(PI_CODING_AGENT_DIR=str(agent_dir), **openai_api.env())
    done = run_pi(["--model", "openai/gpt-6.2-sol", "--thinking", "off", "-p", "hello"], env, tmp_path)
    assert done.returncode != 0
    assert "subscription_sharing_usage_limit_exceeded" in done.stderr + done.stdout
    assert "Check your ChatGPT usage: https://chatgpt.com/settings/usage" in done.stderr + done.stdout
    assert len(openai_api.requests) == 1


def test_login_offers_both_methods_with_pis_labels(agent_dir: Path) -> None:
    from auth_fakes import builtin_registry

    from pi_core.ai import login_methods

    registry = builtin_registry(agent_dir)
    methods = login_methods(registry, "openai")
    assert [(m.kind, m.label, m.login_label) for m in methods] == [
        ("oauth", "OpenAI (ChatGPT subscription)", "Sign in with ChatGPT"), ("api_key", "OpenAI API key", "")]
