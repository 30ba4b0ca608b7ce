"""Settings that must change what pi does: each test fails if its setting is ignored."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_cli_run import pi

FAUX = ("--provider", "faux", "--model", "echo", "--no-session")


def settings(agent: Path, values: dict[str, Any], project: Path | None = None) -> None:
    target = (project / ".pi") if project is not None else agent
    target.mkdir(parents=True, exist_ok=True)
    (target / "settings.json").write_text(json.dumps(values))


def bash_call(command: str) -> str:
    return json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})


def rpc_bash(cwd: Path, agent: Path, command: str) -> dict[str, Any]:
    result = pi(cwd, agent, "--mode", "rpc", *FAUX, stdin=json.dumps({"id": "b", "type": "bash", "command": command}) + "\n")
    [response] = [r for r in map(json.loads, result.stdout.splitlines()) if r.get("type") == "response"]
    assert response["success"], response
    return response["data"]


def test_shell_command_prefix_runs_before_tool_and_user_commands(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    settings(agent, {"shellCommandPrefix": "export FOO=prefixed"})
    result = pi(tmp_path, agent, *FAUX, "-p", bash_call('echo "foo=$FOO"'))
    assert result.returncode == 0, result.stderr
    assert "foo=prefixed" in result.stdout
    assert rpc_bash(tmp_path, agent, 'echo "foo=$FOO"')["output"].strip() == "foo=prefixed"
    settings(agent, {})
    assert "foo=prefixed" not in pi(tmp_path, agent, *FAUX, "-p", bash_call('echo "foo=$FOO"')).stdout


def test_shell_path_chooses_the_shell(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    shell = tmp_path / "bin" / "myshell"
    shell.parent.mkdir()
    shell.write_text('#!/bin/sh\necho "via myshell"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    settings(agent, {"shellPath": str(shell)})
    result = pi(tmp_path, agent, *FAUX, "-p", bash_call("echo body"))
    assert result.returncode == 0, result.stderr
    assert "via myshell" in result.stdout and "body" in result.stdout
    assert rpc_bash(tmp_path, agent, "echo body")["output"] == "via myshell\nbody\n"
    settings(agent, {"shellPath": str(tmp_path / "no-such-shell")})
    missing = pi(tmp_path, agent, *FAUX, "-p", bash_call("echo body"))
    assert "no-such-shell" in missing.stdout and "Traceback" not in missing.stderr


PROBE = """
from pi_core import hookimpl, Tool, ToolResult

@hookimpl
def register_tools(register):
    register(Tool(name="{name}", description="probe", parameters={{"type": "object"}},
                  execute=lambda params, ctx: ToolResult.text("ok")))
"""


def probe(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(PROBE.format(name=name)))
    return path


def plugin_rows(cwd: Path, agent: Path, *args: str) -> dict[str, dict[str, Any]]:
    result = pi(cwd, agent, *args, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in map(json.loads, result.stdout.splitlines())}


def test_extensions_setting_loads_files_and_directories(tmp_path: Path) -> None:
    agent, ws = tmp_path / "agent", tmp_path / "ws"
    ws.mkdir()
    probe(tmp_path / "exts" / "single.py", "from_file")
    probe(tmp_path / "many" / "a.py", "from_dir_a")
    probe(tmp_path / "many" / "b.py", "from_dir_b")
    settings(agent, {"extensions": [str(tmp_path / "exts" / "single.py"), "../many", "missing.py"]})
    result = pi(ws, agent, "plugins", "--json")
    tools = {t for row in map(json.loads, result.stdout.splitlines()) for t in row["tools"]}
    assert {"from_file", "from_dir_a", "from_dir_b"} <= tools
    assert "missing.py" in result.stderr and "does not exist" in result.stderr
    # --no-extensions drops configured extensions as it drops discovered ones
    assert "from_file" not in pi(ws, agent, "-ne", "plugins", "--json").stdout


def test_project_extensions_setting_needs_trust(tmp_path: Path) -> None:
    agent, ws = tmp_path / "agent", tmp_path / "ws"
    probe(ws / "tools" / "proj.py", "from_project")
    settings(agent, {}, project=ws)
    (ws / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["../tools/proj.py"]}))
    untrusted = pi(ws, agent, "plugins", "--json")
    assert "from_project" not in untrusted.stdout
    trusted = pi(ws, agent, "--approve", "plugins", "--json")
    assert "from_project" in trusted.stdout


def test_default_project_trust_always_and_never(tmp_path: Path) -> None:
    agent, ws = tmp_path / "agent", tmp_path / "ws"
    probe(ws / ".pi" / "extensions" / "local.py", "local_tool")
    settings(agent, {"defaultProjectTrust": "always"})
    assert "local_tool" in pi(ws, agent, "plugins", "--json").stdout
    assert "local_tool" not in pi(ws, agent, "--no-approve", "plugins", "--json").stdout  # the flag wins
    settings(agent, {"defaultProjectTrust": "never"})
    never = pi(ws, agent, "plugins", "--json")
    assert "local_tool" not in never.stdout and "not trusted" in never.stderr
    # a project cannot trust itself: the key counts only in the global settings
    settings(agent, {})
    (ws / ".pi" / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    assert "local_tool" not in pi(ws, agent, "plugins", "--json").stdout


def test_builtin_entries_switch_built_in_plugins(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    settings(agent, {})
    assert not plugin_rows(tmp_path, agent)["mcp"]["disabled"]
    assert plugin_rows(tmp_path, agent, "-ne")["mcp"]["disabled"]  # pi: --no-extensions includes built-ins
    assert not plugin_rows(tmp_path, agent, "-ne", "-e", "builtin:mcp")["mcp"]["disabled"]
    settings(agent, {"extensions": ["-builtin:mcp"]})
    assert plugin_rows(tmp_path, agent)["mcp"]["disabled"]
    assert not plugin_rows(tmp_path, agent, "-e", "builtin:mcp")["mcp"]["disabled"]
    settings(agent, {"extensions": ["-builtin:mcp"]}, project=tmp_path)
    (tmp_path / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["+builtin:mcp"]}))
    assert not plugin_rows(tmp_path, agent, "--approve")["mcp"]["disabled"]  # the project's entry wins
    unknown = pi(tmp_path, agent, "-e", "builtin:nope", "plugins", "--json")
    assert "builtin:nope names no built-in plugin" in unknown.stderr


def test_provider_retries_and_agent_delay_use_pis_names(tmp_path: Path) -> None:
    from fake_openai import FakeOpenAI, write_agent_dir

    ws, agent = tmp_path, tmp_path / "agent"
    busy = {"error": {"status": 503, "message": "busy"}}
    fake = ("--provider", "fake", "--model", "fake-model", "--no-session")
    # retry.provider.maxRetries retries inside the request: the agent never sees the failure
    with FakeOpenAI([busy, {"text": "recovered"}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False, "baseDelayMs": 10,
                                                           "provider": {"maxRetries": 1}}})
        result = pi(ws, agent, *fake, "--mode", "json", "hi")
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 2 and '"auto_retry_start"' not in result.stdout
    with FakeOpenAI([busy, {"text": "recovered"}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False, "baseDelayMs": 10}})
        result = pi(ws, agent, *fake, "-p", "hi")
    assert result.returncode == 1 and len(server.requests) == 1  # pi's default: no provider retries
    # retry.maxAgentDelayMs caps the agent's backoff
    with FakeOpenAI([busy, {"text": "recovered"}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"baseDelayMs": 30000, "maxAgentDelayMs": 20}})
        result = pi(ws, agent, *fake, "--mode", "json", "hi")
    assert result.returncode == 0, result.stderr
    [start] = [json.loads(line) for line in result.stdout.splitlines() if '"auto_retry_start"' in line]
    assert start["delayMs"] == 20


def _png(path: Path, width: int, height: int) -> Path:
    from PIL import Image

    Image.new("RGB", (width, height), (200, 30, 30)).save(path, format="PNG")
    return path


def _sent_images(request: dict[str, Any]) -> list[tuple[int, int]]:
    """Sizes of the images in an OpenAI Chat Completions request."""
    import base64
    import io

    from PIL import Image

    sizes = []
    for message in request["body"]["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                sizes.append(Image.open(io.BytesIO(data)).size)
    return sizes


def _texts(request: dict[str, Any]) -> str:
    return json.dumps(request["body"]["messages"])


@pytest.mark.parametrize(("values", "expected"), [
    ({}, [(2000, 100)]),
    ({"images": {"autoResize": False}}, [(3000, 150)]),
])
def test_images_auto_resize_for_prompts_and_tool_results(tmp_path: Path, values: dict[str, Any],
                                                         expected: list[tuple[int, int]]) -> None:
    from fake_openai import FakeOpenAI, write_agent_dir

    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    _png(ws / "wide.png", 3000, 150)
    turns = [{"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "wide.png"}}]}, {"text": "seen"}]
    with FakeOpenAI([{"text": "ok"}, *turns]) as server:
        write_agent_dir(agent, server.base_url, values)
        vision = json.loads((agent / "models.json").read_text())
        vision["providers"]["fake"]["models"][0]["input"] = ["text", "image"]
        (agent / "models.json").write_text(json.dumps(vision))
        attached = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-p", "@wide.png", "what is it?")
        read = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-p", "read wide.png")
    assert attached.returncode == 0 and read.returncode == 0, attached.stderr + read.stderr
    assert _sent_images(server.requests[0]) == expected
    assert _sent_images(server.requests[2]) == expected


def test_block_images_sends_a_note_instead(tmp_path: Path) -> None:
    from fake_openai import FakeOpenAI, write_agent_dir

    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    _png(ws / "a.png", 20, 20)
    _png(ws / "b.png", 20, 20)
    with FakeOpenAI([{"text": "ok"}, {"text": "ok"}]) as server:
        write_agent_dir(agent, server.base_url, {"images": {"blockImages": True}})
        vision = json.loads((agent / "models.json").read_text())
        vision["providers"]["fake"]["models"][0]["input"] = ["text", "image"]
        (agent / "models.json").write_text(json.dumps(vision))
        blocked = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-p", "@a.png", "@b.png", "look")
        (agent / "settings.json").write_text("{}")
        allowed = pi(ws, agent, "--provider", "fake", "--model", "fake-model", "-c", "-p", "again")
    assert blocked.returncode == 0 and allowed.returncode == 0, blocked.stderr + allowed.stderr
    assert _sent_images(server.requests[0]) == [] and _texts(server.requests[0]).count("Image reading is disabled.") == 1
    assert _sent_images(server.requests[1]) == [(20, 20), (20, 20)]  # the session kept them


def test_provider_timeout_ms_ends_a_silent_request(tmp_path: Path) -> None:
    from fake_openai import FakeOpenAI, write_agent_dir

    agent = tmp_path / "agent"
    fake = ("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi")
    with FakeOpenAI([{"text": "late", "delay": 3}, {"text": "late", "delay": 3}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False, "provider": {"timeoutMs": 300}}})
        cut = pi(tmp_path, agent, *fake)
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False}})
        waited = pi(tmp_path, agent, *fake)
    assert cut.returncode == 1 and "time" in cut.stderr.lower(), cut.stderr
    assert (waited.returncode, waited.stdout) == (0, "late\n")


def test_http_idle_timeout_ms_ends_a_silent_stream(tmp_path: Path) -> None:
    from fake_openai import FakeOpenAI, write_agent_dir

    agent = tmp_path / "agent"
    fake = ("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi")
    with FakeOpenAI([{"text": "late", "delay": 3}, {"text": "late", "delay": 3}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False}, "httpIdleTimeoutMs": 300})
        cut = pi(tmp_path, agent, *fake)
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False}, "httpIdleTimeoutMs": 60000})
        waited = pi(tmp_path, agent, *fake)
    assert cut.returncode == 1 and "time" in cut.stderr.lower(), cut.stderr
    assert (waited.returncode, waited.stdout) == (0, "late\n")


def test_http_proxy_setting_routes_provider_requests(tmp_path: Path) -> None:
    import socket

    from fake_openai import FakeOpenAI, write_agent_dir

    with socket.socket() as closed:  # a port nothing listens on: the proxy is refused
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    agent = tmp_path / "agent"
    fake = ("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi")
    clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    with FakeOpenAI([{"text": "direct"}]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False}, "httpProxy": dead})
        proxied = subprocess_pi(tmp_path, agent, clean, *fake)
        write_agent_dir(agent, server.base_url, {"retry": {"enabled": False}})
        direct = subprocess_pi(tmp_path, agent, clean, *fake)
    assert proxied.returncode == 1 and len(server.requests) == 1, proxied.stderr
    assert (direct.returncode, direct.stdout) == (0, "direct\n"), direct.stderr


def subprocess_pi(cwd: Path, agent: Path, env: dict[str, str], *args: str) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, input="", env={**env, "PI_CODING_AGENT_DIR": str(agent)})
