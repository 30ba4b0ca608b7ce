"""Model lists fetched at run time: OpenRouter's per-key list (``GET /models/user``) saved in pi's
``models-store.json``, ``pi update --models``, the background refresh of RPC sessions, and offline mode."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from auth_fakes import Answer, FakeHTTP, Request, bearer, builtin_registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))

from rpc_client import RpcProcess  # noqa: E402

KEY = "sk-or-v1-per-key"
USER_MODELS = {"data": [
    {"id": "anthropic/claude-sonnet-4.5", "context_length": 1000,
     "top_provider": {"context_length": 2000, "max_completion_tokens": 300},
     "pricing": {"prompt": "0.000003", "completion": "0.000015", "input_cache_read": "0.0000003",
                 "overrides": [{"min_prompt_tokens": 200000, "prompt": "0.000006"},
                               {"min_prompt_tokens": 1000, "utc_start": "01:00", "prompt": "0.000001"}]}},
    {"id": "openai/gpt-4o", "context_length": 5000, "top_provider": {"context_length": None},
     "pricing": {"prompt": "-1", "completion": "0.00001"}},
    {"id": "not/in-the-catalog", "context_length": 9}]}


def openrouter_server(http: FakeHTTP, answer: Answer | None = None) -> None:
    def user_models(request: Request) -> Answer:
        if bearer(request) != KEY:
            return Answer(401, {"error": {"message": "No auth credentials found"}})
        return answer or Answer(200, USER_MODELS)

    http.route("GET", "/api/v1/models/user", user_models)


def models_json(http: FakeHTTP) -> dict:
    return {"providers": {"openrouter": {"baseUrl": f"{http.url}/api/v1"}}}


def pi(agent: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], capture_output=True, text=True, timeout=90,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent),
                                                         **(env or {})})


def test_the_catalog_is_narrowed_to_the_keys_models_limits_and_prices(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        openrouter_server(http)
        registry = builtin_registry(tmp_path, env={"OPENROUTER_API_KEY": KEY}, models_json=models_json(http))
        assert len(registry.get_models("openrouter")) > 100  # the built-in catalog until a refresh
        result = asyncio.run(registry.refresh_models())
        assert result.refreshed == ["openrouter"] and not result.errors
        (request,) = http.requests_to("/api/v1/models/user")
        assert request.headers["accept"] == "application/json"

    models = {m.id: m for m in registry.get_models("openrouter")}
    assert sorted(models) == ["anthropic/claude-sonnet-4.5", "openai/gpt-4o"]  # not the unknown id
    sonnet, gpt = models["anthropic/claude-sonnet-4.5"], models["openai/gpt-4o"]
    assert (sonnet.context_window, sonnet.max_tokens) == (2000, 300)  # the top provider's limits
    assert sonnet.cost.model_dump() == {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 0, "tiers": [
        {"inputTokensAbove": 200000, "input": 6, "output": 15, "cacheRead": 0.3, "cacheWrite": 0}]}
    assert gpt.context_window == 5000 and gpt.max_tokens == 16384  # no top-provider limit: the catalog's
    assert gpt.cost.input == 0 and gpt.cost.output == 10  # -1 is "depends on the routed model"
    assert gpt.base_url == f"{http.url}/api/v1" and gpt.api == "openai-completions"  # models.json still applies

    saved = json.loads((tmp_path / "models-store.json").read_text())["openrouter"]
    assert [m["id"] for m in saved["models"]] == ["anthropic/claude-sonnet-4.5", "openai/gpt-4o"]
    assert all(m["type"] == "chat" and m["provider"] == "openrouter" for m in saved["models"])
    assert abs(saved["checkedAt"] - time.time() * 1000) < 600_000

    later = builtin_registry(tmp_path, env={})  # the next run: no key, no network, the saved list
    assert sorted(m.id for m in later.get_models("openrouter")) == sorted(models)


def test_a_refused_key_keeps_the_catalog_and_a_failure_keeps_the_saved_list(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        openrouter_server(http)
        registry = builtin_registry(tmp_path, env={"OPENROUTER_API_KEY": "sk-or-revoked"},
                                    models_json=models_json(http))
        result = asyncio.run(registry.refresh_models())
        assert result.refreshed == ["openrouter"]
        assert len(registry.get_models("openrouter")) > 100

        keyed = builtin_registry(tmp_path, env={"OPENROUTER_API_KEY": KEY})
        asyncio.run(keyed.refresh_models())
        assert len(keyed.get_models("openrouter")) == 2
        openrouter_server(http, Answer(502, "bad gateway"))
        failed = asyncio.run(keyed.refresh_models())
        assert failed.refreshed == [] and "502" in failed.errors["openrouter"]
        openrouter_server(http, Answer(200, {"models": []}))
        failed = asyncio.run(keyed.refresh_models())
        assert "invalid model list" in failed.errors["openrouter"]
    assert len(builtin_registry(tmp_path, env={}).get_models("openrouter")) == 2


def test_nothing_is_fetched_offline_or_without_a_key(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        openrouter_server(http)
        offline = builtin_registry(tmp_path, env={"OPENROUTER_API_KEY": KEY, "PI_OFFLINE": "1"},
                                   models_json=models_json(http))
        assert asyncio.run(offline.refresh_models()).skipped == {"openrouter": "offline", "llama.cpp": "offline"}
        keyless = builtin_registry(tmp_path, env={})
        assert asyncio.run(keyless.refresh_models()).skipped == {"openrouter": "not configured",
                                                                  "llama.cpp": "not configured"}
        done = pi(tmp_path, "update", "--models", env={"OPENROUTER_API_KEY": KEY, "PI_OFFLINE": "1"})
        assert done.returncode == 0 and "Skipped model catalog refresh (offline mode)" in done.stdout
        assert http.requests_to("/api/v1/models/user") == []
    assert not (tmp_path / "models-store.json").exists()


def test_pi_update_models_refreshes_and_keeps_what_pi_saved(tmp_path: Path) -> None:
    pi_entries = {
        "groq": {"models": [{"id": "x", "provider": "groq"}], "checkedAt": 1, "etag": "W/\"1\""},
        "openrouter": {"models": [{"type": "image", "id": "black-forest-labs/flux.2-pro", "provider": "openrouter"}],
                       "checkedAt": 2}}
    (tmp_path / "models-store.json").write_text(json.dumps(pi_entries))
    with FakeHTTP() as http:
        openrouter_server(http)
        (tmp_path / "models.json").write_text(json.dumps(models_json(http)))
        done = pi(tmp_path, "update", "--models", env={"OPENROUTER_API_KEY": KEY})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Model catalogs refreshed"
        assert len(http.requests_to("/api/v1/models/user")) == 1
    saved = json.loads((tmp_path / "models-store.json").read_text())
    assert saved["groq"] == pi_entries["groq"]  # another provider's entry is not touched
    assert [(m.get("type"), m["id"]) for m in saved["openrouter"]["models"]] == [
        ("chat", "anthropic/claude-sonnet-4.5"), ("chat", "openai/gpt-4o"), ("image", "black-forest-labs/flux.2-pro")]

    listed = pi(tmp_path, "--list-models", "openrouter", env={"OPENROUTER_API_KEY": KEY, "PI_OFFLINE": "1"})
    rows = [line.split()[1] for line in listed.stdout.splitlines()[1:] if line.strip()]
    assert rows == ["anthropic/claude-sonnet-4.5", "openai/gpt-4o"], listed.stdout

    bad = pi(tmp_path, "update", "--models", "--all")  # pi 1.6 names --all first for this pair
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "--all cannot be combined with --self, --extensions, --models, or --extension" in bad.stderr
    bad = pi(tmp_path, "update", "--models", "--self")
    assert bad.returncode == 1 and "--models cannot be combined" in bad.stderr


def test_pi_update_models_names_the_provider_that_failed(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        openrouter_server(http, Answer(500, "oops"))
        (tmp_path / "models.json").write_text(json.dumps(models_json(http)))
        done = pi(tmp_path, "update", "--models", env={"OPENROUTER_API_KEY": KEY})
    assert done.returncode == 1
    assert "could not refresh model catalogs: openrouter: OpenRouter model list request failed: 500" in done.stderr
    assert "Traceback" not in done.stderr


def _rpc_round_trip(tmp_path: Path, agent: Path, env: dict[str, str], *args: str, wait_for: Path | None = None) -> None:
    with RpcProcess(tmp_path, *args, env={"PI_CODING_AGENT_DIR": str(agent), **env},
                    model=("faux", "echo")) as rpc:
        rpc.prompt("hello")
        rpc.call({"type": "get_state"})
        deadline = time.monotonic() + 30
        while wait_for is not None and not wait_for.exists() and time.monotonic() < deadline:
            time.sleep(0.05)


def test_an_rpc_session_refreshes_in_the_background_unless_offline(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    with FakeHTTP() as http:
        openrouter_server(http)
        (agent / "models.json").write_text(json.dumps(models_json(http)))
        _rpc_round_trip(tmp_path, agent, {"OPENROUTER_API_KEY": KEY, "PI_OFFLINE": "1"})
        _rpc_round_trip(tmp_path, agent, {"OPENROUTER_API_KEY": KEY}, "--offline")
        assert http.requests_to("/api/v1/models/user") == []
        assert not (agent / "models-store.json").exists()

        _rpc_round_trip(tmp_path, agent, {"OPENROUTER_API_KEY": KEY}, wait_for=agent / "models-store.json")
        assert len(http.requests_to("/api/v1/models/user")) == 1
    saved = json.loads((agent / "models-store.json").read_text())
    assert len(saved["openrouter"]["models"]) == 2


def _dialog(method: str):
    return lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method


def test_login_fetches_the_new_keys_model_list(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    with FakeHTTP() as http:
        openrouter_server(http)
        (agent / "models.json").write_text(json.dumps(models_json(http)))
        with RpcProcess(tmp_path, env={"PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"},
                        model=("faux", "echo")) as rpc:
            rpc.send({"type": "prompt", "message": "/login openrouter", "id": "p"})
            how, _ = rpc.wait_for(_dialog("select"))
            rpc.send({"type": "extension_ui_response", "id": how["id"], "value": "Enter OpenRouter API key"})
            ask, _ = rpc.wait_for(_dialog("input"))
            rpc.send({"type": "extension_ui_response", "id": ask["id"], "value": KEY})
            saved, _ = rpc.wait_for(_dialog("notify"))
            assert saved["message"] == "Saved API key for OpenRouter."
            rpc.response("p")
            assert http.requests_to("/api/v1/models/user") == []  # offline: the login is kept, no list fetched

        (agent / "auth.json").unlink()  # signed out: the next session's start-up refresh has no key
        with RpcProcess(tmp_path, env={"PI_CODING_AGENT_DIR": str(agent)}, model=("faux", "echo")) as rpc:
            rpc.send({"type": "prompt", "message": "/login openrouter", "id": "p"})
            how, _ = rpc.wait_for(_dialog("select"))
            rpc.send({"type": "extension_ui_response", "id": how["id"], "value": "Enter OpenRouter API key"})
            ask, _ = rpc.wait_for(_dialog("input"))
            rpc.send({"type": "extension_ui_response", "id": ask["id"], "value": KEY})
            rpc.wait_for(_dialog("notify"))
            rpc.response("p")
            assert [bearer(r) for r in http.requests_to("/api/v1/models/user")] == [KEY]
            state, _ = rpc.call({"type": "get_available_models"})
    ids = sorted(m["id"] for m in state["data"]["models"] if m["provider"] == "openrouter")
    assert ids == ["anthropic/claude-sonnet-4.5", "openai/gpt-4o"]
