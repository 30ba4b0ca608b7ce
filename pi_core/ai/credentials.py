"""API keys from environment variables, and pi's config-value forms (``auth.json`` itself is
:mod:`pi_core.ai.auth.store`).

A config value (``apiKey`` and header values in ``models.json``, ``key`` in ``auth.json``) is one of:
``!command`` (the command's stdout, trimmed; run once per process, 10 s timeout), ``$VAR`` or ``${VAR}``
(that environment variable), the name of a set environment variable written in capitals (pi 0.58's
form, still accepted), or a literal. ``$!`` at the start escapes a literal ``!``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any


_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_ENV_REF = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_command_cache: dict[str, str | None] = {}


def agent_dir() -> Path:
    """The agent dir (``PI_CODING_AGENT_DIR``, default ``~/.pi/agent``)."""
    try:
        from ..paths import agent_dir as shared
    except ImportError:  # pragma: no cover - older trees without pi_core.paths
        env = os.environ.get("PI_CODING_AGENT_DIR")
        return Path(os.path.expanduser(env)).absolute() if env else Path.home() / ".pi" / "agent"
    return shared()


def _run_command(command: str) -> str | None:
    if command not in _command_cache:
        try:
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=10,
                                  stdin=subprocess.DEVNULL)
            _command_cache[command] = done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None
        except (OSError, subprocess.TimeoutExpired):
            _command_cache[command] = None
    return _command_cache[command]


def resolve_config_value(value: Any, env: Mapping[str, str] | None = None) -> str | None:
    """The value a config string stands for (see the module docstring); ``None`` if it resolves to nothing."""
    if value is None:
        return None
    text = str(value)
    environ = os.environ if env is None else env
    if text.startswith("$!"):
        return text[1:]
    if text.startswith("!"):
        return _run_command(text[1:])
    ref = _ENV_REF.match(text)
    if ref:
        return environ.get(ref.group(1) or ref.group(2)) or None
    if _ENV_NAME.match(text) and environ.get(text):
        return environ[text]
    return text or None


def env_api_key(names: list[str] | tuple[str, ...] | str | None,
                env: Mapping[str, str] | None = None) -> str | None:
    """The first set environment variable of ``names``."""
    if not names:
        return None
    environ = os.environ if env is None else env
    for name in [names] if isinstance(names, str) else names:
        value = environ.get(name)
        if value:
            return value
    return None


__all__ = ["agent_dir", "env_api_key", "resolve_config_value"]
