"""Print mode (``pi -p``): run one prompt, print the final answer on stdout, errors on stderr.

Exit code 0 when the last answer is a normal stop, 1 when the run ended in a model error or was
aborted (pi's users asked for this to be reliable).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

from ..ai.types import AssistantMessage

if TYPE_CHECKING:
    from ..runtime.agent_session import AgentSession


def last_answer(session: AgentSession) -> AssistantMessage | None:
    return next((m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None)


def exit_code_for(session: AgentSession) -> int:
    answer = last_answer(session)
    return 1 if answer is not None and answer.stop_reason in ("error", "aborted") else 0


async def run_print(session: AgentSession, prompt: str, *, images: list[Any] | None = None,
                    out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    before = len(session.messages)
    await session.prompt(prompt, images, source="print")
    answer = last_answer(session) if len(session.messages) > before else None
    if answer is None:
        return 0
    if answer.stop_reason in ("error", "aborted"):
        err.write(f"{answer.error_message or answer.stop_reason}\n")
        return 1
    text = answer.text()
    if text:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


__all__ = ["exit_code_for", "last_answer", "run_print"]
