"""pi's resource filters: which of a package's (or a settings array's) resources load.

A filter is a list of entries, applied in this order:

1. plain globs include what they match (no plain entry: everything is included);
2. ``!glob`` excludes what it matches;
3. ``+path`` puts one exact path back;
4. ``-path`` takes one exact path out, whatever came before.

A glob matches a resource's path relative to the package root, its file name, or its absolute path
(``*`` stays within a directory, ``**`` crosses them). For a skill's ``SKILL.md`` its directory counts
too, so ``-skills/review`` switches the ``review`` skill off. An empty list loads nothing.
For resources that were found rather than listed (auto-discovered), only the ``!``, ``+`` and ``-``
entries act, as on/off overrides — that is what ``pi config`` writes.

A project entry with ``"autoload": false`` is a *delta* (:func:`delta_states`): it decides only the
resources its entries match, the last matching entry winning (plain and ``+`` switch on, ``!`` and ``-``
switch off); everything else keeps the state the user's entry gives it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

SKILL_FILE = "SKILL.md"


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out += re.escape(char)
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                out += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
                i = end
        elif char == "{":
            end = pattern.find("}", i)
            if end < 0:
                out += re.escape(char)
            else:
                out += "(?:" + "|".join(_glob_regex(p).pattern[:-2] for p in pattern[i + 1:end].split(",")) + ")"
                i = end
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out + r"\Z")


def glob_match(text: str, pattern: str) -> bool:
    """``pattern`` (minimatch-style: ``*``, ``**``, ``?``, ``[...]``, ``{a,b}``) matches all of ``text``."""
    return _glob_regex(pattern).match(text) is not None


def _normal(pattern: str) -> str:
    pattern = pattern.strip().replace("\\", "/")
    return pattern[2:] if pattern.startswith("./") else pattern


def _candidates(path: Path, root: Path) -> list[str]:
    """The strings a pattern may match for ``path``: relative, name, absolute (and the skill's dir)."""
    rel = Path(os.path.relpath(path, root)).as_posix()
    names = [rel, path.name, path.as_posix()]
    if path.name == SKILL_FILE:
        parent = path.parent
        names += [Path(os.path.relpath(parent, root)).as_posix(), parent.name, parent.as_posix()]
    return names


def matches_glob(path: Path, patterns: Iterable[str], root: Path) -> bool:
    names = _candidates(path, root)
    return any(glob_match(name, _normal(p)) for p in patterns for name in names)


def matches_exact(path: Path, patterns: Iterable[str], root: Path) -> bool:
    rel = Path(os.path.relpath(path, root)).as_posix()
    exact = {rel, path.as_posix()}
    if path.name == SKILL_FILE:
        exact |= {Path(os.path.relpath(path.parent, root)).as_posix(), path.parent.as_posix()}
    return any(_normal(p).rstrip("/") in exact for p in patterns)


def split(entries: Sequence[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    """``(includes, excludes, force_includes, force_excludes)`` with the prefixes removed."""
    include, exclude, force_in, force_out = [], [], [], []
    for entry in entries:
        if entry.startswith("+"):
            force_in.append(entry[1:])
        elif entry.startswith("-"):
            force_out.append(entry[1:])
        elif entry.startswith("!"):
            exclude.append(entry[1:])
        else:
            include.append(entry)
    return include, exclude, force_in, force_out


def apply_filter(paths: Sequence[Path], entries: Sequence[str], root: Path) -> set[Path]:
    """The paths that ``entries`` enable among ``paths`` (a package's resources of one kind)."""
    if not entries:
        return set()
    include, exclude, force_in, force_out = split(entries)
    chosen = [p for p in paths if not include or matches_glob(p, include, root)]
    chosen = [p for p in chosen if not (exclude and matches_glob(p, exclude, root))]
    result = set(chosen)
    result |= {p for p in paths if force_in and matches_exact(p, force_in, root)}
    return {p for p in result if not (force_out and matches_exact(p, force_out, root))}


def enabled_by_overrides(path: Path, entries: Sequence[str], root: Path) -> bool:
    """For an auto-discovered resource: on unless an ``!``/``-`` entry turns it off (``+`` wins over ``!``)."""
    _, exclude, force_in, force_out = split(entries)
    enabled = not (exclude and matches_glob(path, exclude, root))
    if force_in and matches_exact(path, force_in, root):
        enabled = True
    if force_out and matches_exact(path, force_out, root):
        enabled = False
    return enabled


def name_filter(names: Sequence[str], entries: Sequence[str]) -> set[str]:
    """:func:`apply_filter` for resources known by name (a Python distribution's plugins)."""
    if not entries:
        return set()
    include, exclude, force_in, force_out = split(entries)
    chosen = {n for n in names if not include or any(glob_match(n, p) for p in include)}
    chosen = {n for n in chosen if not any(glob_match(n, p) for p in exclude)}
    chosen |= {n for n in names if n in force_in}
    return chosen - set(force_out)


def _delta_entry(entry: str) -> tuple[str, bool, bool]:
    """``(target, enabled, exact)`` of one delta entry."""
    prefix = entry[:1]
    target = entry[1:] if prefix in "+-!" else entry
    return target, prefix not in "-!", prefix in "+-"


def delta_states(paths: Sequence[Path], entries: Sequence[str], root: Path) -> dict[Path, bool]:
    """The on/off state that an ``autoload: false`` entry list gives the ``paths`` it matches (pi's rule:
    entries in order, the last match decides; ``+``/``-`` match exactly, plain and ``!`` entries as globs)."""
    states: dict[Path, bool] = {}
    for entry in entries:
        target, enabled, exact = _delta_entry(entry)
        for path in paths:
            if (matches_exact if exact else matches_glob)(path, [target], root):
                states[path] = enabled
    return states


def name_delta_states(names: Sequence[str], entries: Sequence[str]) -> dict[str, bool]:
    """:func:`delta_states` for resources known by name (a Python distribution's plugins)."""
    states: dict[str, bool] = {}
    for entry in entries:
        target, enabled, exact = _delta_entry(entry)
        for name in names:
            if name == target or (not exact and glob_match(name, target)):
                states[name] = enabled
    return states


def toggle(entries: Sequence[str], target: str, enabled: bool) -> list[str]:
    """``entries`` with any ``!``/``+``/``-`` entry for ``target`` replaced by ``+target`` or ``-target``."""
    kept = [e for e in entries if not (e[:1] in "!+-" and _normal(e[1:]).rstrip("/") == _normal(target))]
    return [*kept, ("+" if enabled else "-") + target]


__all__ = ["apply_filter", "delta_states", "enabled_by_overrides", "glob_match", "matches_exact", "matches_glob",
           "name_delta_states", "name_filter", "split", "toggle"]
