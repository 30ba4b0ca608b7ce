"""``pi auth``: sign-in flows against a fake authorization server, API keys, logout, check, print."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from auth_fakes import FakeHTTP, OAuthServer, now_ms
from auth_pty import PtyRun

TOKEN_PATH = "/v1/oauth/token"


@pytest.fixture
def anthropic_oauth():
    with FakeHTTP() as http:
        oauth = OAuthServer(http, TOKEN_PATH, prefix="sk-ant-oat01")
        overrides = f"https://claude.ai={http.url},https://platform.claude.com={http.url}"
        yield http, oauth, {"PI_OAUTH_URL_OVERRIDES": overrides}


def pi(agent: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent),
                                                         **(env or {})})


def auth_json(agent: Path) -> dict:
    return json.loads((agent / "auth.json").read_text())


def authorize_params(output: str) -> dict[str, str]:
    url = next(line.strip() for line in output.splitlines() if "/oauth/authorize?" in line)
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_browser_sign_in_with_pkce_and_the_loopback_redirect(agent_dir: Path, tmp_path: Path,
                                                             anthropic_oauth) -> None:
    http, oauth, env = anthropic_oauth
    run = PtyRun(["auth", "login", "anthropic"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env}, cwd=tmp_path)
    try:
        run.expect(r"Paste the authorization code or redirect URL")
        params = authorize_params(run.output)
        assert run.output.splitlines()[1].strip().startswith(f"{http.url}/oauth/authorize?")
        assert params["client_id"] == "9d1c250a-e61b-44d9-88ed-5944d1962f5e" and params["response_type"] == "code"
        assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) == 43
        assert "user:inference" in params["scope"].split()
        redirect = urlsplit(params["redirect_uri"])
        assert redirect.hostname == "localhost" and redirect.path == "/callback"
        assert 'To use "Copy code login (headless)" instead, run "pi auth login anthropic --no-browser"' in run.output
        code = oauth.issue_code(params["code_challenge"])
        wrong = f"http://127.0.0.1:{redirect.port}/callback?code={code}&state=not-the-state"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(wrong, timeout=10)
        assert refused.value.code == 400
        page = urllib.request.urlopen(f"http://127.0.0.1:{redirect.port}/callback?code={code}&state={params['state']}",
                                      timeout=10).read().decode()
        assert "Signed in to Anthropic" in page
        run.expect(r"Logged in to Anthropic\. Credentials saved to .*auth\.json")
        assert run.wait() == 0
    finally:
        run.kill()
    exchange = http.requests_to(TOKEN_PATH)[-1].body
    assert exchange["grant_type"] == "authorization_code" and exchange["redirect_uri"] == params["redirect_uri"]
    stored = auth_json(agent_dir)["anthropic"]
    assert stored["type"] == "oauth" and stored["access"] == "sk-ant-oat01-access-1"
    assert stored["refresh"] == "sk-ant-oat01-refresh-1" and stored["expires"] > now_ms() + 3000 * 1000
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600
    assert stored["access"] not in run.output


def test_headless_sign_in_with_a_pasted_code(agent_dir: Path, tmp_path: Path, anthropic_oauth) -> None:
    http, oauth, env = anthropic_oauth
    run = PtyRun(["auth", "login", "anthropic", "--no-browser"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env},
                 cwd=tmp_path)
    try:
        run.expect(r"Paste the code Anthropic shows.*: ")
        params = authorize_params(run.output)
        assert params["redirect_uri"] == "https://platform.claude.com/oauth/code/callback"
        run.send(f"{oauth.issue_code(params['code_challenge'])}#{params['state']}")
        run.expect(r"Logged in to Anthropic")
        assert run.wait() == 0
    finally:
        run.kill()
    assert auth_json(agent_dir)["anthropic"]["access"] == "sk-ant-oat01-access-1"


def test_a_pasted_code_of_another_login_is_refused(agent_dir: Path, tmp_path: Path, anthropic_oauth) -> None:
    http, oauth, env = anthropic_oauth
    run = PtyRun(["auth", "login", "anthropic", "--no-browser"], env={"PI_CODING_AGENT_DIR": str(agent_dir), **env},
                 cwd=tmp_path)
    try:
        run.expect(r"Paste the code")
        params = authorize_params(run.output)
        run.send(f"{oauth.issue_code(params['code_challenge'])}#someone-elses-state")
        run.expect(r"Failed to log in to Anthropic: .*state mismatch")
        assert run.wait() == 1
    finally:
        run.kill()
    assert not (agent_dir / "auth.json").exists()
    assert http.requests_to(TOKEN_PATH) == []


def test_api_key_sign_in_is_not_echoed_then_logout(agent_dir: Path, tmp_path: Path) -> None:
    run = PtyRun(["auth", "login", "groq"], env={"PI_CODING_AGENT_DIR": str(agent_dir)}, cwd=tmp_path)
    try:
        run.expect(r"Enter API key: ")
        run.send("gsk-secret-123")
        run.expect(r"Saved API key for groq\. Credentials saved to")
        assert run.wait() == 0
    finally:
        run.kill()
    assert "gsk-secret-123" not in run.output
    assert auth_json(agent_dir) == {"groq": {"type": "api_key", "key": "gsk-secret-123"}}
    assert pi(agent_dir, "auth", "print-api-key", "--provider", "groq").stdout == "gsk-secret-123\n"
    out = pi(agent_dir, "auth", "logout", "groq")
    assert out.returncode == 0 and "Removed stored API key for groq" in out.stdout
    assert auth_json(agent_dir) == {}
    again = pi(agent_dir, "auth", "logout", "groq")
    assert again.returncode == 0 and "No stored credentials for groq" in again.stdout


def test_login_needs_a_terminal_and_a_known_provider(agent_dir: Path) -> None:
    out = pi(agent_dir, "auth", "login", "anthropic")
    assert out.returncode == 1 and "needs an interactive terminal" in out.stderr
    unknown = pi(agent_dir, "auth", "login", "nope")
    assert unknown.returncode == 1 and 'Unknown provider "nope"' in unknown.stderr and "anthropic" in unknown.stderr
    usage = pi(agent_dir, "auth", "login", "anthropic", "--api-key", "--no-browser")
    assert usage.returncode == 1 and "--no-browser only applies" in usage.stderr
    bad = pi(agent_dir, "auth", "frobnicate")
    assert bad.returncode == 1 and 'Unknown auth command "frobnicate"' in bad.stderr
    assert "Traceback" not in out.stderr + unknown.stderr + usage.stderr + bad.stderr
    assert "pi auth login <provider>" in pi(agent_dir, "auth", "--help").stdout


def test_check_and_print(agent_dir: Path, anthropic_oauth) -> None:
    http, oauth, env = anthropic_oauth
    assert pi(agent_dir, "auth", "check", "--provider", "groq").stdout == "not_ready\n"
    ready = pi(agent_dir, "auth", "check", "--provider", "groq", "--json", env={"GROQ_API_KEY": "gsk-env"})
    assert ready.returncode == 0 and json.loads(ready.stdout) == {"status": "ready", "provider": "groq",
                                                                  "authType": "api_key"}
    creds = pi(agent_dir, "auth", "check", "--model", "groq/openai/gpt-oss-120b", "--credentials",
               env={"GROQ_API_KEY": "gsk-env"})
    assert (creds.returncode, creds.stdout) == (0, "gsk-env\n")

    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": {
        "type": "oauth", "access": "sk-ant-oat01-old", "refresh": oauth.new_refresh(),
        "expires": now_ms() + 10 * 60_000}}))
    wrong = pi(agent_dir, "auth", "print-api-key", "--provider", "anthropic", env=env)
    assert wrong.returncode == 1 and "configured with OAuth, not an API key" in wrong.stderr
    # valid for 10 more minutes: enough for a request, not for the default 30 minutes of print-bearer-token
    token = pi(agent_dir, "auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "5m", env=env)
    assert token.stdout == "sk-ant-oat01-old\n" and oauth.refresh_calls == 0
    token = pi(agent_dir, "auth", "print-bearer-token", "--provider", "anthropic", env=env)
    assert token.stdout == "sk-ant-oat01-access-1\n" and oauth.refresh_calls == 1
    assert auth_json(agent_dir)["anthropic"]["access"] == "sk-ant-oat01-access-1"

    (agent_dir / "auth.json").write_text("{broken")
    invalid = pi(agent_dir, "auth", "check", "--provider", "anthropic")
    assert (invalid.returncode, invalid.stdout) == (2, "invalid\n")
    oauth.fail_refresh = "revoked"
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": {
        "type": "oauth", "access": "a", "refresh": "r", "expires": now_ms() - 1}}))
    assert pi(agent_dir, "auth", "check", "--provider", "anthropic", env=env).stdout == "invalid\n"
    assert pi(agent_dir, "auth", "check", "--provider", "anthropic", "--no-refresh", env=env).stdout == "ready\n"
