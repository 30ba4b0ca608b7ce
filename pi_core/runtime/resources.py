"""Resources read at session start: context files (AGENTS.md), skills and prompt templates.

Every loader returns a :class:`LoadResult` — the items found plus :class:`ResourceDiagnostic` records
for what was skipped and why. A bad file never raises; it is reported and the rest still loads.
Discovery follows pi's rules and file names, so a repository set up for pi works unchanged.
Directory listings are sorted, so which of two same-named resources wins never depends on the
filesystem.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")
Source = Literal["user", "project", "path"]

#: Per directory, the first of these that exists is that directory's context file.
CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
SKILL_FILE = "SKILL.md"
MAX_SKILL_NAME = 64
MAX_SKILL_DESCRIPTION = 1024
IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


class ResourceError(Exception):
    """A resource could not be used when it was needed (e.g. a skill file vanished)."""


@dataclass(frozen=True)
class ResourceDiagnostic:
    """Why a file was skipped or is suspect. ``collision``: same name as ``winner``, which was kept."""

    kind: Literal["warning", "collision"]
    message: str
    path: Path | None = None
    winner: Path | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass
class LoadResult(Generic[T]):
    """What a loader found (``items``, in precedence order) and what it had to say about it."""

    items: list[T] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class ContextFiles(LoadResult["ContextFile"]):
    """The context files found, outermost first (``files``), and diagnostics."""

    @property
    def files(self) -> list[ContextFile]:
        return self.items


class SkillSet(LoadResult["Skill"]):
    """The skills found, in precedence order (``skills``), and diagnostics."""

    @property
    def skills(self) -> list[Skill]:
        return self.items


class TemplateSet(LoadResult["PromptTemplate"]):
    """The prompt templates found, in precedence order (``templates``), and diagnostics."""

    @property
    def templates(self) -> list[PromptTemplate]:
        return self.items


def _absolute(path: Path | str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path))))


def _default_agent_dir() -> Path:
    from pi_core.paths import agent_dir

    return agent_dir()


def _read_text(path: Path, diagnostics: list[ResourceDiagnostic]) -> str | None:
    """The file's text (BOM dropped); undecodable bytes are replaced and reported."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot read: {exc.strerror or exc}", path))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        diagnostics.append(ResourceDiagnostic("warning", "not valid UTF-8; undecodable bytes replaced", path))
        text = data.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff")


# -------------------------------------------------------------------------------------------------
# front matter: a `---` fenced block of simple YAML at the top of a markdown file


class FrontMatterError(ValueError):
    """The front matter is outside the YAML subset read here (the message gives the line)."""


_KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_. -]*?)[ \t]*:(?:[ \t]+(.*?))?[ \t]*\Z")
_BLOCK_HEADER = re.compile(r"([|>])([+-]?)[1-9]?[ \t]*(?:#.*)?\Z")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "\\": "\\", "/": "/", " ": " ",
            "b": "\b", "e": "\x1b", "a": "\a"}


def split_front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter text or None, body)``; newlines normalised, body stripped."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None, text.strip()
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:]).strip()
    return None, text.strip()  # never closed: not front matter (as pi reads it)


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter mapping, body)`` of a markdown file; :class:`FrontMatterError` if unreadable.

    Reads the YAML people write in front matter: ``key: value`` with plain, quoted and block
    (``|``/``>``) scalars, ``true``/``false``/``null``/numbers, block and flow lists, nested maps.
    """
    yaml, body = split_front_matter(text)
    return ({} if yaml is None else parse_yaml_mapping(yaml.split("\n"), first_line=2)), body


def parse_yaml_mapping(lines: Sequence[str], first_line: int = 1) -> dict[str, Any]:
    """A block mapping from ``lines`` (no leading indentation); ``first_line`` numbers errors."""
    result: dict[str, Any] = {}
    index = 0
    while index < len(lines):
        line, lineno = lines[index], first_line + index
        if _is_blank_or_comment(line):
            index += 1
            continue
        if line[:1] in (" ", "\t"):
            raise FrontMatterError(f"line {lineno}: unexpected indentation")
        match = _KEY_LINE.match(line)
        if not match:
            raise FrontMatterError(f"line {lineno}: expected 'key: value', found {line.strip()!r}")
        key, rest = match.group(1), match.group(2) or ""
        end = _block_end(lines, index + 1, allow_dash=not rest)
        if key in result:
            raise FrontMatterError(f"line {lineno}: duplicate key {key!r}")
        result[key] = _value(rest, lines[index + 1:end], lineno)
        index = end
    return result


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _block_end(lines: Sequence[str], start: int, allow_dash: bool) -> int:
    """The index after the lines belonging to the key above ``start`` (indented, or ``- `` items)."""
    end = index = start
    while index < len(lines):
        line = lines[index]
        if line.strip() and not (line[:1] in (" ", "\t") or (allow_dash and re.match(r"-(\s|$)", line))):
            break
        if line.strip():
            end = index + 1
        index += 1
    return end


def _value(rest: str, block: Sequence[str], lineno: int) -> Any:
    if _BLOCK_HEADER.match(rest):
        return _block_scalar(rest, block)
    if not rest:
        meaningful = [line for line in block if not _is_blank_or_comment(line)]
        if not meaningful:
            return None
        inner = _dedent(block)
        first = next(line for line in inner if not _is_blank_or_comment(line))
        if re.match(r"-(\s|$)", first):
            return _block_list(inner, lineno + 1)
        if _KEY_LINE.match(first):
            return parse_yaml_mapping(inner, lineno + 1)
        return _fold([line.strip() for line in block])
    text = " ".join([rest, *(line.strip() for line in block if line.strip())]) if block else rest
    return _inline_value(text, lineno)


def _dedent(block: Sequence[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in block if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in block]


def _inline_value(text: str, lineno: int) -> Any:
    if text[:1] in ('"', "'"):
        return _quoted(text, lineno)
    if text[:1] == "[":
        return _flow_list(text, lineno)
    if text[:1] == "{":
        return _flow_map(text, lineno)
    return _plain(re.sub(r"\s+#.*\Z", "", text))


def _quoted(text: str, lineno: int) -> str:
    quote = text[0]
    pattern = r'"((?:[^"\\]|\\.)*)"' if quote == '"' else r"'((?:[^']|'')*)'"
    match = re.match(pattern + r"[ \t]*(?:#.*)?\Z", text, re.S)
    if not match:
        raise FrontMatterError(f"line {lineno}: unterminated or malformed quoted value {text[:40]!r}")
    inner = match.group(1)
    if quote == "'":
        return inner.replace("''", "'")
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", _unescape, inner)


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, "\\" + code)


def _split_flow(text: str, lineno: int, opening: str, closing: str) -> list[str]:
    if not text.rstrip().endswith(closing):
        raise FrontMatterError(f"line {lineno}: {opening}...{closing} is not closed")
    items, current, quote = [], "", ""
    for char in text.strip()[1:-1]:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ",":
            items.append(current.strip())
            current = ""
            continue
        current += char
    items.append(current.strip())
    return [item for item in items if item]


def _flow_list(text: str, lineno: int) -> list[Any]:
    return [_inline_value(item, lineno) for item in _split_flow(text, lineno, "[", "]")]


def _flow_map(text: str, lineno: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for item in _split_flow(text, lineno, "{", "}"):
        key, sep, value = item.partition(":")
        if not sep:
            raise FrontMatterError(f"line {lineno}: expected 'key: value' in {{...}}, found {item!r}")
        result[key.strip().strip("\"'")] = _inline_value(value.strip(), lineno) if value.strip() else None
    return result


def _block_list(lines: Sequence[str], first_line: int) -> list[Any]:
    items: list[Any] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if _is_blank_or_comment(line):
            index += 1
            continue
        if not re.match(r"-(\s|$)", line):
            raise FrontMatterError(f"line {first_line + index}: expected a '- item' line")
        end = index + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t")):
            end += 1
        parts = [line[1:].strip(), *(part.strip() for part in lines[index + 1:end] if part.strip())]
        items.append(_inline_value(" ".join(p for p in parts if p), first_line + index))
        index = end
    return items


def _block_scalar(header: str, block: Sequence[str]) -> str:
    match = _BLOCK_HEADER.match(header)
    style, chomp = (match.group(1), match.group(2)) if match else ("|", "")
    lines = [line if line.strip() else "" for line in _dedent(block)]
    text = "\n".join(lines) if style == "|" else _fold(lines)
    # Trailing blank lines are not part of the block, so "keep" and "clip" both end in one newline.
    return text if chomp == "-" or not text else text + "\n"


def _fold(lines: Sequence[str]) -> str:
    """YAML folding: adjacent lines join with a space, an empty line becomes a newline."""
    out = ""
    for line in lines:
        if not line:
            out += "\n"
        elif out and not out.endswith("\n"):
            out += " " + line
        else:
            out += line
    return out.strip("\n ")


def _plain(text: str) -> Any:
    text = text.strip()
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


# -------------------------------------------------------------------------------------------------
# ignore files (.gitignore, .ignore, .fdignore) inside resource directories


class _IgnoreRules:
    """The ignore patterns met so far below ``root``; pathspec is imported only if there are any."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lines: list[str] = []
        self._spec: Any = None

    def add_dir(self, directory: Path, names: Collection[str] | None = None) -> None:
        """Read ``directory``'s ignore files (only those in ``names``, when the listing is known)."""
        rel = "" if directory == self.root else directory.relative_to(self.root).as_posix()
        for name in IGNORE_FILE_NAMES:
            if names is not None and name not in names:
                continue
            try:
                text = (directory / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            self.lines.extend(p for p in (_scoped_pattern(line, rel) for line in text.splitlines()) if p)
            self._spec = None

    def ignores(self, path: Path, is_dir: bool) -> bool:
        if not self.lines:
            return False
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        rel = path.relative_to(self.root).as_posix()
        return bool(self._spec.match_file(rel + "/" if is_dir else rel))


def _scoped_pattern(line: str, rel: str) -> str | None:
    """An ignore-file line rewritten to apply from ``root`` when the file sits in ``rel``."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if not rel:
        return stripped
    negated = stripped.startswith("!")
    pattern = stripped[1:] if negated else stripped
    anchored = "/" in pattern.rstrip("/")
    pattern = f"{rel}/{pattern.lstrip('/')}" if anchored else f"{rel}/**/{pattern}"
    return ("!" if negated else "") + pattern


_PATH_PROBLEMS = {"missing": "path does not exist", "error": "path cannot be accessed"}


def _path_kind(path: Path) -> Literal["dir", "file", "other", "missing", "error"]:
    """What ``path`` is (following symlinks), without raising."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "error"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _file_key(path: Path) -> tuple[int, int] | str:
    """The identity of a file or directory, so one reached twice (through a symlink) counts once."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return st.st_dev, st.st_ino


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda entry: entry.name)
    except OSError:
        return []


def _kind(entry: os.DirEntry[str]) -> tuple[bool, bool]:
    """``(is_dir, is_file)`` following symlinks; a broken link is neither."""
    try:
        return entry.is_dir(), entry.is_file()
    except OSError:
        return False, False


# -------------------------------------------------------------------------------------------------
# context files


@dataclass(frozen=True)
class ContextFile:
    """A project instruction file (AGENTS.md, CLAUDE.md) and its text."""

    path: Path
    content: str


def load_context_files(cwd: Path | str, agent_dir: Path | str | None = None, *,
                       no_context_files: bool = False) -> ContextFiles:
    """The context files for ``cwd``: the global ``<agent dir>/AGENTS.md`` first, then one per
    directory from the filesystem root down to ``cwd``. Nothing overrides anything: all are used.
    """
    result = ContextFiles()
    if no_context_files:
        return result
    cwd_path = _absolute(cwd)
    agent = _absolute(agent_dir) if agent_dir is not None else _default_agent_dir()
    global_file = _context_file_in(agent, result.diagnostics)
    seen = {_file_key(global_file.path)} if global_file else set()
    result.items.extend([global_file] if global_file else [])
    ancestors: list[ContextFile] = []
    for directory in (cwd_path, *cwd_path.parents):  # walk up, then read top-down
        found = _context_file_in(directory, result.diagnostics)
        if found is not None and _file_key(found.path) not in seen:
            seen.add(_file_key(found.path))
            ancestors.insert(0, found)
    result.items.extend(ancestors)
    return result


def _context_file_in(directory: Path, diagnostics: list[ResourceDiagnostic]) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = directory / name
        try:
            if not path.is_file():
                continue
        except OSError:
            continue
        text = _read_text(path, diagnostics)
        if text is not None:
            return ContextFile(path, text)
    return None


# -------------------------------------------------------------------------------------------------
# skills


@dataclass(frozen=True)
class Skill:
    """A skill: instructions in a markdown file, listed to the model by name and description.

    :param base_dir: the skill's directory; relative paths in the skill resolve against it.
    :param source: ``user`` (agent dir, ``~/.agents``), ``project`` (the repository) or ``path``
        (given explicitly: settings, CLI, plugins).
    :param disable_model_invocation: hidden from the system prompt; only ``/skill:name`` runs it.
    """

    name: str
    description: str
    file_path: Path
    base_dir: Path
    source: Source
    disable_model_invocation: bool = False
    front_matter: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def load_skills(cwd: Path | str, agent_dir: Path | str | None = None, *, trusted: bool,
                extra_paths: Iterable[Path | str] = (), include_defaults: bool = True,
                home: Path | str | None = None, package_paths: Iterable[Path | str] = (),
                enabled: Callable[[Path], bool] | None = None) -> SkillSet:
    """Skills from ``extra_paths`` (in order; files or directories, relative to ``cwd``), then the
    project's ``.pi/skills`` and ``.agents/skills`` (cwd up to the git root; only when ``trusted``),
    then ``<agent dir>/skills`` and ``~/.agents/skills``, then ``package_paths`` (what packages
    contribute: the user's and the project's own skills win over a package's, as in pi). The first
    skill with a name wins; a file ``enabled`` turns off (see :class:`ResourceFilter`) takes no name.
    """
    cwd_path = _absolute(cwd)
    agent = _absolute(agent_dir) if agent_dir is not None else _default_agent_dir()
    collector = _SkillCollector(enabled)
    for raw in extra_paths:
        collector.add_path(_resolve_against(raw, cwd_path))
    if include_defaults:
        for directory, source, root_files in _default_skill_dirs(cwd_path, agent, home, trusted):
            collector.add_dir(directory, source, root_files)
    for raw in package_paths:
        collector.add_path(_resolve_against(raw, cwd_path))
    return collector.result


def _resolve_against(raw: Path | str, base: Path) -> Path:
    path = Path(os.path.expanduser(os.fspath(raw).strip()))
    return Path(os.path.abspath(path if path.is_absolute() else base / path))


def _default_skill_dirs(cwd: Path, agent: Path, home: Path | str | None,
                        trusted: bool) -> list[tuple[Path, Source, bool]]:
    user_agents = _absolute(home if home is not None else Path.home()) / ".agents" / "skills"
    dirs: list[tuple[Path, Source, bool]] = []
    if trusted:
        dirs.append((cwd / ".pi" / "skills", "project", True))
        dirs.extend((d / ".agents" / "skills", "project", False) for d in _up_to_git_root(cwd)
                    if d / ".agents" / "skills" != user_agents)
    dirs.append((agent / "skills", "user", True))
    dirs.append((user_agents, "user", False))  # root-level .md files do not count in .agents/skills
    return dirs


def _up_to_git_root(cwd: Path) -> list[Path]:
    """``cwd`` and its parents up to the enclosing git repository's root (or the filesystem root)."""
    chain = [cwd, *cwd.parents]
    for index, directory in enumerate(chain):
        if (directory / ".git").exists():
            return chain[: index + 1]
    return chain


class _SkillCollector:
    def __init__(self, enabled: Callable[[Path], bool] | None = None) -> None:
        self.result = SkillSet()
        self._enabled = enabled
        self._by_name: dict[str, Skill] = {}
        self._seen: set[tuple[int, int] | str] = set()

    def add_path(self, path: Path) -> None:
        kind = _path_kind(path)
        if kind == "dir":
            self.add_dir(path, "path", True)
        elif kind == "file" and path.suffix == ".md":
            self._add_file(path, "path")
        else:
            self._warn(_PATH_PROBLEMS.get(kind, "a skill path must be a directory or a markdown file"), path)

    def add_dir(self, directory: Path, source: Source, root_files: bool) -> None:
        for path in skill_files(directory, root_files=root_files):
            self._add_file(path, source)

    def _add_file(self, path: Path, source: Source) -> None:
        key = _file_key(path)
        if key in self._seen:
            return  # the same file reached twice (a symlink): not a collision
        if self._enabled is not None and not self._enabled(path):
            return
        skill = load_skill_file(path, source, self.result.diagnostics)
        if skill is None:
            return
        winner = self._by_name.get(skill.name)
        if winner is not None:
            self.result.diagnostics.append(ResourceDiagnostic(
                "collision", f'skill name "{skill.name}" is already taken by {winner.file_path}; '
                "this one is ignored", path, winner.file_path))
            return
        self._by_name[skill.name] = skill
        self._seen.add(key)
        self.result.items.append(skill)

    def _warn(self, message: str, path: Path) -> None:
        self.result.diagnostics.append(ResourceDiagnostic("warning", message, path))


def skill_files(root: Path, *, root_files: bool = True) -> list[Path]:
    """Skill files under ``root``: a directory holding ``SKILL.md`` is one skill (not searched
    further); other directories are searched recursively; with ``root_files``, ``*.md`` directly in
    ``root`` count too. Hidden entries, ``node_modules`` and ignore-file matches are skipped.
    """
    found: list[Path] = []
    if _path_kind(root) == "dir":
        _walk_skills(root, _IgnoreRules(root), root_files, found, set())
    return found


def _walk_skills(directory: Path, rules: _IgnoreRules, root_files: bool, found: list[Path],
                 visited: set[tuple[int, int] | str]) -> None:
    key = _file_key(directory)
    if key in visited:
        return  # a symlink loop
    visited.add(key)
    entries = _entries(directory)
    rules.add_dir(directory, {entry.name for entry in entries})
    for entry in entries:
        if entry.name == SKILL_FILE and _kind(entry)[1] and not rules.ignores(Path(entry.path), False):
            found.append(Path(entry.path))
            return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        is_dir, is_file = _kind(entry)
        path = Path(entry.path)
        if (is_dir or is_file) and rules.ignores(path, is_dir):
            continue
        if is_dir:
            _walk_skills(path, rules, False, found, visited)
        elif is_file and root_files and entry.name.endswith(".md"):
            found.append(path)


def load_skill_file(path: Path, source: Source,
                    diagnostics: list[ResourceDiagnostic]) -> Skill | None:
    """One skill file, or ``None`` (reported in ``diagnostics``) when it cannot be a skill.

    A ``SKILL.md`` without a description is reported; another ``.md`` file without one is simply
    not a skill. Naming problems are warnings: the skill still loads.
    """
    declared = path.name == SKILL_FILE
    text = _read_text(path, diagnostics)
    if text is None:
        return None
    try:
        front, _ = parse_front_matter(text)
    except FrontMatterError as exc:
        if declared:
            diagnostics.append(ResourceDiagnostic("warning", f"skill not loaded: front matter {exc}", path))
        return None
    description = front.get("description")
    if not (isinstance(description, str) and description.strip()):
        if declared:
            diagnostics.append(ResourceDiagnostic(
                "warning", "skill not loaded: the front matter needs a 'description'", path))
        return None
    name = front.get("name") if isinstance(front.get("name"), str) and front.get("name") else (
        path.parent.name if declared else path.stem)
    for problem in skill_name_problems(name):
        diagnostics.append(ResourceDiagnostic("warning", problem, path))
    if len(description) > MAX_SKILL_DESCRIPTION:
        diagnostics.append(ResourceDiagnostic(
            "warning", f"description is longer than {MAX_SKILL_DESCRIPTION} characters ({len(description)})", path))
    return Skill(name=name, description=description, file_path=path, base_dir=path.parent, source=source,
                 disable_model_invocation=front.get("disable-model-invocation") is True, front_matter=front)


def skill_name_problems(name: str) -> list[str]:
    """What is wrong with a skill name under the Agent Skills rules (empty when it is fine)."""
    problems = []
    if len(name) > MAX_SKILL_NAME:
        problems.append(f"name {name!r} is longer than {MAX_SKILL_NAME} characters")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        problems.append(f"name {name!r} may hold only lowercase letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"name {name!r} must not start or end with a hyphen")
    if "--" in name:
        problems.append(f"name {name!r} must not contain two hyphens in a row")
    return problems


def _xml_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def expand_skill_command(text: str, skills: Iterable[Skill]) -> str | None:
    """``/skill:name [args]`` replaced by the skill's body in a ``<skill>`` block, args after it.

    Returns ``None`` when ``text`` is not a ``/skill:`` command or names no known skill. Raises
    :class:`ResourceError` when the skill's file can no longer be read.
    """
    match = re.match(r"/skill:(\S+)(?:\s+(.*))?\Z", text, re.S)
    if not match:
        return None
    skill = next((s for s in skills if s.name == match.group(1)), None)
    if skill is None:
        return None
    try:
        content = skill.file_path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ResourceError(f"cannot read skill {skill.name!r} ({skill.file_path}): {exc.strerror or exc}") from exc
    body = split_front_matter(content)[1]
    block = (f'<skill name="{_xml_attr(skill.name)}" location="{_xml_attr(str(skill.file_path))}">\n'
             f"Relative paths in this skill start from {skill.base_dir}.\n\n{body}\n</skill>")
    args = (match.group(2) or "").strip()
    return f"{block}\n\n{args}" if args else block


# -------------------------------------------------------------------------------------------------
# prompt templates


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template: ``/name args`` expands to ``content`` with the arguments filled in.

    :param description: the front matter's ``description``, else the body's first line (60 chars).
    :param argument_hint: the front matter's ``argument-hint`` (e.g. ``<file> [focus]``), if any.
    """

    name: str
    description: str
    content: str
    file_path: Path
    source: Source
    argument_hint: str | None = None


def load_prompt_templates(cwd: Path | str, agent_dir: Path | str | None = None, *, trusted: bool,
                          extra_paths: Iterable[Path | str] = (),
                          include_defaults: bool = True,
                          package_paths: Iterable[Path | str] = (),
                          enabled: Callable[[Path], bool] | None = None) -> TemplateSet:
    """Templates from ``extra_paths`` (files or directories, in order), then ``<cwd>/.pi/prompts``
    (only when ``trusted``), then ``<agent dir>/prompts``, then ``package_paths`` (files that packages
    contribute). Directories are not searched recursively. The first template with a name wins; a file
    ``enabled`` turns off takes no name.
    """
    cwd_path = _absolute(cwd)
    agent = _absolute(agent_dir) if agent_dir is not None else _default_agent_dir()
    result = TemplateSet()
    candidates: list[tuple[Path, Source]] = []
    for raw in extra_paths:
        candidates.extend(_template_candidates(_resolve_against(raw, cwd_path), result.diagnostics))
    if include_defaults:
        if trusted:
            candidates.extend((p, "project") for p in _markdown_files(cwd_path / ".pi" / "prompts"))
        candidates.extend((p, "user") for p in _markdown_files(agent / "prompts"))
    for raw in package_paths:
        candidates.extend(_template_candidates(_resolve_against(raw, cwd_path), result.diagnostics))
    if enabled is not None:
        candidates = [(path, source) for path, source in candidates if enabled(path)]
    _add_templates(candidates, result)
    return result


def _template_candidates(path: Path, diagnostics: list[ResourceDiagnostic]) -> list[tuple[Path, Source]]:
    kind = _path_kind(path)
    if kind == "dir":
        return [(p, "path") for p in _markdown_files(path)]
    if kind == "file" and path.suffix == ".md":
        return [(path, "path")]
    message = _PATH_PROBLEMS.get(kind, "a prompt template path must be a directory or a markdown file")
    diagnostics.append(ResourceDiagnostic("warning", message, path))
    return []


def _markdown_files(directory: Path) -> list[Path]:
    rules = _IgnoreRules(directory)
    entries = _entries(directory)
    rules.add_dir(directory, {entry.name for entry in entries})
    files = []
    for entry in entries:
        path = Path(entry.path)
        if entry.name.endswith(".md") and not entry.name.startswith(".") and _kind(entry)[1] \
                and not rules.ignores(path, False):
            files.append(path)
    return files


def _add_templates(candidates: list[tuple[Path, Source]], result: LoadResult[PromptTemplate]) -> None:
    by_name: dict[str, PromptTemplate] = {}
    seen: set[tuple[int, int] | str] = set()
    for path, source in candidates:
        key = _file_key(path)
        if key in seen:
            continue
        template = load_prompt_template_file(path, source, result.diagnostics)
        if template is None:
            continue
        winner = by_name.get(template.name)
        if winner is not None:
            result.diagnostics.append(ResourceDiagnostic(
                "collision", f'prompt template "/{template.name}" is already defined by {winner.file_path}; '
                "this one is ignored", path, winner.file_path))
            continue
        by_name[template.name] = template
        seen.add(key)
        result.items.append(template)


def load_prompt_template_file(path: Path, source: Source,
                              diagnostics: list[ResourceDiagnostic]) -> PromptTemplate | None:
    """One template file, or ``None`` (reported in ``diagnostics``)."""
    text = _read_text(path, diagnostics)
    if text is None:
        return None
    try:
        front, body = parse_front_matter(text)
    except FrontMatterError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"prompt template not loaded: front matter {exc}", path))
        return None
    description = front.get("description") if isinstance(front.get("description"), str) else ""
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), "")
        description = first[:60] + ("..." if len(first) > 60 else "")
    hint = front.get("argument-hint")
    return PromptTemplate(name=path.name.removesuffix(".md"), description=description, content=body,
                          file_path=path, source=source, argument_hint=hint if isinstance(hint, str) and hint else None)


def parse_command_args(text: str) -> list[str]:
    """Split a command's argument string as pi does: on whitespace, with ``"..."``/``'...'`` quoting.

    A quote opens only at the start of an argument (so ``don't`` stays one word); inside quotes a
    backslash before the same quote keeps it; an unclosed quote is read as a literal character;
    ``""`` is an (empty) argument.
    """
    args: list[str] = []
    current, started, quote, quote_start = "", False, "", 0
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\" and text[index + 1:index + 2] == quote:
                current += quote
                index += 1
            elif char == quote:
                quote = ""
            else:
                current += char
        elif char in "\"'" and not started:
            quote, quote_start, started = char, index, True
        elif char.isspace():
            if started:
                args.append(current)
                current, started = "", False
        else:
            current, started = current + char, True
        if quote and index >= len(text) - 1:
            # never closed: take the quote literally and read on from just after it
            quote, current, index = "", text[quote_start], quote_start
        index += 1
    if started:
        args.append(current)
    return args


_PLACEHOLDER = re.compile(
    r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}"  # ${1:-default}, ${@:-default}
    r"|\$\{@:(\d+)(?::(\d+))?\}"  # ${@:N}, ${@:N:L}
    r"|\$(ARGUMENTS|@|\d+)"  # $1, $@, $ARGUMENTS
)


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Fill a template's placeholders (``$1``, ``$@``, ``$ARGUMENTS``, ``${@:N}``, ``${@:N:L}``,
    ``${1:-default}``) from ``args`` in one pass: inserted values are never expanded again.
    """
    everything = " ".join(args)

    def positional(number: str) -> str | None:
        n = int(number)
        return args[n - 1] if 1 <= n <= len(args) else None

    def replace(match: re.Match[str]) -> str:
        target, default, start, length, simple = match.groups()
        if target is not None:
            value = everything if target in ("@", "ARGUMENTS") else positional(target)
            return value if value else default
        if start is not None:
            first = max(int(start) - 1, 0)
            picked = args[first:first + int(length)] if length is not None else args[first:]
            return " ".join(picked)
        if simple in ("@", "ARGUMENTS"):
            return everything
        return positional(simple) or ""

    return _PLACEHOLDER.sub(replace, content)


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str | None:
    """The expansion of ``/name args`` when ``name`` is a template; ``None`` when it is not."""
    match = re.match(r"/(\S+)(?:\s+(.*))?\Z", text, re.S)
    if not match:
        return None
    template = next((t for t in templates if t.name == match.group(1)), None)
    if template is None:
        return None
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))


__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "ContextFiles",
    "FrontMatterError",
    "LoadResult",
    "PromptTemplate",
    "ResourceDiagnostic",
    "ResourceError",
    "Skill",
    "SkillSet",
    "TemplateSet",
    "expand_prompt_template",
    "expand_skill_command",
    "load_context_files",
    "load_prompt_template_file",
    "load_prompt_templates",
    "load_skill_file",
    "load_skills",
    "parse_command_args",
    "parse_front_matter",
    "parse_yaml_mapping",
    "skill_files",
    "skill_name_problems",
    "split_front_matter",
    "substitute_args",
]
