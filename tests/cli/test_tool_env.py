"""No variable named like a credential reaches the processes the model runs (bash, ctx.exec, RPC bash)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, write_agent_dir

from pi_core import ShellEnvPolicy, scrubbed_env

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-leak-1", "OPENAI_API_KEY": "sk-leak-2", "GEMINI_API_KEY": "g-leak-3",
           "AWS_SECRET_ACCESS_KEY": "aws-leak-4", "AWS_SESSION_TOKEN": "aws-leak-5", "MY_SERVICE_TOKEN": "tok-leak-6",
           "DB_PASSWORD": "pw-leak-7", "GITHUB_TOKEN": "gh-wanted-8", "CORP_INTERNAL": "corp-leak-9",
           # passed before (the audit of #16): names without API_KEY/TOKEN/SECRET, a password inside a URL
           "OPENAI_KEY": "sk-leak-10", "GITHUB_PAT": "ghp-leak-11", "NPM_AUTH": "npm-leak-12",
           "CREDENTIALS": "cred-leak-13", "DATABASE_URL": "postgres://app:pw-leak-14@db.example/app"}
LEAKS = [v for k, v in SECRETS.items() if k != "GITHUB_TOKEN"]
SETTINGS = {"shellEnv": {"include": ["GITHUB_TOKEN"], "exclude": ["CORP_*"]}}

EXEC_PLUGIN = '''
from pathlib import Path
import os
from pi_core import Command, hookimpl

@hookimpl
def register_commands(register):
    async def envdump(args, ctx):
        result = await ctx.exec("env", [])
        Path(os.environ["ENV_DUMP"]).write_text(result.stdout)
    register(Command("envdump", envdump, "write the environment ctx.exec sees"))
'''


def pi(cwd: Path, *args: str, stdin: str = "", extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, input=stdin, env={**os.environ, "PI_CODING_AGENT_DIR": str(cwd / "agent"),
                                                        **SECRETS, **(extra or {})})


def variables(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def check(seen: dict[str, str]) -> None:
    assert not [k for k in SECRETS if k in seen and k != "GITHUB_TOKEN"], seen.keys()
    assert seen["GITHUB_TOKEN"] == "gh-wanted-8"  # shellEnv.include
    assert "PATH" in seen and "HOME" in seen and seen["PI_SESSION_ID"]


def test_the_bash_tool_gets_no_credentials_in_json_mode_and_the_session_file_holds_none(tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "env"}}]}, {"text": "ok"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(tmp_path / "agent", server.base_url, SETTINGS)
        result = pi(tmp_path, "--provider", "fake", "--model", "fake-model", "--mode", "json", "-p", "show env")
    assert result.returncode == 0, result.stderr
    end = next(json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_end"' in line)
    check(variables(end["result"]["content"][0]["text"]))
    [session] = (tmp_path / "agent" / "sessions").glob("*/*.jsonl")
    sent = json.dumps([r.body for r in server.requests])
    for leak in LEAKS:
        assert leak not in session.read_text() and leak not in sent and leak not in result.stdout


def test_ctx_exec_gets_no_credentials(tmp_path: Path) -> None:
    plugin = tmp_path / "envdump.py"
    plugin.write_text(EXEC_PLUGIN)
    dump = tmp_path / "dump"
    write_agent_dir(tmp_path / "agent", "http://127.0.0.1:9/v1", SETTINGS)
    result = pi(tmp_path, "--provider", "fake", "--model", "fake-model", "-e", str(plugin), "-p", "/envdump",
                extra={"ENV_DUMP": str(dump)})
    assert result.returncode == 0, result.stderr
    check(variables(dump.read_text()))


def test_rpc_bash_gets_no_credentials(tmp_path: Path) -> None:
    write_agent_dir(tmp_path / "agent", "http://127.0.0.1:9/v1", SETTINGS)
    result = pi(tmp_path, "--provider", "fake", "--model", "fake-model", "--mode", "rpc",
                stdin='{"id":"b","type":"bash","command":"env"}\n')
    records = [json.loads(line) for line in result.stdout.splitlines()]
    response = next(r for r in records if r.get("type") == "response" and r.get("id") == "b")
    assert response["success"] is True, response
    check(variables(response["data"]["output"]))


def test_scrub_rules() -> None:
    policy, problems = ShellEnvPolicy.from_setting({"include": ["keep_*"], "exclude": ["DROP*"]}, ["ACME_KEY"])
    assert problems == []
    base = {"PATH": "/bin", "ACME_KEY": "x", "KEEP_TOKEN": "k", "DROPPED": "d", "TOKENIZERS_PARALLELISM": "false",
            "XKB_KEYMAP": "us", "openai_api_key": "lower", "SSH_AUTH_SOCK": "/tmp/s"}
    assert scrubbed_env({"GIVEN_SECRET": "explicit"}, base=base, policy=policy) == {
        "PATH": "/bin", "KEEP_TOKEN": "k", "TOKENIZERS_PARALLELISM": "false", "XKB_KEYMAP": "us",
        "SSH_AUTH_SOCK": "/tmp/s", "GIVEN_SECRET": "explicit"}
    off, _ = ShellEnvPolicy.from_setting({"scrub": False})
    assert scrubbed_env(base=base, policy=off) == base
    _, problems = ShellEnvPolicy.from_setting({"include": "GITHUB_TOKEN", "scrub": "no"})
    assert len(problems) == 2
    assert ShellEnvPolicy.from_setting(["x"])[1] == ["shellEnv must be an object with include/exclude lists"]


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GH_TOKEN", "NPM_TOKEN",
                                  "STRIPE_SECRET", "HUGGING_FACE_HUB_TOKEN", "PGPASSWORD", "SSH_PRIVATE_KEY",
                                  "OPENAI_KEY", "STRIPE_KEY", "GITHUB_PAT", "NPM_AUTH", "CREDENTIALS",
                                  "GOOGLE_APPLICATION_CREDENTIALS", "DOCKER_CREDS", "KEY"])
def test_common_credential_names_are_removed_by_default(name: str) -> None:
    assert name not in scrubbed_env(base={name: "v", "PATH": "/bin"}, policy=ShellEnvPolicy())


def test_urls_with_a_password_are_removed_and_look_alikes_kept() -> None:
    base = {"DATABASE_URL": "postgres://app:s3cret@db/app", "REDIS_URL": "redis://:s3cret@cache:6379/0",
            "PROXY": "http://user:pw@proxy:3128", "PLAIN_URL": "https://example.com/a:b@c",
            "ANON_DB_URL": "postgres://app@db/app", "XKB_KEYMAP": "us", "KEYBOARD_LAYOUT": "de",
            "TOKENIZERS_PARALLELISM": "false", "SSH_AUTH_SOCK": "/tmp/agent", "XAUTHORITY": "/x", "PATH": "/bin"}
    kept = scrubbed_env(base=base, policy=ShellEnvPolicy())
    assert sorted(kept) == ["ANON_DB_URL", "KEYBOARD_LAYOUT", "PATH", "PLAIN_URL", "SSH_AUTH_SOCK",
                            "TOKENIZERS_PARALLELISM", "XAUTHORITY", "XKB_KEYMAP"]
    policy, _ = ShellEnvPolicy.from_setting({"include": ["DATABASE_URL"]})
    assert scrubbed_env(base=base, policy=policy)["DATABASE_URL"] == "postgres://app:s3cret@db/app"
