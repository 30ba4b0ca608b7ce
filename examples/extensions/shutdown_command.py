"""Port of pi's ``shutdown-command`` example: ``/quit`` and a ``finish_and_exit`` tool end pi cleanly
through ``ctx.shutdown()`` (a tool's request waits until the run is over, so the model still answers)."""

from __future__ import annotations

from typing import Any

from pi_core import Command, CommandContext, Tool, ToolContext, ToolResult, hookimpl


async def quit_command(args: str, ctx: CommandContext) -> None:
    ctx.shutdown()


async def finish_and_exit(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    assert ctx.session is not None  # tools always run inside a session here
    ctx.session.shutdown()
    return ToolResult.text("Shutdown requested. Exiting after this response.")


async def deploy_and_exit(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    environment = str(params["environment"])
    ctx.update(ToolResult.text(f"Deploying to {environment}..."))
    ctx.update(ToolResult.text("Deployment complete, exiting..."))
    assert ctx.session is not None
    ctx.session.shutdown()
    return ToolResult.text("Done! Shutdown requested.", details={"environment": environment})


@hookimpl
def register_commands(register: Any) -> None:
    register(Command("quit", quit_command, "Exit pi cleanly"))


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool(name="finish_and_exit", label="Finish and Exit", description="Complete a task and exit pi",
                  parameters={"type": "object", "properties": {}}, execute=finish_and_exit))
    register(Tool(name="deploy_and_exit", label="Deploy and Exit", description="Deploy the application and exit pi",
                  parameters={"type": "object", "required": ["environment"], "properties": {
                      "environment": {"type": "string", "description": "Target environment (production, staging)"}}},
                  execute=deploy_and_exit))
