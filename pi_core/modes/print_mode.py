"""Print mode (``pi -p``): run one prompt, print the final answer on stdout, errors on stderr.

Exit code 0 when the last answer is a normal stop, 1 when the run ended in a model error or was
aborted (pi's users asked for this to be reliable), 143/129 when SIGTERM/SIGHUP stopped it.

The answer is the last assistant message *this run* produced, caught from the event stream as it
ends — not found by looking at the message list afterwards, which compaction rewrites (a compacted
run can end with fewer messages than it started with) and retries trim.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ..ai.types import AssistantMessage
from ..events import MessageEndEvent
from .signals import SignalStop, abort_session

if TYPE_CHECKING:
    from ..runtime.agent_session import AgentSession


def answer_code(answer: AssistantMessage | None) -> int:
    """0 for a normal answer (or none: a command handled the input), 1 for a model error or an abort."""
    return 1 if answer is not None and answer.stop_reason in ("error", "aborted") else 0


class AnswerWatcher:
    """Subscribed to a session, remembers the last assistant message that ended."""

    def __init__(self) -> None:
        self.answer: AssistantMessage | None = None

    def __call__(self, event: Any) -> None:
        if isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            self.answer = event.message


async def prompt_watched(session: AgentSession, prompt: str, images: list[Any] | None) -> tuple[
        AssistantMessage | None, int | None]:
    """Run one prompt with SIGTERM/SIGHUP aborting it; the run's last answer and the signal's exit code."""
    watcher = AnswerWatcher()
    unsubscribe = session.subscribe(watcher)
    run = asyncio.ensure_future(session.prompt(prompt, images, source="print"))
    try:
        with SignalStop(abort_session(session, run)) as stop:
            try:
                await run
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if stop.code is None or current is not None and current.cancelling():
                    raise
                # the run ignored the abort (a handler that never returns) and was cancelled: stop here
    finally:
        if not run.done():
            run.cancel()
        unsubscribe()
    return watcher.answer, stop.code


async def run_print(session: AgentSession, prompt: str, *, images: list[Any] | None = None,
                    out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    answer, signalled = await prompt_watched(session, prompt, images)
    if signalled is not None:
        return signalled
    if answer is None:
        return 0
    if answer.stop_reason in ("error", "aborted"):
        err.write(f"{answer.error_message or answer.stop_reason}\n")
        return 1
    text = answer.text()
    if text:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


__all__ = ["AnswerWatcher", "answer_code", "prompt_watched", "run_print"]
