"""``<agent dir>/mcp.log``: what MCP servers print on stderr and send as log notifications.

Server output never reaches the terminal interface or the RPC stream. Lines are
``<time> [<server>] <level> <logger>: <message>`` (pi's format; stderr lines have the level ``stderr``).
Several pi processes may share the file, so each line is one append. Past 5 MB it moves to ``mcp.log.1``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

MAX_LOG_BYTES = 5 * 1024 * 1024
STDERR_TAIL_CHARS = 2000


def format_line(server: str, level: str, data: Any, logger: str | None = None) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    name = f" {logger}:" if logger else ""
    return f"{stamp} [{server}] {level}{name} {text.rstrip().replace(chr(10), chr(10) + '    ')}\n"


class ServerLog:
    """Appends lines to one file; write errors are ignored (logging must never break a tool)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._size: int | None = None

    def write(self, server: str, level: str, data: Any, logger: str | None = None) -> None:
        line = format_line(server, level, data, logger).encode("utf-8", "replace")
        try:
            if self._size is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._size = self._current_size()
            if self._size > MAX_LOG_BYTES:
                if self._current_size() > MAX_LOG_BYTES:  # another process may have rotated it
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                self._size = self._current_size()
            with open(self.path, "ab") as handle:
                handle.write(line)
            self._size += len(line)
        except OSError:
            pass

    def _current_size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0


class StderrTail:
    """The end of a server's stderr, kept to explain a failed connection."""

    def __init__(self) -> None:
        self._chunks: deque[str] = deque()
        self._chars = 0

    def add(self, line: str) -> None:
        self._chunks.append(line)
        self._chars += len(line)
        while self._chars > STDERR_TAIL_CHARS and len(self._chunks) > 1:
            self._chars -= len(self._chunks.popleft())

    def text(self) -> str:
        return "".join(self._chunks).strip()[-STDERR_TAIL_CHARS:]

    def clear(self) -> None:
        self._chunks.clear()
        self._chars = 0
