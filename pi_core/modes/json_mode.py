"""JSON mode (``pi --mode json``): the session header, then every event as one JSON line.

The exit code follows the last answer (0 normal, 1 model error or abort) — pi exits 0 here even on
errors, and its users asked for the fix.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from .event_json import dumps
from .print_mode import exit_code_for

if TYPE_CHECKING:
    from ..runtime.agent_session import AgentSession


async def run_json(session: AgentSession, prompt: str, *, images: list[Any] | None = None, header: bool = True,
                   out: TextIO = sys.stdout) -> int:
    if header:
        data = session.session.get_header().to_json()
        out.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")

    def write(event: Any) -> None:
        out.write(dumps(event) + "\n")
        out.flush()

    unsubscribe = session.subscribe(write)
    try:
        await session.prompt(prompt, images, source="print")
    finally:
        unsubscribe()
    return exit_code_for(session)


__all__ = ["run_json"]
