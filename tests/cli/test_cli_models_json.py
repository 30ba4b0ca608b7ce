"""models.json fields that must reach the request: provider headers, samplingParams (values as pi 1.6 sent them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, write_agent_dir
from test_cli_run import pi


def configure(agent: Path, base_url: str, **provider: Any) -> None:
    write_agent_dir(agent, base_url)
    models = json.loads((agent / "models.json").read_text())
    entry = models["providers"]["fake"]
    model = entry["models"][0]
    model.update(provider.pop("model", {}))
    entry.update(provider)
    (agent / "models.json").write_text(json.dumps(models))


def body_fields(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request["body"].items() if k not in ("messages", "tools", "stream_options")}


def test_provider_headers_reach_custom_models(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "ok"}]) as server:
        configure(agent, server.base_url,
                  headers={"x-lit": "literal", "x-env": "$PI_TEST_HEADER", "x-env2": "${PI_TEST_HEADER}",
                           "x-cmd": "!echo cmdval", "x-both": "provider"},
                  model={"headers": {"x-both": "model"}})
        result = pi(tmp_path, agent, "--provider", "fake", "--model", "fake-model", "-p", "hi",
                    env={"PI_TEST_HEADER": "fromenv"})
    assert result.returncode == 0, result.stderr
    headers = server.requests[0]["headers"]
    # what pi 1.6 sent for the same models.json
    assert {k: headers.get(k) for k in ("x-lit", "x-env", "x-env2", "x-cmd", "x-both")} == {
        "x-lit": "literal", "x-env": "fromenv", "x-env2": "fromenv", "x-cmd": "cmdval", "x-both": "model"}
    assert headers["authorization"] == "Bearer fake-key"


def test_sampling_params_and_per_thinking_level_overrides(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    model = {"reasoning": True, "samplingParams": {"temperature": 0.3, "top_p": 0.9, "top_k": 40},
             "samplingParamsByThinkingLevel": {"high": {"temperature": 1.0}, "off": {"top_k": 5}}}
    with FakeOpenAI([{"text": "ok"}] * 3) as server:
        configure(agent, server.base_url, model=model)
        for level in ("medium", "high", "off"):
            result = pi(tmp_path, agent, "--provider", "fake", "--model", "fake-model", "--thinking", level,
                        "--no-session", "-p", "hi")
            assert result.returncode == 0, result.stderr
    medium, high, off = (body_fields(r) for r in server.requests)
    assert {k: medium[k] for k in ("reasoning_effort", "temperature", "top_p", "top_k")} == {
        "reasoning_effort": "medium", "temperature": 0.3, "top_p": 0.9, "top_k": 40}
    assert {k: high[k] for k in ("reasoning_effort", "temperature", "top_p", "top_k")} == {
        "reasoning_effort": "high", "temperature": 1.0, "top_p": 0.9, "top_k": 40}
    assert "reasoning_effort" not in off and (off["temperature"], off["top_k"]) == (0.3, 5)


def test_sampling_params_through_model_overrides(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    with FakeOpenAI([{"text": "ok"}]) as server:
        configure(agent, server.base_url)
        models = json.loads((agent / "models.json").read_text())
        models["providers"]["openai"] = {"baseUrl": server.base_url, "apiKey": "sk-test",
                                         "modelOverrides": {"gpt-4o-mini": {"api": "openai-completions",
                                                                            "samplingParams": {"seed": 7}}}}
        (agent / "models.json").write_text(json.dumps(models))
        result = pi(tmp_path, agent, "--model", "openai/gpt-4o-mini", "--no-session", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert body_fields(server.requests[0])["seed"] == 7


def test_sampling_params_in_the_responses_payload_too() -> None:
    from pi_core.ai import Context, Model, StreamOptions, UserMessage
    from plugins.providers.openai_responses import build_payload

    model = Model(id="m", api="openai-responses", provider="p", reasoning=True, sampling_params={"temperature": 0.2},
                  sampling_params_by_thinking_level={"low": {"temperature": 0.9}})
    context = Context(messages=[UserMessage(content="hi")])
    assert build_payload(model, context, StreamOptions(reasoning="medium"))["temperature"] == 0.2
    assert build_payload(model, context, StreamOptions(reasoning="low"))["temperature"] == 0.9
    assert "temperature" not in build_payload(model.model_copy(update={"sampling_params": None,
                                                                       "sampling_params_by_thinking_level": None}),
                                              context, StreamOptions(reasoning="low"))


def test_a_missing_key_names_the_variable_and_auth_json(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {"OPENAI_API_KEY": ""}
    result = pi(tmp_path, agent, "--model", "openai/gpt-4o-mini", "--no-session", "-p", "hi", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "No API key for provider: openai" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr and str(agent / "auth.json") in result.stderr


def test_start_up_thinking_level_follows_pi_rule(tmp_path: Path) -> None:
    # no setting: medium on a reasoning model; modelThinkingLevels (exact provider/modelId) beats
    # defaultThinkingLevel; --thinking beats both; a model without reasoning gets none
    agent = tmp_path / "agent"
    runs = [({}, []), ({"defaultThinkingLevel": "low"}, []),
            ({"defaultThinkingLevel": "low", "modelThinkingLevels": {"fake/fake-model": "high"}}, []),
            ({"modelThinkingLevels": {"fake/fake-model": "high"}}, ["--thinking", "minimal"])]
    with FakeOpenAI([{"text": "ok"}] * len(runs)) as server:
        configure(agent, server.base_url, model={"reasoning": True})
        for settings, flags in runs:
            (agent / "settings.json").write_text(json.dumps(settings))
            result = pi(tmp_path, agent, "--provider", "fake", "--model", "fake-model", *flags, "--no-session",
                        "-p", "hi")
            assert result.returncode == 0, result.stderr
    assert [r["body"].get("reasoning_effort") for r in server.requests] == ["medium", "low", "high", "minimal"]


def test_switching_models_over_rpc_takes_the_models_thinking_level(tmp_path: Path) -> None:
    import subprocess
    import sys

    agent = tmp_path / "agent"
    with FakeOpenAI([]) as server:
        configure(agent, server.base_url, model={"reasoning": True})
        models = json.loads((agent / "models.json").read_text())
        second = {**models["providers"]["fake"]["models"][0], "id": "fake-other", "name": "other"}
        models["providers"]["fake"]["models"].append(second)
        (agent / "models.json").write_text(json.dumps(models))
        (agent / "settings.json").write_text(json.dumps({"modelThinkingLevels": {"fake/fake-other": "high"},
                                                         "defaultThinkingLevel": "low"}))
        commands = [{"id": "s", "type": "get_state"},
                    {"id": "a", "type": "set_model", "provider": "fake", "modelId": "fake-other"},
                    {"id": "b", "type": "get_state"},
                    {"id": "c", "type": "set_model", "provider": "fake", "modelId": "fake-model"},
                    {"id": "d", "type": "get_state"}]
        done = subprocess.run([sys.executable, "-m", "pi_core", "--mode", "rpc", "--provider", "fake", "--model",
                               "fake-model", "--no-session"], input="".join(json.dumps(c) + "\n" for c in commands),
                              capture_output=True, text=True, timeout=60, cwd=tmp_path,
                              env={**__import__("os").environ, "PI_CODING_AGENT_DIR": str(agent)})
    states = [json.loads(line) for line in done.stdout.splitlines() if '"command":"get_state"' in line.replace(" ", "")]
    # the model's own entry, else defaultThinkingLevel (pi resets to it on a switch)
    assert [s["data"]["thinkingLevel"] for s in states] == ["low", "high", "low"]


def test_provider_name_is_its_display_name(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    agent = tmp_path / "agent"
    with FakeOpenAI([]) as server:
        configure(agent, server.base_url, name="My Box")
        commands = [{"id": "l", "type": "prompt", "message": "/login"}]
        done = subprocess.Popen([sys.executable, "-m", "pi_core", "--mode", "rpc", "--provider", "fake", "--model",
                                 "fake-model", "--no-session"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
        assert done.stdin is not None and done.stdout is not None
        done.stdin.write(json.dumps(commands[0]) + "\n")
        done.stdin.flush()
        request = next(r for r in map(json.loads, done.stdout) if r.get("type") == "extension_ui_request"
                       and r.get("method") == "select")
        done.stdin.write(json.dumps({"type": "extension_ui_response", "id": request["id"], "cancelled": True}) + "\n")
        done.stdin.close()
        done.wait(30)
    assert "My Box (fake)" in request["options"]  # the choice shows the name, as pi's /login does


def _image(path: Path, width: int, height: int, *, noisy: bool = False) -> Path:
    import random

    from PIL import Image

    image = Image.new("RGB", (width, height), (200, 30, 30))
    if noisy:  # hard to compress: only smaller pixels or JPEG make it fit a byte limit
        rng = random.Random(1)
        image.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(width * height)])
    image.save(path, format="PNG")
    return path


def _sent_image(request: dict[str, Any]) -> tuple[str, int, tuple[int, int]]:
    """(MIME type, base64 length, size) of the one image of an OpenAI Chat Completions request."""
    import base64
    import io

    from PIL import Image

    [url] = [part["image_url"]["url"] for m in request["body"]["messages"] if isinstance(m["content"], list)
             for part in m["content"] if part.get("type") == "image_url"]
    head, data = url.split(",", 1)
    return head.removeprefix("data:").split(";")[0], len(data), Image.open(io.BytesIO(base64.b64decode(data))).size


def test_input_limits_resize_the_images_that_enter_the_conversation(tmp_path: Path) -> None:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    _image(ws / "wide.png", 3000, 150)
    _image(ws / "noise.png", 300, 300, noisy=True)
    resize = {"maxWidth": 600, "maxHeight": 400, "maxBytes": 60000, "jpegQuality": 70}
    with FakeOpenAI([{"text": "ok"}, {"text": "ok"}, {"text": "ok"}]) as server:
        configure(agent, server.base_url, model={"input": ["text", "image"],
                                                 "inputLimits": {"images": {"resize": resize}}})
        for name in ("wide.png", "noise.png"):
            result = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "--no-session", "-p", f"@{name}", "?")
            assert result.returncode == 0, result.stderr
        configure(agent, server.base_url, model={"input": ["text", "image"]})
        default = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "--no-session", "-p", "@wide.png", "?")
        assert default.returncode == 0, default.stderr
    assert _sent_image(server.requests[0])[2] == (600, 30)  # within maxWidth
    mime, encoded, size = _sent_image(server.requests[1])
    assert encoded < 60000 and size[0] <= 300  # under maxBytes (240 KB of noise as PNG does not fit)
    assert _sent_image(server.requests[2])[2] == (2000, 100)  # pi's defaults without inputLimits


def test_anthropic_session_affinity_header_follows_the_format(tmp_path: Path) -> None:
    from pi_core.testing import FakeProviderServer

    seen = []
    for compat in ({"sendSessionAffinityHeaders": True},
                   {"sendSessionAffinityHeaders": True, "sessionAffinityFormat": "openrouter"}):
        agent = tmp_path / f"agent{len(seen)}"
        agent.mkdir()
        with FakeProviderServer([{"text": "ok"}]) as server:
            provider = {**server.provider_config("anthropic-messages"), "compat": compat}
            (agent / "models.json").write_text(json.dumps({"providers": {"fa": provider}}))
            result = pi(tmp_path, agent, "--model", "fa/fake-model", "--no-session", "-p", "hi")
        assert result.returncode == 0, result.stderr
        seen.append(sorted(k for k in server.requests[0].headers if "session" in k or "affinity" in k))
    assert seen == [["x-session-affinity"], ["x-session-id"]]  # what pi 1.6 sent for the same models.json
