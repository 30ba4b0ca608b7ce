"""A third-party provider plugin declares a device-code sign-in; ``pi auth login`` runs it and ``pi -p``
uses (and refreshes) the result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from auth_fakes import Answer, FakeHTTP, OAuthServer, Request, bearer, chat_sse, now_ms
from auth_pty import PtyRun

EXTENSION = Path(__file__).resolve().parents[1] / "fixtures" / "auth" / "device_provider.py"


def test_device_code_sign_in_of_a_plugin_provider(agent_dir: Path, tmp_path: Path) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/token-refresh", prefix="acme")
        polls: list[str] = []
        http.route("POST", "/device/code", lambda r: Answer(200, {
            "device_code": "dev-1", "user_code": "WXYZ-1234", "verification_uri": "https://acme.example/activate",
            "interval": 1, "expires_in": 60}))

        def token(request: Request) -> Answer:
            if request.body.get("grant_type") == "refresh_token":
                return oauth._token(request)
            polls.append(request.body["device_code"])
            if len(polls) < 2:
                return Answer(400, {"error": "authorization_pending"})
            return Answer(200, oauth._tokens())

        http.route("POST", "/token", token)
        http.route("POST", "/v1/chat/completions", lambda r: chat_sse(f"hello {bearer(r)} {r.headers['x-acme-plan']}"))
        env = {"PI_CODING_AGENT_DIR": str(agent_dir), "ACME_AUTH_URL": http.url, "ACME_API_URL": f"{http.url}/v1"}
        run = PtyRun(["-e", str(EXTENSION), "auth", "login", "acme"], env=env, cwd=tmp_path)
        try:
            run.expect(r"Open https://acme\.example/activate and enter the code: WXYZ-1234")
            run.expect(r"Logged in to Acme\.")
            assert run.wait() == 0
        finally:
            run.kill()
        assert polls == ["dev-1", "dev-1"]
        stored = json.loads((agent_dir / "auth.json").read_text())["acme"]
        assert stored["access"] == "acme-access-1" and stored["plan"] == "team"

        stored["expires"] = now_ms() - 1  # let it expire: the next run refreshes through the plugin's flow
        stored["refresh"] = oauth.new_refresh()
        (agent_dir / "auth.json").write_text(json.dumps({"acme": stored}))
        out = subprocess.run([sys.executable, "-m", "pi_core", "-e", str(EXTENSION), "--provider", "acme", "--model",
                              "acme-1", "-p", "--no-session", "hi"], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path, env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hello acme-access-2 team"
    assert json.loads((agent_dir / "auth.json").read_text())["acme"]["access"] == "acme-access-2"
