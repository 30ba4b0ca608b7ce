"""Where sessions live: ``<agent dir>/sessions/--<encoded cwd>--/<timestamp>_<id>.jsonl``, as pi."""

from __future__ import annotations

import os
from pathlib import Path

from pi_core.paths import SESSION_DIR_ENV, expand_path, sessions_dir

from .ids import file_timestamp


def encode_cwd(cwd: Path | str) -> str:
    """pi's folder name for a working directory: ``/path/to/project`` → ``--path-to-project--``."""
    text = str(cwd)
    if text[:1] in ("/", "\\"):
        text = text[1:]
    for char in "/\\:":
        text = text.replace(char, "-")
    return f"--{text}--"


def default_session_dir(cwd: Path | str) -> Path:
    """``<agent dir>/sessions/--<encoded cwd>--`` (not created)."""
    return sessions_dir() / encode_cwd(expand_path(cwd))


def resolve_session_dir(cwd: Path | str, session_dir: Path | str | None = None) -> Path:
    """``session_dir`` if given, else ``$PI_CODING_AGENT_SESSION_DIR``, else the default for ``cwd``.

    A custom directory holds the sessions of every working directory side by side; listings filter
    it by the ``cwd`` recorded in each header.
    """
    if session_dir:
        return expand_path(session_dir)
    env = os.environ.get(SESSION_DIR_ENV)
    if env:
        return expand_path(env)
    return default_session_dir(cwd)


def session_file_name(iso_timestamp: str, session_id: str) -> str:
    return f"{file_timestamp(iso_timestamp)}_{session_id}.jsonl"


__all__ = ["default_session_dir", "encode_cwd", "resolve_session_dir", "session_file_name"]
