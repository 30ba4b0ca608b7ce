"""A session's active branch as a JSONL file of its own (``/export file.jsonl``), as pi writes it.

The file is a session: pi's header (``type``, ``version``, ``id``, ``timestamp`` of the export, ``cwd``),
then every entry of the active branch, root first, each ``parentId`` pointing at the entry before it —
other branches are left out, so the copy is a straight line. ``/import`` (or ``pi --session``) opens it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .entries import CURRENT_SESSION_VERSION
from .jsonfmt import dumps


def serialize_branch(manager: Any) -> str:
    """The JSONL text of ``manager``'s active branch (see the module docstring)."""
    now = datetime.now(UTC)
    header = {"type": "session", "version": CURRENT_SESSION_VERSION, "id": manager.session_id,
              "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
              "cwd": str(manager.cwd)}
    lines = [header]
    parent: str | None = None
    for entry in manager.get_raw_branch():
        lines.append({**entry, "parentId": parent})
        parent = entry.get("id", parent)
    return "".join(dumps(line) + "\n" for line in lines)  # as pi writes lines (a non-finite number: null)


def export_branch_jsonl(manager: Any, target: Path | str) -> Path:
    """Write ``manager``'s active branch to ``target`` (folders created; an existing file is replaced);
    returns the path written."""
    path = Path(target).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(serialize_branch(manager), encoding="utf-8")
    return path


__all__ = ["export_branch_jsonl", "serialize_branch"]
