"""A plugin command's argument completions (pi's ``getArgumentCompletions``) in the real ``pi`` on a terminal:
Tab after ``/commands `` offers the sources the commands example declares, and choosing one fills it in; an
``async def`` completer is awaited (a failing one is reported once and offers nothing)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from ptyterm import PtyApp

from pi_core.testing import FakeProviderServer

pytestmark = pytest.mark.timeout(120)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "commands.py"

ASYNC_COMPLETER = '''
import asyncio
from pi_core import Command, hookimpl

TARGETS = (("staging", "the test servers"), ("production", "the live servers"))


async def complete_target(typed):
    await asyncio.sleep(0.05)  # as a completer that asks a server would
    return [(name, about) for name, about in TARGETS if name.startswith(typed)]


async def broken(typed):
    await asyncio.sleep(0)
    raise RuntimeError("the server is down")


async def deploy(args, ctx):
    await ctx.ui.notify(f"deploying to {args}", "info")


@hookimpl
def register_commands(register):
    register(Command("deploy", deploy, "deploy somewhere", argument_completions=complete_target))
    register(Command("rollback", deploy, "roll back", argument_completions=broken))
'''


def start(extension: Path, cwd: Path, tmp_path: Path) -> PtyApp:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "PI_NO_OSC52": "1"})
    app = PtyApp([sys.executable, "-W", "always::RuntimeWarning", "-m", "pi_core", "-e", str(extension)], env=env,
                 cwd=cwd, stderr=tmp_path / "stderr.txt")
    app.wait_for(lambda: "fake-model" in "\n".join(app.display()), 60)  # the editor and its footer are up
    app.settle(0.2)
    return app


def menu_shows(app: PtyApp, *words: str) -> bool:
    """The menu under the editor line lists ``words`` (what Tab then chooses from)."""
    rows = app.display()
    editor = max((i for i, row in enumerate(rows) if row.startswith("› ")), default=None)
    return editor is not None and all(any(word in row for row in rows[editor + 1:]) for word in words)


def editor_line(app: PtyApp) -> str:
    return next((row for row in reversed(app.display()) if row.startswith("› ")), "").rstrip()


def test_tab_offers_a_commands_arguments(fake_provider_server: FakeProviderServer, pi_project: Path,
                                        pi_agent_dir: Path, tmp_path: Path) -> None:
    app = start(EXAMPLE, pi_project, tmp_path)
    try:
        app.type("/commands ", enter=False)
        app.wait_for(lambda: menu_shows(app, "extension", "Extensions", "Prompts", "Skills"), 30)
        app.send("\x15")  # Ctrl+U: clear the line
        app.type("/commands sk", enter=False)
        # the line and the menu in one frame: the completion for "sk" is done (a Tab sooner would race it)
        app.wait_for(lambda: editor_line(app) == "› /commands sk" and menu_shows(app, "skill", "Skills"), 30)
        app.send("\t")
        app.wait_for(lambda: editor_line(app) == "› /commands skill", 30)
    finally:
        app.close()


def test_an_async_completer_is_awaited(fake_provider_server: FakeProviderServer, pi_project: Path,
                                       pi_agent_dir: Path, tmp_path: Path) -> None:
    extension = tmp_path / "deploy_ext.py"
    extension.write_text(ASYNC_COMPLETER)
    app = start(extension, pi_project, tmp_path)
    try:
        app.type("/deploy ", enter=False)
        app.wait_for(lambda: menu_shows(app, "staging", "the test servers", "production", "the live servers"), 30)
        app.send("\x15")
        app.type("/deploy pro", enter=False)
        app.wait_for(lambda: editor_line(app) == "› /deploy pro" and menu_shows(app, "production")
                     and not menu_shows(app, "staging"), 30)
        app.send("\t")
        app.wait_for(lambda: editor_line(app) == "› /deploy production", 30)
        app.send("\x15")
        app.type("/rollback ", enter=False)
        app.wait_for("/rollback: argument completions failed: the server is down", 30)
        # the failure is a notice; the text stays (waited for: the notice's row is printed over a redraw)
        app.wait_for(lambda: editor_line(app) == "› /rollback", 30)
    finally:
        app.close()
    assert "never awaited" not in (tmp_path / "stderr.txt").read_text()
