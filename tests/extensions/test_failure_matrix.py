"""Plugins that break, per hook kind × kind of failure × output mode, against the real `pi` command.

Each run loads one plugin file per hook (so a registration failure, which unregisters its plugin,
does not hide the other hooks), all failing the same way, and asks the offline ``faux`` model for two
tool calls, so that the tool hooks run too. Whatever the plugins do, pi must finish, print no
traceback, name each failing plugin on stderr (RPC: also as an ``extension_error`` event), keep the
JSON and RPC stdout valid JSON lines, and still give the answer. ``message_update`` comes once per
streamed delta, so a handler of it that hangs is the case the hook breaker is for (one limit, not one per
delta). The provider hooks, which only providers speaking HTTP call, run against the fake OpenAI server.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

HOOKS = ("register_tools", "register_commands", "register_providers", "session_start", "session_shutdown",
         "context", "before_agent_start", "input", "before_tool_call", "after_tool_call", "message_update")
REGISTRATION = ("register_tools", "register_commands", "register_providers")
NOTIFY = ("session_start", "session_shutdown", "message_update")  # a return value is ignored
FAILURES = ("raise", "wrong_type", "hang_sync", "hang_async", "print", "exit", "interrupt")
MODES = ("print", "json", "rpc")

#: short, so the hanging cells stay quick; pi's built-in plugins have no limit, so only these hooks hit it
HANG_LIMIT_MS = 500

#: what each hook returns in the wrong_type cells (registration hooks register something that is not one)
WRONG = {
    "register_tools": 'register("not a tool")',
    "register_commands": "register(42)",
    "register_providers": "register(42)",
    "message_update": 'return "ignored"',
    "session_start": 'return "ignored"',  # notify hooks: a return value is ignored, nothing to report
    "session_shutdown": 'return "ignored"',
    "context": 'return "not a message list"',
    "before_agent_start": "return 42",
    "input": "return 42",
    "before_tool_call": 'return "allow?"',
    "after_tool_call": "return 42",
}

#: two calls: the before_tool_call plugin fails on the first (a failing gate blocks it, so no
#: after_tool_call follows), the second runs and reaches the after_tool_call plugin
PROMPT = json.dumps({"tool_calls": [{"name": "read", "arguments": {"path": "gate.txt"}},
                                    {"name": "read", "arguments": {"path": "hello.txt"}}]})
ANSWER = "Results of 2 tool calls"


def plugin_source(hook: str, failure: str) -> str:
    args = "register" if hook in REGISTRATION else "event, ctx"
    is_async = failure == "hang_async"
    body = {
        "raise": f'raise RuntimeError("boom in {hook}")',
        "wrong_type": WRONG[hook],
        "hang_sync": "threading.Event().wait()",
        "hang_async": "await asyncio.Event().wait()",
        "print": f'print("PRINTED-BY-{hook}")\nprint("{{not json")',
        "exit": "sys.exit(3)",
        "interrupt": "raise KeyboardInterrupt",  # a plugin's failure, not a Ctrl-C
    }[failure]
    if hook == "before_tool_call":
        body = f'if event.arguments.get("path") != "gate.txt":\n    return None\n{body}'
    return textwrap.dedent("""\
        import asyncio, sys, threading
        from pi_core import hookimpl

        @hookimpl
        {kw}def {hook}({args}):
        {body}
        """).format(kw="async " if is_async else "", hook=hook, args=args,
                    body=textwrap.indent(body, "    "))


def names_plugin(failure: str, hook: str) -> bool:
    """Whether this cell is an error pi must report (a print is not; a notify hook's return is ignored)."""
    if failure == "print":
        return False
    return not (failure == "wrong_type" and hook in NOTIFY)


def strict_json(line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def run_pi(pi_exe: list[str], tmp_path: Path, failure: str, mode: str) -> subprocess.CompletedProcess[str]:
    agent = tmp_path / "agent"
    agent.mkdir()
    limit = HANG_LIMIT_MS if failure.startswith("hang") else 5000
    (agent / "settings.json").write_text(json.dumps({"plugins": {"hookTimeoutMs": limit}}))
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    args: list[str] = []
    for hook in HOOKS:
        path = plugins / f"fails_{hook}.py"
        path.write_text(plugin_source(hook, failure))
        args += ["-e", str(path)]
    args += ["--provider", "faux", "--model", "echo", "--no-session"]
    stdin = None
    if mode == "print":
        args += ["-p", PROMPT]
    elif mode == "json":
        args += ["--mode", "json", PROMPT]
    else:
        args += ["--mode", "rpc"]
        stdin = json.dumps({"type": "prompt", "id": "p1", "message": PROMPT}) + "\n"
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello from the file\n")
    (project / "gate.txt").write_text("behind the gate\n")
    return subprocess.run([*pi_exe, *args], cwd=project, input=stdin if stdin is not None else "",
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("failure", FAILURES)
def test_a_failing_plugin_never_takes_pi_down(pi_exe: list[str], tmp_path: Path, failure: str, mode: str) -> None:
    result = run_pi(pi_exe, tmp_path, failure, mode)  # a hang would raise TimeoutExpired
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    for hook in HOOKS:
        if names_plugin(failure, hook):
            assert f"fails_{hook}.py" in result.stderr, (hook, result.stderr)
    if mode == "print":
        assert ANSWER in result.stdout
        return
    records = [strict_json(line) for line in result.stdout.splitlines()]  # every line is JSON
    assert all(isinstance(r, dict) and isinstance(r.get("type"), str) for r in records)
    answers = [r for r in records if r["type"] == "message_end" and r["message"].get("role") == "assistant"]
    assert ANSWER in json.dumps(answers[-1]["message"]["content"])
    if failure == "print":  # the plugins' prints went to stderr, not into the stream
        assert all(f"PRINTED-BY-{hook}" in result.stderr for hook in HOOKS)
    if mode == "rpc":
        assert any(r["type"] == "response" and r.get("id") == "p1" and r.get("success") is True for r in records)
        reported = {Path(r["extensionPath"]).name for r in records if r["type"] == "extension_error"}
        # session_shutdown runs after the RPC loop ended: stderr only
        for hook in set(HOOKS) - {*REGISTRATION, "session_shutdown"}:
            if names_plugin(failure, hook):
                assert f"fails_{hook}.py" in reported, (hook, reported)


PROVIDER_HOOKS = ("before_provider_request", "before_provider_headers", "after_provider_response",
                  "provider_stream_event")


@pytest.mark.parametrize("failure", FAILURES)
def test_a_failing_provider_hook_never_takes_pi_down(pi_exe: list[str], tmp_path: Path, failure: str) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from fake_openai import FakeOpenAI, write_agent_dir

    agent = tmp_path / "agent"
    args: list[str] = []
    for hook in PROVIDER_HOOKS:
        path = tmp_path / f"fails_{hook}.py"
        source = plugin_source("context", failure).replace("def context(", f"def {hook}(")
        path.write_text(source.replace('"boom in context"', f'"boom in {hook}"'))
        args += ["-e", str(path)]
    turns = [{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo one"}}]},
             {"text": "the final answer"}]
    with FakeOpenAI(turns) as server:
        limit = HANG_LIMIT_MS if failure.startswith("hang") else 5000
        write_agent_dir(agent, server.base_url, {"plugins": {"hookTimeoutMs": limit}})
        result = subprocess.run([*pi_exe, *args, "--provider", "fake", "--model", "fake-model", "--no-session",
                                 "-p", "go"], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                                env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    assert "the final answer" in result.stdout and "Traceback" not in result.stderr
    if failure not in ("print", "wrong_type"):
        for hook in PROVIDER_HOOKS:
            assert f"fails_{hook}.py" in result.stderr, (hook, result.stderr)
