"""pi's own slash commands are plugins (``plugins/commands``): registered like any plugin's, run by the
session in every mode, and an unknown ``/word`` never reaches the model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, build_plugin_host, create_agent_session, hookimpl
from pi_core.ai.faux import FauxProvider

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

BUILT_IN = {"help": "commands-general", "quit": "commands-general", "tools": "commands-general",
            "copy": "commands-general", "model": "commands-model", "thinking": "commands-model",
            "name": "commands-session", "session": "commands-session", "new": "commands-session",
            "resume": "commands-session", "compact": "commands-session", "tree": "commands-session",
            "fork": "commands-session", "clone": "commands-session", "reload": "commands-session",
            "history": "commands-general", "hotkeys": "commands-info", "changelog": "commands-info",
            "debug": "commands-info", "trust": "commands-info", "settings": "commands-settings",
            "scoped-models": "commands-settings", "export": "commands-transfer", "import": "commands-transfer"}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_built_in_commands_are_registered_by_built_in_plugins(tmp_path: Path) -> None:
    host = build_plugin_host(tmp_path, agent_dir=tmp_path / "agent", autoload=False)
    assert {name: host.commands.plugin_of(name) for name in BUILT_IN} == BUILT_IN
    assert {host.records[p].source for p in BUILT_IN.values()} == {"builtin"}


def test_a_plugin_can_replace_a_built_in_command(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha")
    ran: list[str] = []

    class MyModel:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            register(Command("model", lambda args, ctx: ran.append(args), "my model picker"), replaces="model")

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, MyModel()],
                                             session="memory", agent_dir=tmp_path / "agent")
        await session.prompt("/model fast")

    run(scenario())
    assert ran == ["fast"]


def test_built_in_commands_use_the_public_context(tmp_path: Path) -> None:
    """Through the SDK: /name, /thinking, /model (a pattern), /new; pickers answer "cancelled" headless."""
    a, b = FauxProvider("faux-a", "alpha"), FauxProvider("faux-b", "beta")
    a.enqueue("hello")
    notices: list[str] = []

    class Notes:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            async def notify(message: str, level: str = "info") -> None:
                notices.append(message)

            ctx.ui.notify = notify  # type: ignore[method-assign]

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=a.model, plugins=[a, b, Notes()],
                                             agent_dir=tmp_path / "agent", thinking_level="low")
        await session.prompt("hi")
        first = session.session.session_file
        for text in ("/name renamed", "/thinking high", "/model faux-b/beta", "/model", "/resume", "/new"):
            await session.prompt(text)
        return session, first

    session, first = run(scenario())
    assert notices == ["Session name set: renamed", "Thinking level: high", "Model: faux-b/beta",
                       "No other sessions for this project", "New session started"]
    assert session.model.id == "beta" and session.session.session_file != first
    records = [json.loads(line) for line in first.read_text().splitlines()]
    assert [r["name"] for r in records if r["type"] == "session_info"] == ["renamed"]
    assert [r["thinkingLevel"] for r in records if r["type"] == "thinking_level_change"] == ["low", "high"]


def pi(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "rpc" / "scripted_model.py"
    return subprocess.run([sys.executable, "-m", "pi_core", "--provider", "fake", "--model", "fake-model",
                           "-e", str(fixture), "--no-session", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd),
                                           "PI_CODING_AGENT_DIR": str(cwd / "agent")})


def test_an_unknown_command_is_an_error_not_a_prompt(tmp_path: Path) -> None:
    result = pi(tmp_path, "-p", "/fok this")
    assert result.returncode == 1 and result.stdout == ""
    assert "Unknown command /fok; did you mean /fork?" in result.stderr
    assert "Traceback" not in result.stderr
    text = pi(tmp_path, "-p", "/usr/bin is missing")  # a path is text, not a command
    assert (text.returncode, text.stdout) == (0, "echo: /usr/bin is missing\n")


def test_built_in_commands_run_from_rpc_prompt_and_are_not_listed(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi_rpc:
        response, _ = pi_rpc.call({"type": "prompt", "message": "/name from rpc"})
        state, _ = pi_rpc.call({"type": "get_state"})
        commands, _ = pi_rpc.call({"type": "get_commands"})
        unknown, _ = pi_rpc.call({"type": "prompt", "message": "/nosuch"})
    assert response["data"] == {"disposition": "handled"}
    assert state["data"]["sessionName"] == "from rpc"
    assert not {c["name"] for c in commands["data"]["commands"]} & set(BUILT_IN)
    assert unknown["success"] is False and "Unknown command /nosuch" in unknown["error"]


def test_idle_only_commands_wait_their_turn(tmp_path: Path) -> None:
    faux = FauxProvider("faux-a", "alpha", delta_delay=0.02)
    faux.enqueue("a long answer " * 20)
    notices: list[tuple[str, str]] = []
    ran: list[bool] = []

    class Plugin:
        @hookimpl
        def session_start(self, event: Any, ctx: ExtensionContext) -> None:
            async def notify(message: str, level: str = "info") -> None:
                notices.append((message, level))

            ctx.ui.notify = notify  # type: ignore[method-assign]

        @hookimpl
        def register_commands(self, register: Any) -> None:
            async def careful(args: str, ctx: CommandContext) -> None:
                ran.append(ctx.is_idle())

            register(Command("careful", careful, idle_only=True))

    async def scenario() -> None:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, Plugin()],
                                             session="memory", agent_dir=tmp_path / "agent")
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.is_streaming:
            await asyncio.sleep(0.005)
        await session.prompt("/careful")
        await task
        await session.prompt("/careful")

    run(scenario())
    assert notices == [("/careful can run when the agent is idle (Esc interrupts)", "warning")]
    assert ran == [True]
