"""``/new`` and ``/resume``: continue in another session file.

The session object stays the same (``AgentSession.new_session`` / ``switch_session`` rebind it to the
other file, asking the plugins first and running ``session_shutdown`` / ``session_start``); this
module only turns their answers into what the interactive mode shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class SwitchCancelled(Exception):
    """A plugin vetoed the switch."""


async def switch_session(session: Any, target: Path | None, reason: str) -> Any:
    """Move ``session`` to a new file (``target`` ``None``) or to ``target``; returns the session.

    Raises :class:`SwitchCancelled` when a plugin said no (``session_before_switch``)."""
    if target is not None:
        from pi_core import SessionManager

        SessionManager.open(target, read_only=True).close()  # a broken file fails here, before anything changes
        switched = await session.switch_session(target)
    else:
        switched = await session.new_session()
    if not switched:
        raise SwitchCancelled("a plugin cancelled the switch (session_before_switch)")
    return session


__all__ = ["SwitchCancelled", "switch_session"]
