"""An example pi plugin. Everything it uses comes from the public API, ``pi_core``."""

from __future__ import annotations

import re
from typing import Any

from pi_core import Block, Tool, ToolCapabilities, ToolContext, ToolError, ToolResult, Toolset, hookimpl

DANGEROUS = [re.compile(r"\brm\s+-[a-z]*r[a-z]*f?\s+/(\s|$)"), re.compile(r"\bgit\s+push\b.*--force\b")]


async def count_words(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = ctx.resolve(params["path"])
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ToolError(f"cannot read {params['path']}: {exc.strerror}") from exc
    words = len(text.split())
    return ToolResult.text(f"{words} words", details={"words": words, "path": str(path)})


WORD_COUNT = Tool(
    name="word_count",
    description="Count the words in a text file.",
    parameters={"type": "object", "required": ["path"],
                "properties": {"path": {"type": "string", "description": "File to count, relative to the project"}}},
    execute=count_words,
    capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
    prompt_snippet="word_count: count the words in a file",
)


@hookimpl
def register_tools(register: Any) -> None:
    register(WORD_COUNT)


@hookimpl
def register_toolsets(register: Any) -> None:
    register(Toolset("writing", ["read", "write", "word_count"], "Prose work: read, write, count words."))


@hookimpl
def before_tool_call(event: Any) -> Block | None:
    if event.tool_name != "bash":
        return None
    command = str(event.arguments.get("command", ""))
    for pattern in DANGEROUS:
        if pattern.search(command):
            return Block(f"refused by pi-example-plugin: {command!r} matches {pattern.pattern!r}")
    return None
