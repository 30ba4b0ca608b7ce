"""Ignore files as ripgrep reads them, for searching and listing without ripgrep.

Rules come from ``.gitignore``, ``.ignore`` and ``.rgignore`` files in every directory from the
filesystem root down to the one holding a path, and from ``.git/info/exclude`` of a repository.
Within one file the last matching pattern wins (``!`` re-includes); across directories the deepest
file with a matching pattern wins. Kinds rank ``.rgignore`` > ``.ignore`` > ``.gitignore`` >
``info/exclude``. Inside a git repository, ``.gitignore`` files above the nearest repository root
(a directory holding ``.git``) do not count; outside any repository ``.gitignore`` files still
apply, without that boundary (ripgrep with ``--no-require-git``).

Patterns follow gitignore: a pattern with a ``/`` other than a trailing one is anchored to its
file's directory, otherwise it matches a name at any depth; a trailing ``/`` matches directories
only; ``*``, ``?`` and ``[...]`` stay within one path component and ``**`` spans several; ``{a,b}``
alternatives are accepted like ripgrep's globs. An ignored directory is not entered, so nothing
below it can be re-included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

KINDS = (".rgignore", ".ignore", ".gitignore")


def _class(pat: str, i: int) -> tuple[str, int] | None:
    j = i + 1
    negate = j < len(pat) and pat[j] in "!^"
    if negate:
        j += 1
    body = []
    if j < len(pat) and pat[j] == "]":
        body.append(r"\]")
        j += 1
    while j < len(pat) and pat[j] != "]":
        ch = pat[j]
        if ch == "\\" and j + 1 < len(pat):
            body.append(re.escape(pat[j + 1]))
            j += 2
            continue
        body.append(ch if ch == "-" else re.escape(ch))
        j += 1
    if j >= len(pat):
        return None
    inner = "".join(body)
    return (f"[^/{inner}]" if negate else f"[{inner}]"), j + 1


def _alternatives(pat: str, i: int) -> tuple[list[str], int] | None:
    depth, start, parts = 0, i + 1, []
    j = i + 1
    while j < len(pat):
        ch = pat[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                parts.append(pat[start:j])
                return parts, j + 1
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(pat[start:j])
            start = j + 1
        j += 1
    return None


def glob_to_regex(pat: str) -> str:
    """Translate a gitignore-style glob (no leading ``/``) into a regular expression body."""
    if pat == "**":
        return ".*"
    out: list[str] = []
    i = 0
    while i < len(pat):
        if pat.startswith("**/", i) and (i == 0 or pat[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("/.*")
            i += 3
        elif pat[i] == "*":
            while i < len(pat) and pat[i] == "*":
                i += 1
            out.append("[^/]*")
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        elif pat[i] == "[" and (cls := _class(pat, i)):
            out.append(cls[0])
            i = cls[1]
        elif pat[i] == "{" and (alt := _alternatives(pat, i)):
            out.append("(?:" + "|".join(glob_to_regex(a) for a in alt[0]) + ")")
            i = alt[1]
        elif pat[i] == "\\" and i + 1 < len(pat):
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(pat[i]))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file (or one ``--glob``)."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    source: str


@lru_cache(maxsize=4096)
def compile_pattern(line: str, case_insensitive: bool = False) -> Pattern | None:
    """Parse one gitignore line; ``None`` for blanks and comments."""
    source = line
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = glob_to_regex(line)
    if not anchored:
        body = "(?:.*/)?" + body
    flags = re.IGNORECASE if case_insensitive else 0
    return Pattern(re.compile(body, flags | re.DOTALL), negated, dir_only, source)


def match_patterns(patterns: Sequence[Pattern], rel: str, is_dir: bool) -> bool | None:
    """``True`` ignored, ``False`` re-included, ``None`` no pattern matched (last match wins)."""
    for pat in reversed(patterns):
        if pat.dir_only and not is_dir:
            continue
        if pat.regex.fullmatch(rel):
            return not pat.negated
    return None


@dataclass
class DirRules:
    """The ignore patterns a directory contributes, by kind (with ``exclude`` for info/exclude)."""

    path: Path
    has_git: bool
    kinds: dict[str, list[Pattern]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> DirRules:
        rules = cls(path, os.path.exists(path / ".git"))
        for name in KINDS:
            rules.kinds[name] = _read_patterns(path / name)
        rules.kinds["exclude"] = _read_patterns(path / ".git" / "info" / "exclude") if rules.has_git else []
        return rules

    @property
    def empty(self) -> bool:
        return not any(self.kinds.values())


def _read_patterns(path: Path) -> list[Pattern]:
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return []
    return [p for line in text.split("\n") if (p := compile_pattern(line)) is not None]


def inside_git_repo(path: Path) -> bool:
    """Whether ``path`` or a directory above it holds ``.git``."""
    return any(os.path.exists(p / ".git") for p in (path, *path.parents))


def decide(stack: Sequence[DirRules], path: Path, is_dir: bool, repo_bounded: bool = True) -> bool:
    """Whether ``path`` is ignored, given the rules of its directory and every directory above it
    (``stack``, outermost first). With ``repo_bounded`` (searches inside a repository),
    ``.gitignore`` files above the nearest repository root do not count."""
    found: dict[str, bool | None] = dict.fromkeys((*KINDS, "exclude"))
    saw_git = False
    for rules in reversed(stack):
        if rules.empty:
            saw_git = saw_git or (repo_bounded and rules.has_git)
            continue
        rel = path.relative_to(rules.path).as_posix()
        for kind, patterns in rules.kinds.items():
            git_kind = kind in (".gitignore", "exclude")
            if found[kind] is None and patterns and not (git_kind and saw_git):
                found[kind] = match_patterns(patterns, rel, is_dir)
        saw_git = saw_git or (repo_bounded and rules.has_git)
    for kind in (*KINDS, "exclude"):
        if found[kind] is not None:
            return bool(found[kind])
    return False


@dataclass
class Overrides:
    """``--glob`` filters: a matching glob decides outright (``!glob`` excludes); when any positive
    glob exists, files matching none are left out (directories are still entered)."""

    patterns: list[Pattern]

    @classmethod
    def parse(cls, globs: Sequence[str], case_insensitive: bool = False) -> Overrides:
        # A matching plain glob means "include", a matching "!glob" means "exclude".
        return cls([p for g in globs if (p := compile_pattern(g, case_insensitive)) is not None])

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """``True`` include, ``False`` exclude, ``None`` no opinion."""
        m = match_patterns(self.patterns, rel, is_dir)
        if m is not None:
            return m
        if not is_dir and any(not p.negated for p in self.patterns):
            return False
        return None


def _ancestors(root: Path) -> list[DirRules]:
    chain = [root, *root.parents][::-1]
    return [DirRules.load(p) for p in chain[:-1]]


def walk(root: Path, overrides: Overrides | None = None) -> Iterator[tuple[str, bool]]:
    """Yield ``(relative posix path, is_dir)`` of every entry under ``root`` that the rules keep,
    in ripgrep's sorted order (entries of a directory by name, depth first). ``.git`` entries and
    symbolic links are skipped, hidden files are not."""
    root = Path(os.path.realpath(root))
    stack = _ancestors(root)
    yield from _walk_dir(root, "", [*stack, DirRules.load(root)], overrides, inside_git_repo(root))


def _walk_dir(directory: Path, prefix: str, stack: list[DirRules], overrides: Overrides | None,
              bounded: bool) -> Iterator[tuple[str, bool]]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git":
            continue
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                continue
        except OSError:
            continue
        rel = prefix + entry.name
        decision = overrides.decide(rel, is_dir) if overrides else None
        if decision is False or (decision is None and decide(stack, Path(entry.path), is_dir, bounded)):
            continue
        if is_dir:
            yield rel, True
            sub = Path(entry.path)
            yield from _walk_dir(sub, rel + "/", [*stack, DirRules.load(sub)], overrides, bounded)
        else:
            yield rel, False


__all__ = ["DirRules", "Overrides", "Pattern", "compile_pattern", "decide", "glob_to_regex", "inside_git_repo", "match_patterns",
           "walk"]
