"""A minimal scripted stream function for loop tests: the loop's contract without any provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pi_core import AbortSignal, AssistantMessage, Model, TextContent, ToolCall

MODEL = Model(id="scripted", api="scripted", provider="scripted")


def text(value: str) -> dict[str, Any]:
    return {"content": [TextContent(text=value)], "stop": "stop"}


def calls(*items: tuple[str, dict[str, Any]], stop: str = "toolUse") -> dict[str, Any]:
    return {"content": [ToolCall(id=f"call_{i}_{name}", name=name, arguments=args) for i, (name, args) in
                        enumerate(items)], "stop": stop}


@dataclass
class Script:
    turns: list[dict[str, Any]]
    delay: float = 0.0
    contexts: list[Any] = field(default_factory=list)

    async def __call__(self, model: Model, context: Any, *, signal: AbortSignal, **options: Any):  # type: ignore[no-untyped-def]
        self.contexts.append(context)
        turn = self.turns.pop(0) if self.turns else text("(script exhausted)")
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield SimpleNamespace(type="start", partial=message)
        for block in turn["content"]:
            message.content.append(block)
            yield SimpleNamespace(type="text_delta" if isinstance(block, TextContent) else "toolcall_end",
                                  partial=message)
            if self.delay:
                try:
                    await asyncio.wait_for(signal.wait(), self.delay)
                except asyncio.TimeoutError:
                    pass
            if signal.aborted:
                message.stop_reason, message.error_message = "aborted", "Request was aborted"
                yield SimpleNamespace(type="error", message=message)
                return
        message.stop_reason = turn["stop"]
        yield SimpleNamespace(type="done", message=message)
