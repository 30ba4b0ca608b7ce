"""Real ``pi`` processes with a Claude Pro/Max sign-in: two of them refreshing at once leave one valid
auth.json and make one refresh; no secret (OAuth tokens, API keys) ends up in a session file, a log, an export or
the output of -p, JSON or RPC runs."""

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


def test_no_api_key_in_any_file_or_output_of_print_json_and_rpc_runs(tmp_path: Path) -> None:
    """API keys from auth.json (a literal and a `!command`'s output) and from the environment reach the server
    and nothing pi writes: session files, the debug log, an HTML export, stdout and stderr of -p, JSON and RPC."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from fake_openai import FakeOpenAI

    stored, command_output, from_env = "sk-stored-S3CRET-1", "sk-cmd-S3CRET-2", "gsk-env-S3CRET-3"
    home, cwd = tmp_path / "home", tmp_path / "work"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    cwd.mkdir()
    rpc_commands = [{"id": "p", "type": "prompt", "message": "hello"}, {"id": "s", "type": "get_state"},
                    {"id": "m", "type": "get_available_models"}, {"id": "t", "type": "get_session_stats"},
                    {"id": "e", "type": "export_html", "outputPath": str(tmp_path / "rpc.html")}]
    with FakeOpenAI([{"text": "one"}, {"text": "two"}, {"text": "three"}]) as server:
        model = {"id": "m1", "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}
        (agent / "models.json").write_text(json.dumps({"providers": {
            "stored": {"baseUrl": server.base_url, "api": "openai-completions", "models": [model]},
            "cmd": {"baseUrl": server.base_url, "api": "openai-completions", "models": [model]},
            "groq": {"baseUrl": server.base_url}}}))
        # the command prints the key from two pieces: the whole key is in no file pi was given
        (agent / "auth.json").write_text(json.dumps({
            "stored": {"type": "api_key", "key": stored},
            "cmd": {"type": "api_key", "key": "!printf '%s%s' sk-cmd- S3CRET-2"}}))
        env = {"PI_DEBUG": "1", "GROQ_API_KEY": from_env}
        runs = [pi(cwd, home, "--model", "stored/m1", "-p", "hello", env=env),
                pi(cwd, home, "--model", "groq/llama-3.3-70b-versatile", "--mode", "json", "-p", "hello", env=env)]
        outputs = [run.communicate(timeout=120) for run in runs]
        rpc = subprocess.run([sys.executable, "-m", "pi_core", "--mode", "rpc", "--model", "cmd/m1"], cwd=cwd,
                             input="".join(json.dumps(c) + "\n" for c in rpc_commands), capture_output=True,
                             text=True, timeout=120,
                             env={**os.environ, "HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), **env})
        outputs.append((rpc.stdout, rpc.stderr))
        sessions = [p for p in every_file(home) if p.suffix == ".jsonl"]
        export = pi(cwd, home, "--export", str(sessions[0]), str(tmp_path / "export.html"), env=env)
        assert export.wait(timeout=120) == 0
    assert [r.returncode for r in runs] + [rpc.returncode] == [0, 0, 0], outputs
    keys = sorted(request["headers"]["authorization"] for request in server.requests)  # the first two run at once
    assert keys == sorted(f"Bearer {key}" for key in (stored, command_output, from_env))  # each reached it
    assert len(sessions) == 3 and (tmp_path / "rpc.html").exists() and (tmp_path / "export.html").exists()
    secrets = [stored, command_output, from_env]
    for path in every_file(tmp_path):
        if path.name == "auth.json":
            continue
        leaked = [s for s in secrets if s in path.read_bytes().decode("utf-8", "replace")]
        assert not leaked, f"{path} contains {leaked}"
    for out, err in outputs:
        assert not [s for s in secrets if s in out + err], (out, err)
