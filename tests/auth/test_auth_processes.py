"""Real ``pi`` processes with a Claude Pro/Max sign-in: two of them refreshing at once leave one valid
auth.json and make one refresh; no secret ends up in a session file, a log or an export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from auth_fakes import Answer, FakeHTTP, OAuthServer, Request, anthropic_sse, bearer, now_ms, unauthorized


def pi(cwd: Path, home: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pi_core", *args], cwd=cwd, text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"),
                                 **env})


def setup(tmp_path: Path, http: FakeHTTP, oauth: OAuthServer) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": http.url}}}))
    (agent / "auth.json").write_text(json.dumps({"anthropic": {
        "type": "oauth", "access": "sk-ant-oat01-expired", "refresh": oauth.new_refresh(), "expires": now_ms() - 1}}))
    cwd = tmp_path / "work"
    cwd.mkdir()
    return home, cwd, {"PI_OAUTH_URL_OVERRIDES": f"https://platform.claude.com={http.url}"}


def newest_only(oauth: OAuthServer):
    def handler(request: Request) -> Answer:
        if not oauth.access_tokens or bearer(request) != oauth.access_tokens[-1]:
            return unauthorized()
        return anthropic_sse("hi from claude")
    return handler


def test_two_processes_refreshing_at_once_refresh_once_and_keep_auth_json_valid(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/v1/oauth/token", prefix="sk-ant-oat01")
        oauth.refresh_delay = 1.0  # the first refresh is still running when the second process looks
        http.route("POST", "/v1/messages", newest_only(oauth))
        home, cwd, env = setup(tmp_path, http, oauth)
        args = ("--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", "--no-session", "hello")
        procs = [pi(cwd, home, *args, env=env) for _ in range(2)]
        outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert all(out.strip() == "hi from claude" for out, _ in outputs)
    assert oauth.refresh_calls == 1
    stored = json.loads((home / ".pi" / "agent" / "auth.json").read_text())
    assert stored["anthropic"]["access"] == oauth.access_tokens[-1] == "sk-ant-oat01-access-1"
    assert [p.name for p in (home / ".pi" / "agent").iterdir() if "auth" in p.name] == ["auth.json"]


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_no_secret_in_any_file_pi_wrote(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        oauth = OAuthServer(http, "/v1/oauth/token", prefix="sk-ant-oat01")
        http.route("POST", "/v1/messages", newest_only(oauth))
        home, cwd, env = setup(tmp_path, http, oauth)
        env["PI_DEBUG"] = "1"
        run = pi(cwd, home, "--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", "hello", env=env)
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        sessions = [p for p in every_file(home) if p.suffix == ".jsonl"]
        assert sessions, "the run wrote no session file"
        export = pi(cwd, home, "--export", str(sessions[0]), str(tmp_path / "export.html"), env=env)
        assert export.wait(timeout=120) == 0, export.stderr.read() if export.stderr else ""
    secrets = ["sk-ant-oat01-expired", *oauth.access_tokens, *oauth.refresh_tokens]
    assert len(secrets) == 4
    written = [p for p in every_file(tmp_path) if p.name != "auth.json"]
    assert any(p.suffix == ".html" for p in written)
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{path} contains {leaked}"
    for stream_text in (out, err):
        assert not [s for s in secrets if s in stream_text]
