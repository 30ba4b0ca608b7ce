"""What a session is built from besides plugins: skills, prompt templates, themes, context files and
the system prompt — loaded at start-up, again with the paths plugins add (``resources_discover``),
and again on ``/reload``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..events import ResourcePaths
    from .resource_filter import ResourceKind
    from .resources import ContextFile, PromptTemplate, Skill
    from .settings import Settings
    from .system_prompt import SystemPrompt, SystemPromptOptions


@dataclass(frozen=True)
class ResourceOptions:
    """Resources for one session beyond what is discovered (pi's ``--skill``, ``--no-skills``, ...).

    Relative paths resolve against the session's cwd. ``no_skills``/``no_prompt_templates`` drop the
    discovered and configured ones; paths given here still load.
    """

    skill_paths: tuple[str | os.PathLike[str], ...] = ()
    no_skills: bool = False
    prompt_template_paths: tuple[str | os.PathLike[str], ...] = ()
    no_prompt_templates: bool = False
    no_context_files: bool = False
    #: Theme files or directories for the terminal (``--theme PATH``); ``no_themes`` drops the discovered,
    #: configured, package and plugin themes (``--no-themes``), these still load.
    theme_paths: tuple[str | os.PathLike[str], ...] = ()
    no_themes: bool = False


@dataclass
class SessionResources:
    """One load of the resources; ``system_prompt(tools)`` builds the prompt for the active tools."""

    loader: ResourceLoader
    skills: list[Skill] = field(default_factory=list)
    templates: list[PromptTemplate] = field(default_factory=list)
    themes: list[Path] = field(default_factory=list)
    context_files: list[ContextFile] = field(default_factory=list)

    def prompt_options(self, tools: Sequence[Any]) -> SystemPromptOptions:
        from .system_prompt import SystemPromptOptions

        loader = self.loader
        return SystemPromptOptions(
            cwd=loader.cwd, agent_dir=loader.agent_dir, tools=list(tools), custom_prompt=loader.custom_prompt,
            append_prompt=loader.append_prompt, context_files=list(self.context_files), skills=list(self.skills),
            trusted=loader.settings.trusted)

    def system_prompt(self, tools: Sequence[Any]) -> SystemPrompt:
        from .system_prompt import build_system_prompt

        return build_system_prompt(self.prompt_options(tools))


@dataclass
class ResourceLoader:
    """Loads :class:`SessionResources` for one project.

    :param custom_prompt: ``--system-prompt``; :param append_prompt: ``--append-system-prompt``.
    :param options: what the command line adds or leaves out (``--skill``, ``--no-skills``, ...).
    """

    cwd: Path
    agent_dir: Path
    settings: Settings
    custom_prompt: str | None = None
    append_prompt: str | None = None
    options: ResourceOptions = field(default_factory=ResourceOptions)
    packages: Any = None
    """Installed pi packages (``skill_paths``, ``prompt_paths``), when there are any."""

    def load(self, discovered: Sequence[ResourcePaths] = ()) -> SessionResources:
        """Load everything; ``discovered`` are plugins' ``resources_discover`` answers (their paths
        come first, as pi puts extension paths before the defaults)."""
        from . import resources

        trusted, extra = self.settings.trusted, self.options
        skill_paths = [*extra.skill_paths, *(p for found in discovered for p in found.skill_paths),
                       *(() if extra.no_skills else self.settings.skill_paths())]
        prompt_paths = [*extra.prompt_template_paths, *(p for found in discovered for p in found.prompt_paths),
                        *(() if extra.no_prompt_templates else self.settings.prompt_paths())]
        package_skills = getattr(self.packages, "skill_paths", ()) if not extra.no_skills else ()
        package_prompts = getattr(self.packages, "prompt_paths", ()) if not extra.no_prompt_templates else ()
        skills = resources.load_skills(self.cwd, self.agent_dir, trusted=trusted, extra_paths=skill_paths,
                                       include_defaults=not extra.no_skills, package_paths=package_skills,
                                       enabled=self._filter("skills")).skills
        templates = resources.load_prompt_templates(self.cwd, self.agent_dir, trusted=trusted,
                                                    extra_paths=prompt_paths, include_defaults=not extra.no_prompt_templates,
                                                    package_paths=package_prompts,
                                                    enabled=self._filter("prompts")).templates
        themes = [Path(p) for found in discovered for p in found.theme_paths]
        context = resources.load_context_files(self.cwd, self.agent_dir,
                                               no_context_files=extra.no_context_files).files
        return SessionResources(self, list(skills), list(templates), themes, list(context))

    def _filter(self, kind: ResourceKind) -> Callable[[Path], bool] | None:
        """The settings' ``!glob`` / ``+path`` / ``-path`` entries for ``kind`` (``None``: there are none)."""
        from .resource_filter import ResourceFilter

        rules = ResourceFilter(self.settings, kind, self.cwd, self.agent_dir)
        return rules.enabled if rules.active else None


__all__ = ["ResourceLoader", "ResourceOptions", "SessionResources"]
