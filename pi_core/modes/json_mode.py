"""JSON mode (``pi --mode json``): the session header, then every event as one JSON line.

The exit code follows the run's last answer (0 normal, 1 model error or abort) — pi exits 0 here even
on errors, and its users asked for the fix — or is 143/129 when SIGTERM/SIGHUP stopped the run.

stdout belongs to the stream: the real stdout is taken over for it, and ``sys.stdout`` and file
descriptor 1 point at stderr from then on, so a plugin's ``print()`` cannot corrupt it. When the reader
goes away (a closed pipe), the run is aborted and pi exits 1.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from .event_json import dumps
from .print_mode import answer_code, prompt_watched

if TYPE_CHECKING:
    from ..runtime.agent_session import AgentSession


class _Stream:
    """Writes lines to the protocol stdout; after a broken pipe, aborts the run once and drops the rest."""

    def __init__(self, out: TextIO, session: AgentSession) -> None:
        self.out, self.session = out, session
        self.broken = False

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.out.write(text + "\n")
            self.out.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.broken = True
            self.session.abort_bash()
            asyncio.ensure_future(self.session.abort())


async def run_json(session: AgentSession, prompt: str, *, images: list[Any] | None = None, header: bool = True,
                   out: TextIO | None = None) -> int:
    if out is None:
        from .protocol_stdout import protocol_text_stdout

        out = protocol_text_stdout()
    stream = _Stream(out, session)
    if header:
        data = session.session.get_header().to_json()
        stream.line(json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    def write(event: Any) -> None:
        try:
            text = dumps(event)
        except (TypeError, ValueError, RecursionError) as exc:  # one odd event must not end the run
            print(f"pi: cannot write {getattr(event, 'type', event)!r} as JSON: {exc!r}", file=sys.stderr)
            return
        stream.line(text)

    unsubscribe = session.subscribe(write)
    try:
        answer, signalled = await prompt_watched(session, prompt, images)
    finally:
        unsubscribe()
    if signalled is not None:
        return signalled
    if stream.broken:
        return 1
    return answer_code(answer)


__all__ = ["run_json"]
