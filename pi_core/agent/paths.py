"""How tools turn a path argument into a file: the same rules for every built-in tool."""

from __future__ import annotations

import os
import re
from pathlib import Path

# Models sometimes copy paths with non-breaking or other exotic spaces; files never have them.
_EXOTIC_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def resolve_tool_path(path: str, cwd: Path) -> Path:
    """Strip one leading ``@``, normalise exotic spaces, expand ``~``, resolve against ``cwd``."""
    if path.startswith("@"):
        path = path[1:]
    path = _EXOTIC_SPACES.sub(" ", path)
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser(path)
    p = Path(path)
    if not p.is_absolute():
        p = cwd / p
    return Path(os.path.normpath(p))


__all__ = ["resolve_tool_path"]
