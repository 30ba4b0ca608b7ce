"""Diffs of an edit in pi's two formats: a numbered display diff and a standard unified patch.

``edit_diff(path, old, new)`` returns ``{"diff", "patch", "firstChangedLine"}`` exactly as pi's edit
tool puts them in ``details``: the display diff shows ``+NN``/``-NN``/`` NN`` lines with 4 lines of
context and `` ...`` where unchanged lines are skipped; the patch has 4 context lines and
``--- path`` / ``+++ path`` headers.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

CONTEXT_LINES = 4
_MARGIN = 32


@dataclass
class _Part:
    lines: list[str]  # each with its newline, except possibly the file's last line
    added: bool = False
    removed: bool = False


def _split_keep(text: str) -> list[str]:
    # splitlines() also breaks on \r, \x0b, ...; a diff is by \n only.
    out, start = [], 0
    while True:
        i = text.find("\n", start)
        if i == -1:
            if start < len(text):
                out.append(text[start:])
            return out
        out.append(text[start:i + 1])
        start = i + 1


def _parts(old: list[str], new: list[str]) -> list[_Part]:
    parts: list[_Part] = []

    def push(lines: list[str], added: bool = False, removed: bool = False) -> None:
        if not lines:
            return
        last = parts[-1] if parts else None
        if last and last.added == added and last.removed == removed:
            last.lines.extend(lines)
        else:
            parts.append(_Part(list(lines), added, removed))

    # A common prefix and suffix need no diffing; keep a margin so alignment inside looks natural.
    pre = 0
    while pre < min(len(old), len(new)) and old[pre] == new[pre]:
        pre += 1
    suf = 0
    while suf < min(len(old), len(new)) - pre and old[-1 - suf] == new[-1 - suf]:
        suf += 1
    lo = max(0, pre - _MARGIN)
    hi_old, hi_new = len(old) - max(0, suf - _MARGIN), len(new) - max(0, suf - _MARGIN)
    push(old[:lo])
    matcher = difflib.SequenceMatcher(None, old[lo:hi_old], new[lo:hi_new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            push(old[lo + i1:lo + i2])
        else:
            push(old[lo + i1:lo + i2], removed=True)
            push(new[lo + j1:lo + j2], added=True)
    push(old[hi_old:])
    return parts


def _display(parts: list[_Part], width: int, context: int) -> tuple[list[str], int | None]:
    out: list[str] = []
    old_no = new_no = 1
    first: int | None = None
    last_change = False
    skip = " " + " " * width + " ..."

    def show(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            out.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1

    for i, part in enumerate(parts):
        raw = [line[:-1] if line.endswith("\n") else line for line in part.lines]
        if part.added or part.removed:
            if first is None:
                first = new_no
            for line in raw:
                if part.added:
                    out.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    out.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_change = True
            continue
        next_change = i + 1 < len(parts) and (parts[i + 1].added or parts[i + 1].removed)
        if last_change and next_change and len(raw) > context * 2:
            show(raw[:context])
            out.append(skip)
            gap = len(raw) - 2 * context
            old_no += gap
            new_no += gap
            show(raw[-context:])
        elif last_change and next_change:
            show(raw)
        elif last_change:
            show(raw[:context])
            if len(raw) > context:
                out.append(skip)
                old_no += len(raw) - context
                new_no += len(raw) - context
        elif next_change:
            hidden = max(0, len(raw) - context)
            if hidden:
                out.append(skip)
                old_no += hidden
                new_no += hidden
            show(raw[hidden:])
        else:
            old_no += len(raw)
            new_no += len(raw)
        last_change = False
    return out, first


def _hunks(parts: list[_Part], context: int) -> list[dict[str, Any]]:
    parts = [*parts, _Part([])]
    hunks: list[dict[str, Any]] = []
    old_start = new_start = 0
    cur: list[str] = []
    old_line = new_line = 1
    for i, part in enumerate(parts):
        if part.added or part.removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if i > 0:
                    cur = [" " + line for line in parts[i - 1].lines[-context:]] if context > 0 else []
                    old_start -= len(cur)
                    new_start -= len(cur)
            cur.extend(("+" if part.added else "-") + line for line in part.lines)
            if part.added:
                new_line += len(part.lines)
            else:
                old_line += len(part.lines)
            continue
        if old_start:
            if len(part.lines) <= context * 2 and i < len(parts) - 2:
                cur.extend(" " + line for line in part.lines)
            else:
                size = min(len(part.lines), context)
                cur.extend(" " + line for line in part.lines[:size])
                hunks.append({"oldStart": old_start, "oldLines": old_line - old_start + size,
                              "newStart": new_start, "newLines": new_line - new_start + size, "lines": cur})
                old_start = new_start = 0
                cur = []
        old_line += len(part.lines)
        new_line += len(part.lines)
    return hunks


def _format_patch(path: str, hunks: list[dict[str, Any]]) -> str:
    out = [f"--- {path}", f"+++ {path}"]
    for hunk in hunks:
        old_start = hunk["oldStart"] - (1 if hunk["oldLines"] == 0 else 0)
        new_start = hunk["newStart"] - (1 if hunk["newLines"] == 0 else 0)
        out.append(f"@@ -{old_start},{hunk['oldLines']} +{new_start},{hunk['newLines']} @@")
        for line in hunk["lines"]:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out.append(line)
                out.append("\\ No newline at end of file")
    return "\n".join(out) + "\n"


def edit_diff(path: str, old: str, new: str, context: int = CONTEXT_LINES) -> dict[str, Any]:
    """``{"diff", "patch", "firstChangedLine"}`` for a change from ``old`` to ``new`` (LF text)."""
    parts = _parts(_split_keep(old), _split_keep(new))
    width = len(str(max(old.count("\n"), new.count("\n")) + 1))
    display, first = _display(parts, width, context)
    result: dict[str, Any] = {"diff": "\n".join(display), "patch": _format_patch(path, _hunks(parts, context))}
    if first is not None:
        result["firstChangedLine"] = first
    return result


__all__ = ["CONTEXT_LINES", "edit_diff"]
