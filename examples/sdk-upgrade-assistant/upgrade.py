"""Embed pi: upgrade a code directory to a new SDK with docs-lookup and build tools (see README.md)."""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_core import Tool, ToolCapabilities, ToolContext, ToolResult, create_agent_session, hookimpl, run_process

PROMPT = ("Upgrade the code in this directory to the new SDK. Look up every API you change with "
          "lookup_docs, edit the files, then run_build until it passes. Finish with a short summary.")


class UpgradePlugin:
    """A plugin object: the host passes it to create_agent_session(plugins=[...])."""

    __name__ = "upgrade-assistant"

    def __init__(self, docs: Path, build_command: str) -> None:
        self.docs = docs
        self.build_command = build_command

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool(
            name="lookup_docs", description="Search the new SDK's documentation; returns matching sections.",
            parameters={"type": "object", "required": ["query"],
                        "properties": {"query": {"type": "string", "description": "Words to look for"}}},
            execute=self.lookup_docs, capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
            prompt_snippet="lookup_docs: search the new SDK's documentation"))
        register(Tool(
            name="run_build", description="Run the project's build and tests; returns output and exit code.",
            parameters={"type": "object", "properties": {}},
            execute=self.run_build, capabilities=ToolCapabilities(executes=True),
            prompt_snippet="run_build: build and test the project"))

    def lookup_docs(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        words = [w.lower() for w in re.findall(r"\w+", params["query"])]
        hits = []
        for path in sorted(self.docs.rglob("*.md")):
            for section in re.split(r"\n(?=#)", path.read_text(encoding="utf-8", errors="replace")):
                if words and all(w in section.lower() for w in words):
                    hits.append(f"--- {path.relative_to(self.docs)}\n{section.strip()}")
        return ToolResult.text("\n\n".join(hits[:5]) or f"no section mentions {params['query']!r}",
                               details={"matches": len(hits)})

    async def run_build(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await run_process(shlex.split(self.build_command), cwd=ctx.cwd, timeout=600, signal=ctx.signal)
        text = f"{result.stdout}{result.stderr}\n[exit code {result.exit_code}]"
        return ToolResult.text(text, details={"exit_code": result.exit_code}, is_error=result.exit_code != 0)


async def upgrade(code: Path, docs: Path, *, model: Any = None, build: str = "python -m pytest -q",
                  plugins: Sequence[Any] = (), session: Any = "new") -> Any:
    """Run one upgrade; returns the session (its ``messages`` hold the conversation)."""
    agent = await create_agent_session(cwd=code, model=model, session=session,
                                       tools=["read", "edit", "write", "lookup_docs", "run_build"],
                                       plugins=[UpgradePlugin(docs, build), *plugins])
    agent.subscribe(_show)
    try:
        await agent.prompt(PROMPT)
    finally:
        await agent.close()
    return agent


def _show(event: Any) -> None:
    if event.type == "tool_execution_start":
        print(f"→ {event.tool_name} {event.args}")
    elif event.type == "message_end" and getattr(event.message, "role", "") == "assistant" and event.message.text():
        print(event.message.text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("code", type=Path)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--build", default="python -m pytest -q")
    args = parser.parse_args()
    asyncio.run(upgrade(args.code.resolve(), args.docs.resolve(), model=args.model, build=args.build))


if __name__ == "__main__":
    main()
