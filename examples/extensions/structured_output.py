"""Port of pi's ``structured-output`` example: a ``structured_output`` tool whose result ends the run
(``terminate=True``), so a machine-readable answer costs no follow-up model request."""

from __future__ import annotations

from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl


async def structured_output(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    details = {"headline": params["headline"], "summary": params["summary"],
               "actionItems": list(params["actionItems"])}
    return ToolResult.text(f"Saved structured output: {params['headline']}", details=details, terminate=True)


TOOL = Tool(
    name="structured_output",
    label="Structured Output",
    description="Return a final structured answer. Use it as the last action when the user asks for structured "
                "output or a machine-readable summary.",
    parameters={"type": "object", "required": ["headline", "summary", "actionItems"], "properties": {
        "headline": {"type": "string", "description": "Short title for the result"},
        "summary": {"type": "string", "description": "One-paragraph summary"},
        "actionItems": {"type": "array", "items": {"type": "string"},
                        "description": "Concrete next steps or key points"}}},
    execute=structured_output,
    prompt_snippet="Give a final structured answer as a result that ends the run",
    prompt_guidelines=["Call structured_output as the final action when the user asks for structured output.",
                       "After calling structured_output, do not answer again in the same turn."],
)


@hookimpl
def register_tools(register: Any) -> None:
    register(TOOL)
