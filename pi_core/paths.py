"""Where pi keeps its files: the agent dir (``~/.pi/agent`` unless ``PI_CODING_AGENT_DIR`` says otherwise).

Shared by every part of pi_core, and the same rules as the TypeScript pi, so both programs use one
directory.
"""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def expand_path(path: str | os.PathLike[str]) -> Path:
    """``~`` expanded and made absolute, without following symlinks (as pi's ``resolvePath``)."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path))))


def agent_dir() -> Path:
    """The agent dir: ``$PI_CODING_AGENT_DIR`` if set and non-empty, else ``~/.pi/agent``."""
    env = os.environ.get(AGENT_DIR_ENV)
    return expand_path(env) if env else Path.home() / ".pi" / "agent"


def sessions_dir() -> Path:
    """The root of the per-project session folders: ``<agent dir>/sessions``."""
    return agent_dir() / "sessions"


__all__ = ["AGENT_DIR_ENV", "SESSION_DIR_ENV", "agent_dir", "expand_path", "sessions_dir"]
