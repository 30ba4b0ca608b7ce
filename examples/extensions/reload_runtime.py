"""Port of pi's ``reload-runtime`` example: ``/reload-runtime`` reloads extensions, skills, prompt templates,
themes and context files (``ctx.reload()``, a command's power), and a ``reload_runtime`` tool lets the model
ask for the same: a tool cannot reload while the agent runs, so it records the request and ends the run
(``terminate=True``); once pi has settled, ``agent_settled`` sends ``/reload-runtime`` as if typed, which runs
the command."""

from __future__ import annotations

from typing import Any

from pi_core import AgentSettledEvent, Command, CommandContext, ExtensionContext, Tool, ToolContext, ToolResult, hookimpl

requested = {"reload": False}


async def reload_runtime(args: str, ctx: CommandContext) -> None:
    await ctx.reload()


async def request_reload(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    requested["reload"] = True
    return ToolResult.text("Reload requested. Pi reloads after this response.", details={}, terminate=True)


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("reload-runtime", reload_runtime, "Reload extensions, skills, prompts, themes, and context files"))


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="reload_runtime", label="Reload Runtime",
                  description="Reload extensions, skills, prompts, themes, and context files",
                  parameters={"type": "object", "properties": {}}, execute=request_reload))


@hookimpl
def agent_settled(event: AgentSettledEvent, ctx: ExtensionContext) -> None:
    if not requested["reload"]:
        return
    requested["reload"] = False
    # runs once every settled handler is done, while idle; expanded like typed input, so it is the command
    ctx.send_user_message("/reload-runtime", expand_prompt_templates=True)
