"""What the terminal knows about slash commands: recognising ``/name args``, completing names, the keys
``/help`` lists, and the clipboard and model helpers the application keys share.

The commands themselves are plugins (``plugins/commands/``), registered through ``register_commands``
like any other plugin's, and run by the session (``AgentSession.prompt``), which also reports an
unknown ``/word``. Where a command needs the terminal's own views (the session picker, the tree
navigator, the model list) it asks ``ctx.ui`` (:class:`~.ui.InteractiveUI`).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

KEYS = (
    ("Enter", "send (while the agent works: queue as steering)"),
    ("Alt+Enter", "queue as follow-up while the agent works; otherwise a new line"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Esc, Ctrl+C", "interrupt the agent (queued messages come back into the editor)"),
    ("Ctrl+C", "clear the editor; twice on an empty editor: exit"),
    ("Ctrl+D", "exit (on an empty editor)"),
    ("Tab", "complete /commands and @file paths"),
    ("Up/Down", "history"),
)


def parse(text: str) -> tuple[str, str] | None:
    """``"/name args"`` → ``("name", "args")``; ``None`` for text that is not a command."""
    if not text.startswith("/") or text.startswith("//") or len(text) < 2 or text[1].isspace():
        return None
    name, _, args = text[1:].partition(" ")
    return name, args.strip()


def all_commands(session: AgentSession) -> list[tuple[str, str]]:
    """``(name, description)`` of every command (pi's, then plugins'), then templates and skills (unless
    the ``enableSkillCommands`` setting is off: pi then leaves skills out of the menu; typing
    ``/skill:name`` still works)."""
    settings = getattr(session, "settings", None)
    skills = getattr(settings, "enable_skill_commands", True) is not False
    return [(c.name, c.description or "(plugin command)") for c in session.get_commands(include_builtin=True)
            if skills or c.source != "skill"]


def last_answer(session: AgentSession) -> str:
    for message in reversed(session.messages):
        if getattr(message, "role", None) == "assistant" and message.text():
            return message.text()
    return ""


def copy_to_clipboard(text: str) -> str | None:
    """Copy with the platform's clipboard program, else the terminal's OSC 52; how it was done, or None."""
    candidates = [["pbcopy"], ["wl-copy"], ["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"],
                  ["clip.exe"]]
    for argv in candidates:
        if shutil.which(argv[0]) is None or (argv[0] in ("xclip", "xsel") and not os.environ.get("DISPLAY")):
            continue
        try:
            subprocess.run(argv, input=text.encode(), check=True, timeout=5, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            continue
        # as pi: over SSH (or with PI_CLIPBOARD_OSC52=1) the terminal gets it too, for the remote user's clipboard
        remote = os.environ.get("PI_CLIPBOARD_OSC52") == "1" or bool(os.environ.get("SSH_CONNECTION")
                                                                       or os.environ.get("SSH_TTY"))
        if remote and _osc52(text):
            return f"with {argv[0]} and through the terminal (OSC 52)"
        return f"with {argv[0]}"
    if _osc52(text):
        return "through the terminal (OSC 52; not every terminal supports it)"
    return None


def _osc52(text: str) -> bool:
    """Send ``text`` to the terminal's clipboard (OSC 52) when stdout is one; ``PI_NO_OSC52`` turns it off."""
    if not sys.stdout.isatty() or os.environ.get("PI_NO_OSC52") is not None:
        return False
    sys.stdout.write(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")
    sys.stdout.flush()
    return True


def available_models(session: AgentSession) -> list[Any]:
    """Models of the session's registry (with usable credentials first), else of the providers' lists."""
    registry = session.models
    models = list(registry.get_models())
    try:
        authed = list(registry.available_models())
    except Exception:  # a broken credentials file must not break the command
        authed = []
    models = authed or models
    current = session.model
    if not any((m.provider, m.id) == (current.provider, current.id) for m in models):
        models.insert(0, current)
    return models


__all__ = ["KEYS", "all_commands", "available_models", "copy_to_clipboard", "last_answer", "parse"]
