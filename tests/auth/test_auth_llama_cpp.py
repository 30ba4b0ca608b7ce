"""The llama.cpp router provider against a fake router on 127.0.0.1 that speaks llama.cpp's management
endpoints (``/models``, ``/props``, ``/models/load``, ``/models/unload``, ``POST /models``) and its
OpenAI-compatible ``/v1/chat/completions``: ``/login llama.cpp``, ``LLAMA_BASE_URL``/``LLAMA_API_KEY``,
the model list, a chat request, and ``/llama`` in the terminal."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from auth_fakes import Answer, FakeHTTP, Request, ScriptedLogin, bearer, builtin_registry, chat_sse

from pi_core.ai import login_provider

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))

THINKING_TEMPLATE = "{% if enable_thinking %}<think>{% endif %}"


class FakeRouter:
    """A llama.cpp router's state: models with a status; loads and downloads finish on the next poll."""

    def __init__(self, http: FakeHTTP, key: str | None = None, *, autoload: bool = False) -> None:
        self.http, self.key, self.autoload = http, key, autoload
        self.lock = threading.Lock()
        self.models: dict[str, dict[str, Any]] = {
            "qwen3-8b": {"id": "qwen3-8b", "status": {"value": "loaded", "args": ["llama-server", "-c", "32768"]},
                         "meta": {"n_ctx": 16384, "n_ctx_train": 40960},
                         "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]}},
            "gemma-3-4b": {"id": "gemma-3-4b", "status": {"value": "sleeping", "args": ["-c", "8192"]},
                           "architecture": {"input_modalities": ["text", "image"]}},
            "llama-3.2-1b": {"id": "llama-3.2-1b", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 131072}},
            "preset-7b": {"id": "preset-7b", "source": "preset", "status": {"value": "unloaded"}},
            "julia-1": {"id": "julia-1", "status": {"value": "loaded"},
                        "architecture": {"output_modalities": ["decisions"]}},
        }
        self.pending: dict[str, str] = {}
        for method, path, handler in (("GET", "/models", self.list), ("POST", "/models", self.download),
                                      ("GET", "/props", self.props), ("POST", "/models/load", self.load),
                                      ("POST", "/models/unload", self.unload),
                                      ("POST", "/v1/chat/completions", lambda r: chat_sse("router says hi"))):
            http.route(method, path, self.guarded(handler))

    def guarded(self, handler: Any) -> Any:
        def serve(request: Request) -> Answer:
            if self.key is not None and bearer(request) != self.key:
                return Answer(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
            with self.lock:
                return handler(request)
        return serve

    def list(self, request: Request) -> Answer:
        for model, status in list(self.pending.items()):  # one poll later, the operation is done
            self.models.setdefault(model, {"id": model, "status": {}})["status"] = {"value": status}
            del self.pending[model]
        return Answer(200, {"object": "list", "data": list(self.models.values())})

    def props(self, request: Request) -> Answer:
        model = request.query.get("model")
        if model is None:
            return Answer(200, {"role": "router", "models_autoload": self.autoload})
        assert request.query.get("autoload") == "false"  # asking must never load a model
        return Answer(200, {"chat_template": THINKING_TEMPLATE if model == "qwen3-8b" else "{{ messages }}"})

    def load(self, request: Request) -> Answer:
        self.models[request.body["model"]]["status"] = {"value": "loading"}
        self.pending[request.body["model"]] = "loaded"
        return Answer(200, {"success": True})

    def unload(self, request: Request) -> Answer:
        self.models[request.body["model"]]["status"] = {"value": "unloaded"}
        return Answer(200, {"success": True})

    def download(self, request: Request) -> Answer:
        self.models[request.body["model"]] = {"id": request.body["model"], "status": {"value": "downloading"}}
        self.pending[request.body["model"]] = "unloaded"
        return Answer(200, {"success": True})


def test_login_stores_the_server_and_the_model_list_comes_from_the_router(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        router = FakeRouter(http)
        registry = builtin_registry(tmp_path)
        assert not registry.has_auth("llama.cpp") and registry.get_models("llama.cpp") == []
        login = ScriptedLogin([f"{http.url}/v1/", ""])  # the URL as users paste it; no key
        asyncio.run(login_provider(registry, "llama.cpp", login, "api_key"))
        assert [kind for kind, _ in login.asked] == ["text", "secret"]
        assert json.loads((tmp_path / "auth.json").read_text())["llama.cpp"] == {
            "type": "api_key", "env": {"LLAMA_BASE_URL": http.url}}  # pi's entry: no key, the URL in env
        assert registry.has_auth("llama.cpp")

        result = asyncio.run(registry.refresh_models(["llama.cpp"]))
        assert result.refreshed == ["llama.cpp"], result.errors
        assert all("authorization" not in r.headers for r in http.requests_to("/models"))  # no key, none sent
        asked = sorted(r.query.get("model", "") for r in http.requests_to("/props"))
        # the router's own props (is autoload on? an unloaded preset exists) and the loaded chat model only:
        # asking a sleeping or unloaded one would wake or load it
        assert asked == ["", "qwen3-8b"]
    models = {m.id: m for m in registry.get_models("llama.cpp")}
    assert sorted(models) == ["gemma-3-4b", "qwen3-8b"]  # not unloaded ones, not the decision-only model
    qwen, gemma = models["qwen3-8b"], models["gemma-3-4b"]
    assert qwen.reasoning and qwen.compat["thinkingFormat"] == "qwen-chat-template"
    assert (qwen.context_window, qwen.max_tokens) == (16384, 16384)  # the running context first
    assert gemma.context_window == 8192 and not gemma.reasoning  # then the router's -c
    assert gemma.input == ["text", "image"] and gemma.base_url == f"{http.url}/v1"
    assert qwen.compat["maxTokensField"] == "max_tokens" and qwen.compat["supportsStore"] is False
    saved = json.loads((tmp_path / "models-store.json").read_text())["llama.cpp"]
    assert sorted(m["id"] for m in saved["models"]) == ["gemma-3-4b", "qwen3-8b"]


def test_logging_in_to_something_that_is_not_a_router_stores_nothing(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        http.route("GET", "/models", lambda r: Answer(200, {"data": [{"id": "single-model.gguf"}]}))
        registry = builtin_registry(tmp_path)
        with pytest.raises(Exception, match="not a llama.cpp router"):
            asyncio.run(login_provider(registry, "llama.cpp", ScriptedLogin([http.url, ""]), "api_key"))
        with pytest.raises(Exception, match="http:// or https://"):
            asyncio.run(login_provider(registry, "llama.cpp", ScriptedLogin(["ftp://host", ""]), "api_key"))
        FakeRouter(http, key="router-secret")
        with pytest.raises(Exception, match="Invalid API Key"):
            asyncio.run(login_provider(registry, "llama.cpp", ScriptedLogin([http.url, "wrong"]), "api_key"))
    assert not (tmp_path / "auth.json").exists() or "llama.cpp" not in (tmp_path / "auth.json").read_text()


def pi(agent: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    return subprocess.run([sys.executable, "-m", "pi_core", *args], capture_output=True, text=True, timeout=90,
                          stdin=subprocess.DEVNULL, cwd=agent.parent,
                          env={**clean, "PI_CODING_AGENT_DIR": str(agent), **(env or {})})


def test_the_environment_configures_it_and_a_prompt_reaches_the_router(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    with FakeHTTP() as http:
        FakeRouter(http, key="router-secret")
        env = {"LLAMA_BASE_URL": http.url, "LLAMA_API_KEY": "router-secret"}
        updated = pi(agent, "update", "--models", env=env)
        assert updated.returncode == 0, updated.stderr
        listed = pi(agent, "--list-models", "llama.cpp", env={**env, "PI_OFFLINE": "1"})
        rows = sorted(line.split()[1] for line in listed.stdout.splitlines()[1:] if line.strip())
        assert rows == ["gemma-3-4b", "qwen3-8b"], listed.stdout + listed.stderr
        done = pi(agent, "--provider", "llama.cpp", "--model", "qwen3-8b", "--thinking", "medium", "-p", "hello",
                  env={**env, "PI_OFFLINE": "1"})
        assert done.returncode == 0, done.stderr
        assert "router says hi" in done.stdout
        (chat,) = http.requests_to("/v1/chat/completions")
    assert bearer(chat) == "router-secret"
    assert chat.body["model"] == "qwen3-8b" and "max_tokens" in chat.body and "store" not in chat.body
    assert chat.body["chat_template_kwargs"]["enable_thinking"] is True
    assert all(bearer(r) == "router-secret" for r in http.requests if r.path != "/v1/chat/completions")


def test_without_a_server_url_llama_cpp_is_not_configured(tmp_path: Path) -> None:
    registry = builtin_registry(tmp_path, env={"LLAMA_API_KEY": "k"})
    assert not registry.has_auth("llama.cpp")
    assert asyncio.run(registry.refresh_models(["llama.cpp"])).skipped == {"llama.cpp": "not configured"}


def test_autoload_lists_unloaded_presets(tmp_path: Path) -> None:
    with FakeHTTP() as http:
        FakeRouter(http, autoload=True)
        registry = builtin_registry(tmp_path, env={"LLAMA_BASE_URL": http.url})
        assert asyncio.run(registry.refresh_models(["llama.cpp"])).refreshed == ["llama.cpp"]
    assert sorted(m.id for m in registry.get_models("llama.cpp")) == ["gemma-3-4b", "preset-7b", "qwen3-8b"]


def test_slash_llama_loads_and_unloads_models_in_the_terminal(tmp_path: Path) -> None:
    from ptyterm import PtyApp

    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    with FakeHTTP() as http:
        router = FakeRouter(http)
        (agent / "auth.json").write_text(json.dumps({"llama.cpp": {"type": "api_key",
                                                                   "env": {"LLAMA_BASE_URL": http.url}}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_") and k != "NO_COLOR"}
        env.update({"TERM": "xterm", "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "PI_NO_OSC52": "1"})
        app = PtyApp([sys.executable, "-m", "pi_core", "--provider", "faux", "--no-session"], env=env,
                     cwd=project, stderr=tmp_path / "stderr.txt")
        try:
            app.wait_for(lambda: "thinking" in app.display()[-1] or "faux" in app.display()[-1], 40)
            app.settle(0.3)
            app.send("/llama")
            app.settle(0.3)
            app.send("\r")
            app.wait_for("llama.cpp models at", 20)
            app.send("llama-3.2")
            app.settle(0.3)
            app.send("\r")  # unloaded: load it; two others are loaded
            app.wait_for("3 models are loaded: qwen3-8b, gemma-3-4b, julia-1", 20)
            app.send("Keep")
            app.settle(0.3)
            app.send("\r")
            app.wait_for("Loaded llama-3.2-1b", 30)
            with router.lock:
                assert router.models["llama-3.2-1b"]["status"]["value"] == "loaded"
                assert router.models["qwen3-8b"]["status"]["value"] == "loaded"  # kept
            listed = lambda n: lambda: app.text().count("llama.cpp models at") >= n  # noqa: E731
            app.wait_for(listed(2), 20)  # back in the list
            app.settle(0.3)
            app.send("gemma")
            app.settle(0.3)
            app.send("\r")  # sleeping counts as loaded: unload it, after asking
            app.wait_for("Unload model?", 20)
            app.send("\r")  # Yes
            app.wait_for("Unloaded gemma-3-4b", 30)
            app.wait_for(listed(3), 20)
            app.settle(0.3)
            app.send("\x1b")  # Esc closes the list
            app.settle(0.5)
        finally:
            app.close()
        with router.lock:
            assert router.models["gemma-3-4b"]["status"]["value"] == "unloaded"
        loads = [r.body for r in http.requests_to("/models/load")]
        unloads = [r.body for r in http.requests_to("/models/unload")]
    assert loads == [{"model": "llama-3.2-1b"}] and unloads == [{"model": "gemma-3-4b"}]
    saved = json.loads((agent / "models-store.json").read_text())["llama.cpp"]  # refreshed after each action
    assert sorted(m["id"] for m in saved["models"]) == ["llama-3.2-1b", "qwen3-8b"]


def test_model_names_a_model_loaded_since_start_up(tmp_path: Path) -> None:
    """``/model <name>`` with no exact match refreshes the run-time lists first, as pi does."""
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
    from rpc_client import RpcProcess

    agent = tmp_path / "agent"
    agent.mkdir()
    with FakeHTTP() as http:
        router = FakeRouter(http)
        env = {"PI_CODING_AGENT_DIR": str(agent), "LLAMA_BASE_URL": http.url}
        with RpcProcess(tmp_path, env=env, model=("faux", "echo")) as rpc:
            deadline = time.monotonic() + 30
            while not (agent / "models-store.json").exists() and time.monotonic() < deadline:
                time.sleep(0.05)  # the start-up refresh
            with router.lock:
                router.models["llama-3.2-1b"]["status"] = {"value": "loaded"}  # loaded by another client
            rpc.send({"type": "prompt", "message": "/model llama-3.2-1b", "id": "m"})
            rpc.response("m", timeout=40)
            state, _ = rpc.call({"type": "get_state"})
    assert state["data"]["model"]["provider"] == "llama.cpp" and state["data"]["model"]["id"] == "llama-3.2-1b"


def test_the_model_picker_refreshes_the_lists_while_it_is_open(tmp_path: Path) -> None:
    """``/model`` shows the saved lists at once and refreshes them in the background, as pi's model selector
    does: a model loaded on the router since start-up appears in the open picker and can be chosen."""
    import time

    from ptyterm import PtyApp

    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    with FakeHTTP() as http:
        router = FakeRouter(http)
        (agent / "auth.json").write_text(json.dumps({"llama.cpp": {"type": "api_key",
                                                                   "env": {"LLAMA_BASE_URL": http.url}}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_") and k not in ("NO_COLOR", "PI_OFFLINE")}
        env.update({"TERM": "xterm", "PI_CODING_AGENT_DIR": str(agent), "PI_NO_OSC52": "1"})
        app = PtyApp([sys.executable, "-m", "pi_core", "--provider", "faux", "--no-session"], env=env,
                     cwd=project, stderr=tmp_path / "stderr.txt")
        try:
            app.wait_for(lambda: "thinking" in app.display()[-1] or "faux" in app.display()[-1], 40)
            deadline = time.monotonic() + 30
            while not (agent / "models-store.json").exists() and time.monotonic() < deadline:
                time.sleep(0.05)  # the start-up refresh saved the router's list
            assert "llama-3.2-1b" not in (agent / "models-store.json").read_text()
            lists_before = len(http.requests_to("/models"))
            with router.lock:
                router.models["llama-3.2-1b"]["status"] = {"value": "loaded"}  # loaded by another client
            app.settle(0.3)
            app.send("/model")
            app.settle(0.3)
            app.send("\r")
            app.wait_for("Model catalogs refreshed.", 30)
            assert len(http.requests_to("/models")) > lists_before  # fetched while the picker was open
            app.send("llama-3.2")
            app.wait_for(lambda: any("llama.cpp/llama-3.2-1b" in line for line in app.display()), 20)
            app.settle(0.3)
            app.send("\r")
            app.wait_for("Model: llama.cpp/llama-3.2-1b", 20)
        finally:
            app.close()
    saved = json.loads((agent / "models-store.json").read_text())["llama.cpp"]
    assert "llama-3.2-1b" in [m["id"] for m in saved["models"]]
