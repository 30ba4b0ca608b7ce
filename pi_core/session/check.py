"""``pi session check FILE``: what is wrong with a session file, and ``--repair`` for what can be mended.

Reading is lenient (a bad line or entry is skipped with a warning and kept on disk); this says what
was skipped and why, line by line. Repairing writes a backup first (``<file>.bak-<time>``), then a
new file without the lines that are not JSON objects (and without a torn last line or a leading BOM),
their children linked to the removed line's parent where its start names one. Entries that are JSON
but do not fit pi's format are reported and kept: reading skips them, and they may matter to the
program that wrote them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .entries import _session_entry
from .jsonfmt import dumps_line, loads
from .manager import header_problems
from .messages import agent_message
from .migrate import needs_migration
from .scan import _BOM, Scan, not_a_file, scan_session_file
from .store import backup_file, holder_pid, rewrite_file


@dataclass
class SessionProblem:
    """One thing wrong with a session file."""

    line: int | None
    message: str
    repairable: bool = False
    """``pi session check --repair`` mends it (else reading skips it and it stays)."""


@dataclass
class SessionCheck:
    """The result of :func:`check_session_file`."""

    path: Path
    entries: int = 0
    problems: list[SessionProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_session_file(path: str | os.PathLike[str]) -> SessionCheck:
    """Look at every line of a session file without changing it."""
    file = Path(path)
    check = SessionCheck(file)
    kind = not_a_file(file)
    if kind is not None or not file.is_file():
        check.problems.append(SessionProblem(None, f"it is {kind}, not a session file" if kind else "no such file"))
        return check
    scan = scan_session_file(file)
    with open(file, "rb") as handle:
        if handle.read(3) == _BOM:
            check.problems.append(SessionProblem(1, "the file starts with a byte order mark", True))
    _check_header(scan, check)
    for diagnostic in scan.diagnostics:
        repairable = diagnostic.kind in ("malformed_line", "torn_tail", "missing_newline")
        text = diagnostic.message.replace("; it stays in the file", "")
        if diagnostic.line and text.startswith(f"line {diagnostic.line} "):
            text = text[len(f"line {diagnostic.line} "):]
        check.problems.append(SessionProblem(diagnostic.line, text, repairable))
    _check_entries(scan, check)
    owner = holder_pid(file)
    if owner is not None and Path(f"{file}.lock").exists():
        check.notes.append(f"a lock file names process {owner} (taken over if that process is gone)")
    return check


def _check_header(scan: Scan, check: SessionCheck) -> None:
    header = scan.header
    if header is None:
        check.problems.append(SessionProblem(1, "the first record is not a session header: this is not "
                                                "a pi session (pi refuses to open it)"))
        return
    if not isinstance(header.get("id"), str):
        check.problems.append(SessionProblem(1, "the header's id is not a string (pi refuses to open it)"))
    for problem in header_problems(header):
        check.problems.append(SessionProblem(1, problem))
    if needs_migration(header):
        check.notes.append(f"version {header.get('version')!r}: migrated to version 3 when next opened "
                           "for writing (a backup is kept)")


def _check_entries(scan: Scan, check: SessionCheck) -> None:
    seen: dict[str, int] = {}
    lines = _line_numbers(scan)
    adapter = _session_entry()
    for at in range(len(scan)):
        line = lines[at]
        entry_id, kind = scan.ids[at], scan.types[at]
        if not isinstance(entry_id, str):
            check.problems.append(SessionProblem(line, "the record has no string id: it is not part of "
                                                       "the tree"))
            continue
        check.entries += 1
        if entry_id in seen:
            check.problems.append(SessionProblem(line, f"id {entry_id} is used again (first on line "
                                                       f"{seen[entry_id]}); the later entry wins"))
        seen.setdefault(entry_id, line)
        record = scan.parsed.get(at) or _read(scan, at)
        problem = _entry_problem(record, kind, adapter)
        if problem:
            check.problems.append(SessionProblem(line, f"entry {entry_id} ({kind}): {problem}; it is skipped "
                                                       "when read"))
    for at in range(len(scan)):
        parent = scan.parent_ids[at]
        if not isinstance(scan.ids[at], str) or parent is None:
            continue
        if not isinstance(parent, str):
            check.problems.append(SessionProblem(lines[at], f"entry {scan.ids[at]}'s parentId is not a string: "
                                                            "it starts a tree of its own"))
        elif parent not in seen and parent not in scan.broken:
            check.problems.append(SessionProblem(lines[at], f"entry {scan.ids[at]} names parent {parent!r}, "
                                                            "which is not in the file: it starts a tree of its own"))
    for at, cycle in _cycles(scan):
        check.problems.append(SessionProblem(lines[at], f"entry {scan.ids[at]} is its own ancestor (parents "
                                                        f"{' -> '.join(cycle)}): the path to the root stops there"))


def _cycles(scan: Scan) -> list[tuple[int, list[str]]]:
    """Loops of parents, each once (at the first of its entries in the file)."""
    parent_of: dict[str, Any] = {}
    position: dict[str, int] = {}
    for at in range(len(scan)):
        entry_id = scan.ids[at]
        if isinstance(entry_id, str):
            parent_of[entry_id] = scan.parent_ids[at]  # a repeated id: the later entry wins
            position.setdefault(entry_id, at)
    state: dict[str, int] = {}  # 1: on the walk in progress, 2: done
    found = []
    for start in parent_of:
        walk: list[str] = []
        node: Any = start
        while isinstance(node, str) and node in parent_of and node not in state:
            state[node] = 1
            walk.append(node)
            node = parent_of[node]
        if isinstance(node, str) and state.get(node) == 1:
            loop = walk[walk.index(node):]
            first = min(loop, key=position.__getitem__)
            found.append((position[first], [*loop, node]))
        for visited in walk:
            state[visited] = 2
    return sorted(found)


def _line_numbers(scan: Scan) -> list[int]:
    with open(scan.path, "rb") as handle:
        data = handle.read()
    out, line, last = [], 1, 0
    for offset in scan.offsets:
        line += data.count(b"\n", last, offset)
        last = offset
        out.append(line)
    return out


def _read(scan: Scan, at: int) -> Any:
    with open(scan.path, "rb") as handle:
        handle.seek(scan.offsets[at])
        return loads(handle.read(scan.lengths[at]))


def _entry_problem(record: Any, kind: Any, adapter: Any) -> str | None:
    from pydantic import ValidationError

    try:
        adapter.validate_python(record)
        if kind == "message":
            agent_message(record.get("message"))
    except (ValidationError, ValueError, TypeError) as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()]
        return " ".join(lines[1:3]) if len(lines) > 1 else str(exc)
    return None


def repair_session_file(path: str | os.PathLike[str]) -> Path:
    """Mend what :func:`check_session_file` marks repairable; returns the backup's path.

    Raises ``ValueError`` if the file has no session header (there is nothing to repair it into).
    """
    file = Path(path)
    scan = scan_session_file(file)
    if scan.header is None:
        raise ValueError(f"{file} has no session header; nothing was changed")
    parts = [dumps_line(scan.header)]
    with open(file, "rb") as handle:
        for at in range(len(scan)):
            handle.seek(scan.offsets[at])
            raw = handle.read(scan.lengths[at])
            record = scan.parsed.get(at) or loads(raw)
            parent = original = record.get("parentId")
            hops = 0
            while isinstance(parent, str) and parent in scan.broken and hops < 1000:
                parent = scan.broken[parent]  # a removed line's children: to its parent
                hops += 1
            if parent != original:
                record["parentId"] = parent
                parts.append(dumps_line(record))
            else:
                parts.append(raw.rstrip(b"\r") + b"\n")  # good lines stay byte for byte
    data = b"".join(parts)
    backup = backup_file(file)
    rewrite_file(file, data)
    return backup


__all__ = ["SessionCheck", "SessionProblem", "check_session_file", "repair_session_file"]
