"""``ctx.ui.on_terminal_input`` (a plugin sees raw keys first: consumes or replaces them, and can stop
listening) and ``ctx.ui.get_tools_expanded`` / ``set_tools_expanded`` (agreeing with Ctrl+O), in a
pseudo-terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (the fixture)

pytestmark = pytest.mark.timeout(120)

PLUGIN = '''
import asyncio
from typing import Any

from pi_core import Command, CommandContext, ExtensionContext, hookimpl


class State:
    remove: Any = None


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    def listen(data: str) -> Any:
        if data == "\\x07":  # Ctrl+G: the plugin's, pi never sees it
            asyncio.ensure_future(ctx.ui.notify("ctrl+g seen", "info"))
            return {"consume": True}
        if data == "%":
            return {"data": "percent"}
        return None

    State.remove = ctx.ui.on_terminal_input(listen)


async def stop(args: str, ctx: CommandContext) -> None:
    State.remove()
    await ctx.ui.notify("listener removed", "info")


async def expand(args: str, ctx: CommandContext) -> None:
    before = ctx.ui.get_tools_expanded()
    await ctx.ui.set_tools_expanded(not before)
    await ctx.ui.notify(f"tools expanded: {before} -> {ctx.ui.get_tools_expanded()}", "info")


async def state(args: str, ctx: CommandContext) -> None:
    await ctx.ui.notify(f"tools state: {ctx.ui.get_tools_expanded()}", "info")


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("stop-listening", stop, "remove the input listener"))
    register(Command("expand", expand, "toggle expanded tool output"))
    register(Command("tools-state", state, "report expanded tool output"))
'''


def editor_row(app: Any) -> str:
    return next((row for row in reversed(app.display()) if row.startswith("›")), "")


def test_terminal_input_listener_consumes_replaces_and_stops(running, tmp_path: Path) -> None:  # noqa: F811
    plugin = tmp_path / "listener.py"
    plugin.write_text(PLUGIN)
    app = running(extensions=[str(plugin)])
    app.type("a%b", enter=False)
    app.wait_for(lambda: editor_row(app).rstrip() == "› apercentb")
    app.send("\x15")
    app.send("\x07")
    app.wait_for("ctrl+g seen")
    assert editor_row(app).rstrip() == "›"
    app.type("/stop-listening")
    app.wait_for("listener removed")
    app.type("50%", enter=False)
    app.wait_for(lambda: editor_row(app).rstrip() == "› 50%")
    app.send("\x15")
    quit_app(app)


def test_tools_expanded_follows_the_plugin_and_ctrl_o(running, tmp_path: Path) -> None:  # noqa: F811
    plugin = tmp_path / "listener.py"
    plugin.write_text(PLUGIN)
    app = running(extensions=[str(plugin)])
    app.type("/tools-state")
    app.wait_for("tools state: False")
    app.type("/expand")
    app.wait_for("tools expanded: False -> True")
    app.send("\x0f")  # Ctrl+O collapses again
    app.settle(0.3)
    app.type("/tools-state")
    app.wait_for(lambda: app.text().count("tools state: False") == 2)
    app.send("\x0f")
    app.settle(0.3)
    app.type("/tools-state")
    app.wait_for("tools state: True")
    quit_app(app)
