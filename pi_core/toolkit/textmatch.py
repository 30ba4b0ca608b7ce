"""Finding the text an edit means, and applying several edits at once.

The matcher tries stages from strict to tolerant and stops at the first stage that finds anything:

1. ``exact`` — the old text as given;
2. ``trailing-whitespace`` — spaces and tabs at line ends ignored;
3. ``unicode`` — also Unicode look-alikes folded (NFKC, curly quotes, dashes, exotic spaces);
4. ``indentation`` — whole lines compared with all leading/inner whitespace runs collapsed; the new
   text is re-indented to the file's indentation.

A stage's match is accepted only when it is unique; two or more places at the first stage that
finds any is an ambiguity error (a looser stage would only find more). Every edit is matched
against the original text, overlapping edits are refused, and nothing is applied unless all edits
match. Text is handled with LF line endings; :func:`apply_edits_preserving` maps the result back
onto the original's line endings.

Plugins can swap the matcher by replacing the edit tool and calling their own; this module is
plain functions over strings.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

STAGES = ("exact", "trailing-whitespace", "unicode", "indentation")

_STAGE_HINT = {
    "trailing-whitespace": "ignoring trailing whitespace",
    "unicode": "ignoring trailing whitespace and Unicode look-alike characters",
    "indentation": "ignoring indentation and whitespace runs",
}

_FOLD = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
})


@dataclass
class Edit:
    """One replacement: ``old_text`` (must be found once) becomes ``new_text``."""

    old_text: str
    new_text: str


@dataclass
class Replacement:
    """A resolved edit: replace ``content[start:end]`` with ``text`` (offsets in LF text)."""

    start: int
    end: int
    text: str
    edit_index: int
    stage: str


@dataclass
class Candidate:
    """The region of the file most like an old text that was not found."""

    first_line: int
    last_line: int
    similarity: float
    lines: list[str]

    def render(self) -> str:
        width = len(str(self.last_line))
        return "\n".join(f"{str(self.first_line + i).rjust(width)} | {line}" for i, line in enumerate(self.lines))


class EditError(ValueError):
    """An edit that cannot be applied; ``kind`` is ``empty``, ``not_found``, ``ambiguous``,
    ``overlap`` or ``no_change``."""

    def __init__(self, message: str, kind: str, edit_index: int | None = None, *,
                 candidate: Candidate | None = None, lines: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.edit_index = edit_index
        self.candidate = candidate
        self.lines = list(lines)


@dataclass
class EditOutcome:
    """What :func:`apply_edits` did: the new LF text, the replacements, and edits found already done."""

    content: str
    replacements: list[Replacement]
    already_applied: list[int] = field(default_factory=list)

    def stages(self) -> dict[int, str]:
        return {r.edit_index: r.stage for r in self.replacements}


# -- normalisation with an offset map --------------------------------------------------------------


def _normalise(text: str, fold_unicode: bool) -> tuple[str, list[int]]:
    """``text`` without trailing whitespace per line (and folded), plus a map from each output
    character (and the end) to its offset in ``text``."""
    out: list[str] = []
    index: list[int] = []
    pos = 0
    for line in text.split("\n"):
        stripped = line.rstrip(" \t")
        if not fold_unicode or stripped.isascii():  # the common case: one output character per input one
            out.append(stripped)
            index.extend(range(pos, pos + len(stripped)))
        else:
            for i, ch in enumerate(stripped):
                mapped = unicodedata.normalize("NFKC", ch).translate(_FOLD) if ord(ch) > 127 else ch
                out.append(mapped)
                index.extend([pos + i] * len(mapped))
        pos += len(line)
        out.append("\n")
        index.append(pos)
        pos += 1
    out.pop()
    index.pop()
    index.append(len(text))
    return "".join(out), index


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, start = [], 0
    while (i := haystack.find(needle, start)) != -1:
        found.append(i)
        start = i + len(needle)
    return found


def _line_of(content: str, offset: int) -> int:
    return content.count("\n", 0, offset) + 1


def _lines_of(content: str, offsets: Sequence[int]) -> list[int]:
    """The line number of each offset, in one pass over ``content`` (offsets in any order)."""
    lines: dict[int, int] = {}
    line, at = 1, 0
    for offset in sorted(set(offsets)):
        line += content.count("\n", at, offset)
        lines[offset], at = line, offset
    return [lines[o] for o in offsets]


def _sequence_matches(items: Sequence[str], pattern: Sequence[str]) -> list[int]:
    """Every start where ``pattern`` occurs in ``items`` (overlaps included), in linear time (KMP)."""
    n = len(pattern)
    fail = [0] * n
    k = 0
    for i in range(1, n):
        while k and pattern[i] != pattern[k]:
            k = fail[k - 1]
        if pattern[i] == pattern[k]:
            k += 1
        fail[i] = k
    found, k = [], 0
    for i, item in enumerate(items):
        while k and item != pattern[k]:
            k = fail[k - 1]
        if item == pattern[k]:
            k += 1
        if k == n:
            found.append(i - n + 1)
            k = fail[k - 1]
    return found


def _ws_key(line: str) -> str:
    if line.isascii():  # NFKC and the fold table leave ASCII alone
        return " ".join(line.split())
    return " ".join(unicodedata.normalize("NFKC", line).translate(_FOLD).split())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _reindent(new_text: str, old_lines: list[str], file_lines: list[str]) -> str:
    """Shift ``new_text`` from the old text's indentation to the file's, when that is a clean swap."""
    pairs = [(o, f) for o, f in zip(old_lines, file_lines) if o.strip()]
    if not pairs:
        return new_text
    old_ind, file_ind = _indent(pairs[0][0]), _indent(pairs[0][1])
    if old_ind == file_ind:
        return new_text
    out = []
    for line in new_text.split("\n"):
        if line.startswith(old_ind) and line.strip():
            out.append(file_ind + line[len(old_ind):])
        else:
            out.append(line)
    return "\n".join(out)


def _line_spans(content: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in content.split("\n"):
        spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


# -- finding one edit --------------------------------------------------------------------------------


def _find_substring(content: str, old: str, stage: str) -> list[tuple[int, int]]:
    if stage == "exact":
        return [(i, i + len(old)) for i in _occurrences(content, old)]
    fold = stage == "unicode"
    norm_c, index = _normalise(content, fold)
    norm_o, _ = _normalise(old, fold)
    if not norm_o.strip():
        return []
    spans = []
    for i in _occurrences(norm_c, norm_o):
        end = index[i + len(norm_o) - 1] + 1
        spans.append((index[i], end))
    return spans


def _find_lines(content: str, old: str) -> tuple[list[int], tuple[int, int, list[str], list[str]] | None]:
    """Start offsets of the line windows matching ``old`` by whitespace key, and the details
    (start, end, old lines, file lines) when there is exactly one."""
    old_lines = old.split("\n")
    if old_lines and old_lines[-1] == "" and len(old_lines) > 1:
        old_lines = old_lines[:-1]
    keys = [_ws_key(line) for line in old_lines]
    if not any(keys):
        return [], None
    file_lines = content.split("\n")
    file_keys = [_ws_key(line) for line in file_lines]
    spans = _line_spans(content)
    n = len(keys)
    found = _sequence_matches(file_keys, keys)
    only = (spans[found[0]][0], spans[found[0] + n - 1][1], old_lines, file_lines[found[0]:found[0] + n]) \
        if len(found) == 1 else None
    return [spans[i][0] for i in found], only


def find_edit(content: str, edit: Edit, index: int = 0, *, label: str = "the file",
              total: int = 1) -> Replacement:
    """Resolve one edit against ``content`` (LF text) or raise :class:`EditError`."""
    old, new = edit.old_text, edit.new_text
    name = "the old text" if total == 1 else f"edits[{index}].oldText"
    if not old:
        raise EditError(f"{name[0].upper()}{name[1:]} is empty; give the exact text to replace in {label}.", "empty", index)
    for stage in STAGES[:3]:
        spans = _find_substring(content, old, stage)
        if len(spans) == 1:
            start, end = spans[0]
            return Replacement(start, end, new, index, stage)
        if spans:
            raise _ambiguous(content, name, label, stage, [s for s, _ in spans], index)
    starts, only = _find_lines(content, old)
    if only is not None:
        start, end, old_lines, file_lines = only
        text = _reindent(new.removesuffix("\n") if old.endswith("\n") else new, old_lines, file_lines)
        if old.endswith("\n") and end < len(content):
            end += 1
            text += "\n"
        return Replacement(start, end, text, index, "indentation")
    if starts:
        raise _ambiguous(content, name, label, "indentation", starts, index)
    raise _not_found(content, old, name, label, index)


def _ambiguous(content: str, name: str, label: str, stage: str, starts: list[int], index: int) -> EditError:
    lines = _lines_of(content, starts)
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    how = "" if stage == "exact" else f" when {_STAGE_HINT[stage]}"
    return EditError(
        f"{name[0].upper()}{name[1:]} occurs {len(starts)} times in {label}{how} (at lines {shown}); it must match exactly one "
        "place. Include more of the surrounding lines to single one out.", "ambiguous", index, lines=lines)


def _not_found(content: str, old: str, name: str, label: str, index: int) -> EditError:
    message = (f"Could not find {name} in {label}, not even when ignoring trailing whitespace, indentation "
               "and Unicode look-alikes.")
    candidate = closest_region(content, old)
    if candidate is not None:
        message += (f"\nThe most similar part of the file is lines {candidate.first_line}-{candidate.last_line} "
                    f"({round(candidate.similarity * 100)}% similar):\n{candidate.render()}\n"
                    "Copy the old text exactly from the file (read it again if it may have changed).")
    else:
        message += " Read the file again and copy the old text exactly."
    return EditError(message, "not_found", index, candidate=candidate)


_TOKEN = re.compile(r"\w+|[^\w\s]")
_RANKED_WINDOWS = 40
"""How many of the windows sharing the most words with the old text are looked at again."""
_REFINED_WINDOWS = 3
"""How many of those are compared exactly."""
_CHAR_LEVEL_LIMIT = 1000
"""Old texts up to this long are compared character by character (what finds a renamed identifier);
character-level matching is quadratic, so longer ones are compared word by word and line by line."""
_EXACT_ITEMS_LIMIT = 2000
"""Old texts of more words than this are compared by the words they share alone (difflib over longer
sequences takes seconds per window)."""


def closest_region(content: str, old: str) -> Candidate | None:
    """The window of lines most similar to ``old`` (same number of lines), or None if nothing is
    even 40% alike.

    Bounded whatever the sizes: every window is ranked by the words it shares with the old text (a
    sliding count, linear in the file). For an old text of up to :data:`_EXACT_ITEMS_LIMIT` words the
    best-ranked few are ranked again word by word (difflib with its junk heuristic: fast), and the top
    three compared exactly: character by character for up to :data:`_CHAR_LEVEL_LIMIT` characters,
    else word by word and line by line. A longer old text is judged by the words it shares.
    """
    old_lines = old.strip("\n").split("\n")
    lines = content.split("\n")
    n = min(len(old_lines), len(lines))
    if n == 0:
        return None
    old_keys = [_ws_key(line) for line in old_lines]
    keys = [_ws_key(line) for line in lines]
    target = "\n".join(old_keys)
    old_tokens = _TOKEN.findall(target)
    ranked = _ranked_windows(keys, old_keys, n)
    if len(old_tokens) > _EXACT_ITEMS_LIMIT:  # the share of words in common (difflib's quick_ratio)
        best = max(((2 * shared / (len(old_tokens) + len(_TOKEN.findall("\n".join(keys[i:i + n])))), -rank, i)
                    for rank, (i, shared) in enumerate(ranked[:_REFINED_WINDOWS])), default=(0.0, 0, -1))
    else:
        words = difflib.SequenceMatcher(None, autojunk=True)
        words.set_seq2(old_tokens)  # type: ignore[arg-type]
        scored: list[tuple[float, int, int]] = []
        for rank, (i, _shared) in enumerate(ranked):
            words.set_seq1(_TOKEN.findall("\n".join(keys[i:i + n])))  # type: ignore[arg-type]
            scored.append((words.ratio(), -rank, i))  # ties: the window sharing more words first
        best = (0.0, 0, -1)
        for ratio, neg_rank, i in heapq.nlargest(_REFINED_WINDOWS, scored):
            best = max(best, (max(ratio, _exact_ratio(target, old_tokens, old_keys, keys[i:i + n])), neg_rank, i))
    if best[2] < 0 or best[0] < 0.4:
        return None
    start = best[2]
    return Candidate(start + 1, start + n, best[0], lines[start:start + n])


def _exact_ratio(target: str, old_tokens: list[str], old_keys: list[str], window: list[str]) -> float:
    if len(target) <= _CHAR_LEVEL_LIMIT:
        return difflib.SequenceMatcher(None, "\n".join(window), target, autojunk=False).ratio()
    tokens = _TOKEN.findall("\n".join(window))
    return max(difflib.SequenceMatcher(None, window, old_keys, autojunk=False).ratio(),
               difflib.SequenceMatcher(None, tokens, old_tokens, autojunk=False).ratio())


def _ranked_windows(keys: list[str], old_keys: list[str], n: int) -> list[tuple[int, int]]:
    """``(start, words shared)`` of the windows of ``n`` lines sharing the most words with ``old_keys``,
    most first (earliest first on ties)."""
    wanted: dict[str, int] = {}
    for key in old_keys:
        for token in _TOKEN.findall(key):
            wanted[token] = wanted.get(token, 0) + 1
    tokens = [[t for t in _TOKEN.findall(key) if t in wanted] for key in keys]
    have: dict[str, int] = {}
    shared = 0
    scores: list[int] = []
    for i, line_tokens in enumerate(tokens):
        for t in line_tokens:
            have[t] = have.get(t, 0) + 1
            shared += have[t] <= wanted[t]
        if i >= n:
            for t in tokens[i - n]:
                shared -= have[t] <= wanted[t]
                have[t] -= 1
        if i >= n - 1:
            scores.append(shared)
    best = heapq.nlargest(_RANKED_WINDOWS, range(len(scores)), key=lambda s: (scores[s], -s))
    return [(i, scores[i]) for i in best]


# -- applying several edits --------------------------------------------------------------------------


def _is_applied(content: str, edit: Edit) -> bool:
    """The new text is in the file and the old text only appears inside copies of it."""
    new, old = edit.new_text, edit.old_text
    if not new.strip() or new == old or new not in content:
        return False
    homes = _occurrences(content, new)  # sorted, non-overlapping
    for i in _occurrences(content, old):
        # the copy of the new text starting last at or before i is the only one that can hold it
        home = bisect.bisect_right(homes, i) - 1
        if home < 0 or i + len(old) > homes[home] + len(new):
            return False
    return True


def apply_edits(content: str, edits: Sequence[Edit], *, label: str = "the file") -> EditOutcome:
    """Match every edit against ``content`` (LF text) and apply them together, or raise EditError.

    An edit whose old text is found only inside copies of its new text (``x = 1`` -> ``x = 10``, done
    already) counts as already applied (``EditOutcome.already_applied``) instead of being applied again,
    so a repeated call is harmless. An edit whose old text is not in the file at all fails, as in pi,
    wherever its new text may occur.
    """
    edits = [Edit(e.old_text.replace("\r\n", "\n"), e.new_text.replace("\r\n", "\n")) for e in edits]
    replacements: list[Replacement] = []
    applied: list[int] = []
    for i, edit in enumerate(edits):
        if edit.old_text and edit.old_text in content and _is_applied(content, edit):
            applied.append(i)
            continue
        replacements.append(find_edit(content, edit, i, label=label, total=len(edits)))
    replacements.sort(key=lambda r: r.start)
    for prev, cur in zip(replacements, replacements[1:]):
        if cur.start < prev.end:
            raise EditError(f"edits[{prev.edit_index}] and edits[{cur.edit_index}] overlap in {label}; merge "
                            "them into one edit or make them cover separate regions.", "overlap", cur.edit_index)
    new_content = splice(content, replacements)
    if new_content == content and not applied:
        what = "the replacement leaves" if len(edits) == 1 else "the replacements leave"
        raise EditError(f"No change made to {label}: {what} the text as it was (newText equals oldText).",
                        "no_change")
    return EditOutcome(new_content, replacements, applied)


def splice(content: str, replacements: Sequence[Replacement],
           convert: Callable[[Replacement], str] | None = None) -> str:
    """Apply sorted, disjoint replacements to ``content``."""
    out, pos = [], 0
    for r in replacements:
        out.append(content[pos:r.start])
        out.append(convert(r) if convert else r.text)
        pos = r.end
    out.append(content[pos:])
    return "".join(out)


# -- line endings and BOM ------------------------------------------------------------------------------


@dataclass
class TextFile:
    """A file's text split into what matching sees (LF, no BOM) and what must be put back."""

    original: str
    bom: str
    lf: str
    crlf_at: list[int]
    """LF-text offsets of the newlines that were CRLF in the original."""

    @classmethod
    def parse(cls, raw: str) -> TextFile:
        bom = "\ufeff" if raw.startswith("\ufeff") else ""
        body = raw[len(bom):]
        crlf_at, removed = [], 0
        for m in re.finditer("\r\n", body):
            crlf_at.append(m.start() - removed)
            removed += 1
        return cls(body, bom, body.replace("\r\n", "\n"), crlf_at)

    def to_original(self, offset: int) -> int:
        return offset + bisect.bisect_left(self.crlf_at, offset)

    def ending_at(self, offset: int) -> str:
        """The line ending of the line holding ``offset`` (the previous line's for a last line)."""
        nl = self.lf.find("\n", offset)
        if nl == -1:
            nl = self.lf.rfind("\n", 0, offset)
        if nl == -1:
            return "\r\n" if self.crlf_at else "\n"
        i = bisect.bisect_left(self.crlf_at, nl)
        return "\r\n" if i < len(self.crlf_at) and self.crlf_at[i] == nl else "\n"

    def rebuild(self, replacements: Sequence[Replacement]) -> str:
        """The original text with the replacements applied; untouched bytes and line endings kept,
        new lines given the ending of the line they land on."""
        if not self.crlf_at:
            return self.bom + splice(self.lf, replacements)
        out, pos = [], 0
        for r in replacements:
            start, end = self.to_original(r.start), self.to_original(r.end)
            out.append(self.original[pos:start])
            ending = self.ending_at(r.start)
            out.append(r.text if ending == "\n" else r.text.replace("\n", ending))
            pos = end
        out.append(self.original[pos:])
        return self.bom + "".join(out)


__all__ = ["Candidate", "Edit", "EditError", "EditOutcome", "Replacement", "STAGES", "TextFile", "apply_edits",
           "closest_region", "find_edit", "splice"]
