"""The program the interactive tests run in a pseudo-terminal: ``pi``'s interactive mode on a session
with scripted model turns (faux provider) and a test plugin.

    python drive_app.py SCRIPT.json

SCRIPT: ``{"cwd", "agent_dir", "session_dir", "turns": [...], "delta_delay": s, "initial": "...", "thinking",
"session": "new" | path, "extensions": [paths], "extra_tools": [names]}``.
A turn is ``{"text", "thinking", "tools": [[name, args]], "delta_delay"}``;
when the turns run out the model answers ``echo: <last user text>``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pi_core import Command, Tool, ToolResult, hookimpl
from pi_core.ai import FauxProvider, Model, faux_text, faux_thinking, faux_tool_call, faux_turn, last_user_text
from pi_core.modes.interactive import create_ui, run_interactive
from pi_core.sdk import create_agent_session


class TestPlugin:
    __name__ = "interactive-test"

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    @hookimpl
    def register_tools(self, register: Any) -> None:
        async def slow(params: dict[str, Any], ctx: Any) -> ToolResult:
            await asyncio.wait_for(ctx.signal.wait(), 60)
            return ToolResult.text("slow tool was interrupted", is_error=True)

        register(Tool(name="slow", description="waits until aborted", parameters={"type": "object"}, execute=slow))

    @hookimpl
    def register_commands(self, register: Any) -> None:
        async def pick(args: str, ctx: Any) -> None:
            choice = await ctx.ui.select("Pick a fruit", ["apple", "banana", "cherry"])
            await ctx.ui.notify(f"picked {choice}", "info")

        async def ask(args: str, ctx: Any) -> None:
            answer = await ctx.ui.input("Your name", "type it")
            ok = await ctx.ui.confirm("Really?", f"name is {answer}")
            await ctx.ui.set_status("test", f"name={answer} ok={ok}")
            await ctx.ui.notify(f"hello {answer} ({ok})", "warning")

        async def widget(args: str, ctx: Any) -> None:
            await ctx.ui.set_widget("todo", ["TODO: write docs", "TODO: ship"])
            await ctx.ui.set_widget("hint", ["below the editor"], placement="belowEditor")
            await ctx.ui.set_editor_text("prefilled by a plugin")
            await ctx.ui.notify(f"editor had {ctx.ui.get_editor_text()!r}", "info")

        async def nap(args: str, ctx: Any) -> None:
            await ctx.ui.notify("napping", "info")
            await asyncio.sleep(float(args or 1))
            await ctx.ui.notify("nap over", "info")

        register(Command("nap", nap, "sleep for a while (the editor is away at first)"))
        register(Command("widget", widget, "show widgets, prefill the editor"))
        register(Command("pick", pick, "pick a fruit (select dialog)"))
        register(Command("ask", ask, "ask for a name (input + confirm)"))

    @hookimpl
    def session_shutdown(self, event: Any, ctx: Any) -> None:
        with self.marker.open("a") as handle:
            handle.write(f"shutdown {event.reason}\n")


def _thinking(script: dict[str, Any]) -> str | None:
    """The scripted level; a new session starts with thinking off (the screens were drawn for that), a
    resumed one keeps its own."""
    return script.get("thinking", "off" if script.get("session", "new") == "new" else None)


def _turn(spec: dict[str, Any]) -> Any:
    blocks: list[Any] = []
    if spec.get("thinking"):
        blocks.append(faux_thinking(spec["thinking"]))
    if spec.get("text"):
        blocks.append(faux_text(spec["text"]))
    for name, args in spec.get("tools", []):
        blocks.append(faux_tool_call(name, args))
    return faux_turn(*blocks, delta_delay=spec.get("delta_delay"))


async def main(path: str) -> int:
    script = json.loads(Path(path).read_text())
    models = [Model(id="faux-1", name="Faux One", api="x", provider="faux", reasoning=True, context_window=200_000),
              Model(id="faux-2", name="Faux Two", api="x", provider="faux", reasoning=False)]
    faux = FauxProvider("faux", models=models, delta_delay=script.get("delta_delay", 0.002), seed=1,
                        responder=lambda context, options: f"echo: {last_user_text(context)}")
    faux.enqueue(*(_turn(t) for t in script.get("turns", [])))
    plugin = TestPlugin(Path(script["agent_dir"]) / "shutdown.log")
    session = await create_agent_session(
        script["cwd"], model=faux.model, plugins=[faux, plugin], session=script.get("session", "new"),
        session_dir=script["session_dir"], agent_dir=script["agent_dir"], mode="tui", ui=create_ui(),
        autoload=False, tools=["read", "bash", "ls", "slow", *script.get("extra_tools", [])],
        extension_paths=script.get("extensions", []), thinking_level=_thinking(script))
    return await run_interactive(session, initial_prompt=script.get("initial"))


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
