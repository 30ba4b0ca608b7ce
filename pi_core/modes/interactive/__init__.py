"""The interactive terminal mode (``pi`` without ``-p``/``--mode``).

``run_interactive(session)`` is what the CLI calls; ``create_ui()`` makes the ``ctx.ui`` to build the
session with, so that plugins' start-up notices show once the screen is up. Importing this package
is cheap: prompt_toolkit is imported when the mode starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession


async def run_interactive(session: AgentSession, *, initial_prompt: str | None = None, stdin: Any = None,
                          stdout: Any = None) -> int:
    """Run the interactive mode until the user quits; the session is closed when this returns."""
    from .app import run_interactive as run

    return await run(session, initial_prompt=initial_prompt, stdin=stdin, stdout=stdout)


def create_ui(stdout: Any = None) -> Any:
    """An interactive :class:`pi_core.UI` for ``create_agent_session(ui=...)``."""
    from .app import create_ui as make

    return make(stdout)


__all__ = ["create_ui", "run_interactive"]
