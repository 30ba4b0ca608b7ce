"""The system prompt, built as pi 1.6 builds it: named sections in a fixed order.

An untagged ``preamble`` comes first, then ``<tools>``, ``<rules>``, ``<docs>``, ``<addendum>``
(appended text), ``<project_context>`` (AGENTS.md files), ``<skills>``, ``<cwd>`` and any sections a
plugin adds. With a custom base prompt (``--system-prompt``, ``.pi/SYSTEM.md``, ``<agent dir>/SYSTEM.md``)
that text is the preamble and tools, rules and docs are left out. There is no date line, so the prompt
(and the provider's prompt cache) stays the same all day.

In the session file the prompt is a ``role: "system"`` message with ``content: ""``, the rendered
sections and the declared tools (:meth:`SystemPrompt.to_system_message`), exactly as pi writes it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .resources import ContextFile, Skill

if TYPE_CHECKING:
    from pi_core.ai.types import SystemMessage, ToolDeclaration

#: pi 1.6's marker on every declared tool: prefer schema-constrained sampling where offered.
CONSTRAINED_SAMPLING = {"type": "json_schema", "strict": "prefer"}
SECTION_ORDER = ("preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd")
_SECTION_NAME = re.compile(r"[a-z][a-z0-9_-]*\Z")

PREAMBLE = ("You are a coding assistant working inside pi, a coding agent harness. You help users "
            "explore files, run commands and change code.")
MORE_TOOLS = "Other tools may be available as well."
SHELL_RULES = {
    "bash": "Use bash for file operations such as ls, rg and find.",
    "powershell": "Use PowerShell to list, search and find files.",
    "both": "Use bash or PowerShell to list, search and find files.",
}
CLOSING_RULES = ("Keep your answers short.", "Name file paths clearly when you work with files.")
PROJECT_CONTEXT_INTRO = "Instructions and conventions for this project, from its context files:"
SKILLS_INTRO = "The skills below hold instructions for particular kinds of task."
SKILLS_PATHS = ("Relative paths in a skill start from the skill's directory (the folder of its file); "
                "use absolute paths in tool calls.")

#: Topics of the docs section, listed when their file exists: (topic, file, also-see).
DOC_TOPICS = (
    ("plugins, hooks and custom tools", "plugins.md", "examples/"),
    ("settings, context files, skills, prompt templates and the system prompt", "configuration.md", ""),
    ("the built-in tools", "tools.md", ""),
    ("model providers and models", "providers.md", ""),
    ("session files", "sessions.md", ""),
)


@dataclass(frozen=True)
class DocsLocation:
    """Where this program's own documentation lives (told to the model in ``<docs>``)."""

    readme: Path
    docs: Path
    examples: Path


def default_docs_location() -> DocsLocation | None:
    """``README.md``, ``docs/`` and ``examples/`` beside the ``pi_core`` package, if present."""
    import pi_core

    root = Path(os.path.abspath(pi_core.__file__)).parent.parent
    location = DocsLocation(root / "README.md", root / "docs", root / "examples")
    return location if location.readme.is_file() or location.docs.is_dir() else None


@dataclass
class SystemPromptOptions:
    """What the system prompt is built from.

    :param cwd: the working directory (the ``<cwd>`` section; relative prompt paths resolve here).
    :param tools: the active tools, in order: objects with ``name``, ``prompt_snippet`` and
        ``prompt_guidelines`` (:class:`pi_core.Tool` has them). Tools without a snippet are not
        listed; their guidelines still count.
    :param custom_prompt: ``--system-prompt``: text, or the path of a file holding it. Without it,
        ``.pi/SYSTEM.md`` (trusted projects only), then ``<agent dir>/SYSTEM.md``.
    :param append_prompt: ``--append-system-prompt`` values (text or file paths; several are
        joined by blank lines). Without it, ``.pi/APPEND_SYSTEM.md`` (trusted), then
        ``<agent dir>/APPEND_SYSTEM.md``.
    :param guidelines: extra rules, after the tools' own.
    :param docs: the docs location; ``"auto"`` finds this package's, ``None`` leaves the section out.
    :param sections: extra named sections (lowercase names), placed after ``cwd``.
    """

    cwd: Path | str
    tools: Sequence[Any] = ()
    custom_prompt: str | None = None
    append_prompt: str | Sequence[str] | None = None
    agent_dir: Path | str | None = None
    trusted: bool = False
    context_files: Sequence[ContextFile] = ()
    skills: Sequence[Skill] = ()
    guidelines: Sequence[str] = ()
    docs: DocsLocation | Literal["auto"] | None = "auto"
    sections: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemPrompt:
    """A built system prompt.

    ``sections`` holds each section's own text in order (no tags); :attr:`rendered_sections` is
    pi's stored form (every section after the preamble wrapped in ``<name>…</name>``) and
    :attr:`text` is what the model receives: the rendered sections joined by blank lines.
    ``warnings`` reports prompt files that could not be read (their path was used as text).
    """

    sections: dict[str, str]
    warnings: tuple[str, ...] = ()

    @property
    def rendered_sections(self) -> dict[str, str]:
        return {name: body if name == "preamble" else f"<{name}>\n{body}\n</{name}>"
                for name, body in self.sections.items()}

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in self.rendered_sections.values() if part)

    def to_system_message(self, tools: Sequence[Any] = (), timestamp: int | None = None) -> SystemMessage:
        """pi 1.6's transcript entry: ``content=""``, the rendered sections, ``toolsAdded``.

        ``tools``: :class:`pi_core.Tool` objects, :class:`ToolDeclaration` objects or dicts with
        ``name``/``description``/``parameters``; each is marked with :data:`CONSTRAINED_SAMPLING`
        unless it says otherwise (see :func:`_declaration`).
        """
        from pi_core.ai.types import SystemMessage

        declared = [_declaration(tool) for tool in tools]
        extra: dict[str, Any] = {} if timestamp is None else {"timestamp": timestamp}
        return SystemMessage(content="", sections=self.rendered_sections, tools_added=declared or None, **extra)

    def diff(self, previous: Mapping[str, str | None] | None) -> dict[str, str | None] | None:
        """A ``sections`` patch from ``previous`` (rendered, as stored) to this prompt: changed or
        new sections with their text, dropped ones as ``None``; ``None`` when nothing changed.
        """
        current, before = self.rendered_sections, dict(previous or {})
        patch: dict[str, str | None] = {k: v for k, v in current.items() if before.get(k) != v}
        patch.update({k: None for k in before if k not in current})
        return patch or None


def _declaration(tool: Any) -> ToolDeclaration:
    """``tool`` as declared in ``toolsAdded``. Its ``constrained_sampling`` attribute (objects) or
    ``constrainedSampling`` key (declarations, dicts) wins; ``None`` there means "leave it out"
    (pi 1.6 leaves it out for grep, find and ls); otherwise :data:`CONSTRAINED_SAMPLING`.
    """
    from pi_core.ai.types import ToolDeclaration

    if hasattr(tool, "declaration") and callable(tool.declaration):
        decl, sampling = tool.declaration(), getattr(tool, "constrained_sampling", CONSTRAINED_SAMPLING)
    else:
        decl = tool if isinstance(tool, ToolDeclaration) else ToolDeclaration.model_validate(tool)
        sampling = (decl.model_extra or {}).get("constrainedSampling", CONSTRAINED_SAMPLING)
    extra = {} if sampling is None else {"constrainedSampling": dict(sampling)}
    return ToolDeclaration(name=decl.name, description=decl.description, parameters=decl.parameters, **extra)


# -------------------------------------------------------------------------------------------------
# building


def build_system_prompt(options: SystemPromptOptions) -> SystemPrompt:
    """Assemble the sections from ``options`` (reads SYSTEM.md / APPEND_SYSTEM.md when needed)."""
    cwd = Path(os.path.abspath(os.path.expanduser(os.fspath(options.cwd))))
    agent = _agent_dir(options.agent_dir)
    warnings: list[str] = []
    base = resolve_base_prompt(options.custom_prompt, cwd, agent, options.trusted, warnings)
    sections: dict[str, str] = {}
    if base:
        sections["preamble"] = base
    else:
        sections["preamble"] = PREAMBLE
        sections["tools"] = tools_section(options.tools)
        sections["rules"] = rules_section(options.tools, options.guidelines)
        docs = default_docs_location() if options.docs == "auto" else options.docs
        if docs is not None:
            sections["docs"] = docs_section(docs)
    addendum = resolve_append_prompt(options.append_prompt, cwd, agent, options.trusted, warnings)
    if addendum:
        sections["addendum"] = addendum
    if options.context_files:
        sections["project_context"] = project_context_section(options.context_files)
    skills = skills_section(options.skills, [_name(t) for t in options.tools])
    if skills:
        sections["skills"] = skills
    sections["cwd"] = str(cwd).replace("\\", "/")
    for name, content in options.sections.items():
        if not _SECTION_NAME.match(name) or name == "preamble":
            raise ValueError(f"invalid system prompt section name: {name!r}")
        if content:
            sections[name] = content
    return SystemPrompt(sections, tuple(warnings))


def _agent_dir(agent_dir: Path | str | None) -> Path:
    if agent_dir is not None:
        return Path(os.path.abspath(os.path.expanduser(os.fspath(agent_dir))))
    from pi_core.paths import agent_dir as default_agent_dir

    return default_agent_dir()


def _name(tool: Any) -> str:
    return str(getattr(tool, "name", tool))


def resolve_base_prompt(value: str | None, cwd: Path, agent_dir: Path, trusted: bool,
                        warnings: list[str]) -> str | None:
    """The custom base prompt: ``value`` (text or file), else ``.pi/SYSTEM.md`` if trusted, else
    ``<agent dir>/SYSTEM.md``; ``None`` when there is none (the default prompt is used).
    """
    if value is not None:
        return prompt_input(value, cwd, warnings)
    found = _first_file([cwd / ".pi" / "SYSTEM.md"] if trusted else [], agent_dir / "SYSTEM.md")
    return prompt_input(str(found), cwd, warnings) if found else None


def resolve_append_prompt(values: str | Sequence[str] | None, cwd: Path, agent_dir: Path, trusted: bool,
                          warnings: list[str]) -> str:
    """The text appended to the prompt: the given values, else ``.pi/APPEND_SYSTEM.md`` (trusted),
    else ``<agent dir>/APPEND_SYSTEM.md``. Project and global files are never combined.
    """
    if isinstance(values, str):
        values = [values]
    if not values:
        found = _first_file([cwd / ".pi" / "APPEND_SYSTEM.md"] if trusted else [], agent_dir / "APPEND_SYSTEM.md")
        values = [str(found)] if found else []
    texts = [prompt_input(v, cwd, warnings) for v in values]
    return "\n\n".join(t for t in texts if t)


def _first_file(project: list[Path], global_path: Path) -> Path | None:
    return next((p for p in (*project, global_path) if p.is_file()), None)


def prompt_input(value: str, cwd: Path, warnings: list[str]) -> str:
    """``value`` itself, or the contents of the file it names (relative to ``cwd``)."""
    if "\n" in value or len(value) > 4096 or not value.strip():
        return value
    path = Path(os.path.expanduser(value.strip()))
    path = path if path.is_absolute() else cwd / path
    try:
        if not path.is_file():
            if re.fullmatch(r"\S+\.(md|txt)", value.strip()):
                warnings.append(f"no prompt file {path}; using {value!r} as the prompt text")
            return value
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"cannot read prompt file {path} ({exc}); using the text as given")
        return value


def tools_section(tools: Sequence[Any]) -> str:
    """``- name: snippet`` for each tool that has a snippet (or ``(none)``), then a note that more
    tools may exist (tools without a snippet are still declared to the model).
    """
    lines = []
    for tool in tools:
        snippet = " ".join((getattr(tool, "prompt_snippet", None) or "").split())
        if snippet:
            lines.append(f"- {_name(tool)}: {snippet}")
    return f"{chr(10).join(lines) if lines else '(none)'}\n\n{MORE_TOOLS}"


def rules_section(tools: Sequence[Any], guidelines: Sequence[str] = ()) -> str:
    """Bullets: a shell rule when no search tools are active, each tool's guidelines, ``guidelines``,
    then the two closing rules. Repeats are dropped.
    """
    names = {_name(t) for t in tools}
    rules: list[str] = []

    def add(rule: str) -> None:
        rule = rule.strip()
        if rule and rule not in rules:
            rules.append(rule)

    shells = [s for s in ("bash", "powershell") if s in names]
    if shells and not names & {"grep", "find", "ls"}:
        add(SHELL_RULES["both" if len(shells) == 2 else shells[0]])
    for tool in tools:
        for rule in getattr(tool, "prompt_guidelines", None) or ():
            add(rule)
    for rule in (*guidelines, *CLOSING_RULES):
        add(rule)
    return "\n".join(f"- {rule}" for rule in rules)


def docs_section(docs: DocsLocation) -> str:
    """Where pi's own docs are, to be read only for questions about pi itself."""
    topics = [f"{topic} ({'docs/' + name}{', ' + extra if extra else ''})"
              for topic, name, extra in DOC_TOPICS if (docs.docs / name).is_file()]
    lines = [
        "pi's own documentation (read it only when the user asks about pi itself: its plugins, hooks, "
        "settings, skills, prompt templates or SDK):",
        f"- Overview: {docs.readme}",
        f"- Guides: {docs.docs}",
        f"- Examples: {docs.examples} (a pip-installable plugin, a project .pi/extensions file)",
        "- In these files docs/... and examples/... mean the folders above, not the working directory",
    ]
    if topics:
        lines.append(f"- Topics: {'; '.join(topics)}")
    lines.append("- Before changing how pi itself works, read the relevant docs and examples in full, "
                 "following their cross-references.")
    return "\n".join(lines)


def project_context_section(files: Sequence[ContextFile]) -> str:
    """Each context file in a ``<project_instructions path="…">`` block, after one intro line."""
    blocks = [f'<project_instructions path="{f.path}">\n{f.content.rstrip()}\n</project_instructions>'
              for f in files]
    return "\n\n".join([PROJECT_CONTEXT_INTRO, *blocks])


def skills_section(skills: Sequence[Skill], tool_names: Sequence[str]) -> str | None:
    """The ``<available_skills>`` list with how to use it; ``None`` when no skill is visible or no
    tool can read a skill's file (``read``, else ``bash``).
    """
    visible = [s for s in skills if not s.disable_model_invocation]
    reader = next((t for t in ("read", "bash") if t in tool_names), None)
    if not visible or reader is None:
        return None
    how = ("When a task matches a skill's description, load the skill's file with the read tool first."
           if reader == "read" else
           "When a task matches a skill's description, print the skill's file with bash first.")
    lines = [SKILLS_INTRO, how, SKILLS_PATHS, "", "<available_skills>"]
    for skill in visible:
        lines += ["  <skill>", f"    <name>{_xml(skill.name)}</name>",
                  f"    <description>{_xml(skill.description)}</description>",
                  f"    <location>{_xml(str(skill.file_path))}</location>", "  </skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _xml(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


__all__ = [
    "CONSTRAINED_SAMPLING",
    "DocsLocation",
    "SECTION_ORDER",
    "SystemPrompt",
    "SystemPromptOptions",
    "build_system_prompt",
    "default_docs_location",
    "docs_section",
    "project_context_section",
    "prompt_input",
    "resolve_append_prompt",
    "resolve_base_prompt",
    "rules_section",
    "skills_section",
    "tools_section",
]
