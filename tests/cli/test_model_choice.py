"""Which model and thinking level `pi` starts with, as pi 1.6 chooses them (checked against pi 1.6 runs):
`--model` (with a `:level` suffix), the resumed session's model, level and tools, `--models` and
`enabledModels`, the default settings, then the first usable model — never the offline `faux` one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI
from test_cli_run import pi, sessions


def configure(agent: Path, base_url: str, settings: dict[str, Any] | None = None) -> None:
    """A custom provider ``fake`` with two reasoning models, m1 (its first) and m2."""
    agent.mkdir(parents=True, exist_ok=True)
    model = {"reasoning": True, "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}
    provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
                "models": [{"id": "m1", **model}, {"id": "m2", **model}]}
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    (agent / "settings.json").write_text(json.dumps(settings or {}))


def chosen(request: dict[str, Any]) -> tuple[str, str | None, list[str]]:
    body = request["body"]
    return body["model"], body.get("reasoning_effort"), [t["function"]["name"] for t in body.get("tools", [])]


def runs(tmp_path: Path, *invocations: tuple[str, ...], settings: dict[str, Any] | None = None,
         env: dict[str, str] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir(exist_ok=True)
    results = []
    with FakeOpenAI([{"text": f"answer {i}"} for i in range(len(invocations))]) as server:
        configure(agent, server.base_url, settings)
        for args in invocations:
            results.append(pi(ws, agent, *args, env=env))
            assert results[-1].returncode == 0, results[-1].stderr
    return results, server.requests


def test_no_model_flag_uses_the_first_usable_model_of_a_custom_provider(tmp_path: Path) -> None:
    _, requests = runs(tmp_path, ("--no-session", "-p", "hi"))
    assert chosen(requests[0]) == ("m1", "medium", ["read", "bash", "edit", "write"])


def test_faux_is_never_chosen_or_listed_unless_asked_for(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {"PI_FAUX": "", "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "GEMINI_API_KEY": ""}
    started = pi(tmp_path, agent, "--no-session", "-p", "hi", env={**env, "HOME": str(tmp_path)})
    assert started.returncode == 1 and "Traceback" not in started.stderr
    assert "No model available" in started.stderr and "models.json" in started.stderr
    assert "faux" not in pi(tmp_path, agent, "--list-models", env=env).stdout
    assert "echo" in pi(tmp_path, agent, "--list-models", "faux", env=env).stdout
    assert "echo" in pi(tmp_path, agent, "--list-models", env={**env, "PI_FAUX": "1"}).stdout
    named = pi(tmp_path, agent, "--provider", "faux", "--model", "echo", "--no-session", "-p", "ping", env=env)
    assert (named.returncode, named.stdout) == (0, "ping\n")


def test_a_thinking_suffix_on_model_keeps_its_level(tmp_path: Path) -> None:
    _, requests = runs(tmp_path, ("--model", "m2:high", "--no-session", "-p", "a"),
                       ("--model", "fake/m2:low", "--no-session", "-p", "b"),
                       ("--model", "m2:low", "--thinking", "minimal", "--no-session", "-p", "c"))
    assert [chosen(r)[:2] for r in requests] == [("m2", "high"), ("m2", "low"), ("m2", "minimal")]


def test_models_scope_chooses_the_start_up_model_with_its_level(tmp_path: Path) -> None:
    _, requests = runs(tmp_path, ("--models", "m2", "--no-session", "-p", "a"),
                       ("--models", "m2:low,m1", "--no-session", "-p", "b"),
                       ("--models", "fake/m*", "--no-session", "-p", "c"),
                       ("--models", "m2", "--model", "m1", "--no-session", "-p", "d"),
                       settings={"defaultProvider": "fake", "defaultModel": "m1"})
    assert [chosen(r)[:2] for r in requests] == [("m2", "medium"), ("m2", "low"), ("m1", "medium"), ("m1", "medium")]


def test_enabled_models_setting_is_the_scope_when_models_is_not_given(tmp_path: Path) -> None:
    results, requests = runs(tmp_path, ("--no-session", "-p", "a"), ("--models", "m1", "--no-session", "-p", "b"),
                             settings={"enabledModels": ["m2:high", "nothing-like-this*"]})
    assert [chosen(r)[:2] for r in requests] == [("m2", "high"), ("m1", "medium")]
    assert "nothing-like-this*" in results[0].stderr  # a pattern matching nothing is reported


def test_continue_restores_the_sessions_model_thinking_level_and_tools(tmp_path: Path) -> None:
    _, requests = runs(tmp_path, ("--model", "m2:high", "--tools", "read,ls", "-p", "first"),
                       ("-c", "-p", "again"),
                       ("-c", "--model", "m1", "--tools", "read", "-p", "flags win"),
                       settings={"defaultProvider": "fake", "defaultModel": "m1", "enabledModels": ["m1"]})
    assert chosen(requests[0]) == ("m2", "high", ["read", "ls"])
    assert chosen(requests[1]) == ("m2", "high", ["read", "ls"])
    assert chosen(requests[2]) == ("m1", "high", ["read"])
    assert len(sessions(tmp_path / "agent")) == 1


def test_a_session_whose_model_is_gone_says_so_and_uses_the_default(tmp_path: Path) -> None:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    with FakeOpenAI([{"text": "one"}, {"text": "two"}]) as server:
        configure(agent, server.base_url)
        assert pi(ws, agent, "--model", "m2", "-p", "first").returncode == 0
        models = json.loads((agent / "models.json").read_text())
        models["providers"]["fake"]["models"] = models["providers"]["fake"]["models"][:1]  # m2 removed
        (agent / "models.json").write_text(json.dumps(models))
        again = pi(ws, agent, "-c", "-p", "again")
    assert again.returncode == 0, again.stderr
    assert "Could not restore model fake/m2. Using fake/m1" in again.stderr
    assert chosen(server.requests[1])[0] == "m1"


def test_a_session_whose_directory_is_gone_is_refused_outside_the_terminal(tmp_path: Path) -> None:
    ws, agent, other = tmp_path / "ws", tmp_path / "agent", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    with FakeOpenAI([{"text": "one"}]) as server:
        configure(agent, server.base_url)
        assert pi(ws, agent, "-p", "first").returncode == 0
        shutil.rmtree(ws)
        (file,) = sessions(agent)
        resumed = pi(other, agent, "--session", str(file), "-p", "again")
    assert resumed.returncode == 1 and "Traceback" not in resumed.stderr
    assert f"Stored session working directory does not exist: {ws}" in resumed.stderr
    assert f"Current working directory: {other}" in resumed.stderr
    assert len(server.requests) == 1
