"""Embedding pi: ``create_agent_session()`` builds a ready session for a host program.

    from pi_core import create_agent_session

    session = await create_agent_session(cwd="path/to/repo", model="anthropic/claude-sonnet-4-5",
                                         plugins=[MyDocsPlugin()])
    session.subscribe(print)
    await session.prompt("Upgrade the SDK calls in src/ to v2")

Plugins can be passed as objects (any object with ``@hookimpl`` methods), so a host needs no entry
points. The CLI builds its sessions through this same function, so a plugin behaves the same in every
mode.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .extensions.context import UI

if TYPE_CHECKING:
    from .ai.registry import ModelRegistry
    from .ai.types import Model
    from .extensions.manager import PluginHost
    from .runtime.agent_session import AgentSession
    from .runtime.settings import Settings

SessionChoice = Literal["new", "continue", "memory"]
NoTools = Literal["all", "builtin"]


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


class SetupError(Exception):
    """The session cannot be built as asked (unknown model, toolset, session...); the message says why."""


async def create_agent_session(
    cwd: str | os.PathLike[str] | None = None,
    *,
    model: Model | str | None = None,
    provider: str | None = None,
    thinking_level: str | None = None,
    tools: Sequence[str] | None = None,
    toolset: str | None = None,
    exclude_tools: Sequence[str] | None = None,
    no_tools: NoTools | None = None,
    plugins: Sequence[object] = (),
    session: Any = "new",
    session_dir: str | os.PathLike[str] | None = None,
    settings: Settings | dict[str, Any] | None = None,
    agent_dir: str | os.PathLike[str] | None = None,
    extension_paths: Sequence[str | os.PathLike[str]] = (),
    approve: bool | None = None,
    autoload: bool | None = None,
    discover_extensions: bool = True,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    mode: str = "sdk",
    ui: UI | None = None,
    flags: dict[str, Any] | None = None,
    host: PluginHost | None = None,
    stream: Callable[..., Any] | None = None,
    api_key: str | None = None,
    resources: ResourceOptions | None = None,
) -> AgentSession:
    """Build and start a session.

    :param cwd: the project directory (default: the current directory).
    :param model: a :class:`pi_core.Model`, ``"provider/model"`` or a model id (fuzzy-matched).
    :param provider: restricts ``model`` to a provider.
    :param thinking_level: ``off``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``.
    :param tools: the active tools: names and ``*`` patterns (an allowlist), or only ``+name``/``-name``
        entries editing the default (settings ``defaultTools``, else read, bash, edit, write).
    :param toolset: a registered toolset name instead of ``tools``.
    :param exclude_tools: names and ``*`` patterns never active (applied last).
    :param no_tools: ``"all"``: start with no tools; ``"builtin"``: without the default built-in ones.
    :param plugins: plugin objects for this session (no entry point needed).
    :param session: ``"new"``, ``"continue"`` (most recent of ``cwd``), ``"memory"`` (never written), a
        session file path or id, a ready :class:`pi_core.SessionManager`, or a function
        ``(cwd, session_dir) -> SessionManager`` that makes one.
    :param settings: overrides applied on top of the settings files.
    :param stream: a stream function replacing the provider call (hosts bringing their own model).
    :param api_key: an API key for the chosen model's provider, for this session only.
    :param resources: extra skill / prompt-template paths and what not to discover (``--skill``,
        ``--no-skills``, ``--no-context-files``, ...).
    """
    from .extensions.manager import build_plugin_host
    from .paths import agent_dir as default_agent_dir
    from .runtime.agent_session import AgentSession

    root = Path(cwd or os.getcwd()).resolve()
    agent = Path(agent_dir).expanduser() if agent_dir else default_agent_dir()
    host = host or build_plugin_host(root, agent_dir=agent, extension_paths=extension_paths, approve=approve,
                                     autoload=autoload, discover_extensions=discover_extensions, plugins=plugins)
    config = _settings(root, agent, host, settings)
    models = _model_registry(host, agent)
    chosen = _choose_model(models, config, model, provider)
    # --session-dir, then $PI_CODING_AGENT_SESSION_DIR, then the sessionDir setting (pi's order)
    env_dir = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    manager = _session_manager(root, session, session_dir or (None if env_dir else config.session_dir_path))
    resumed = bool(manager.raw_entries())
    active = _active_tools(host, config, tools, toolset, exclude_tools, no_tools)
    level = thinking_level or _restored_level(manager) or config.default_thinking_level or "off"
    resources = resources or ResourceOptions()
    skills, templates = _skills_and_templates(root, agent, config, resources, host)
    prompt = _prompt_factory(root, agent, config, skills, system_prompt, append_system_prompt, resources)
    agent_session = AgentSession(
        host=host, session=manager, model=chosen, stream=stream or _bound_stream(models, api_key), tools=active,
        system_prompt=prompt, thinking_level=level, mode=mode, ui=ui, settings=config, models=models, flags=flags,
    )
    agent_session.skills, agent_session.templates = skills, templates
    if not manager.raw_entries():
        manager.append_model_change(chosen.provider, chosen.id)
        manager.append_thinking_level_change(level)
    await agent_session.start("resume" if resumed else "startup")
    return agent_session


def _settings(cwd: Path, agent: Path, host: PluginHost, overrides: Any) -> Settings:
    from .runtime.settings import Settings

    trusted = any(r.source == "project" for r in host.records.values()) or bool(host.options.approve)
    if isinstance(overrides, Settings):
        return overrides
    loaded = Settings.load(cwd, agent, trusted=trusted)
    for key, value in (overrides or {}).items():
        loaded = loaded.model_copy(update={key: value})
    return loaded


def _model_registry(host: PluginHost, agent: Path) -> ModelRegistry:
    from .ai import ModelRegistry

    return ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=agent)


def _bound_stream(models: ModelRegistry, api_key: str | None) -> Callable[..., Any]:
    from .ai import stream

    def bound(model: Any, context: Any, **options: Any) -> Any:
        if api_key:
            options["api_key"] = api_key
        return stream(model, context, registry=models, **options)

    return bound


def _choose_model(models: ModelRegistry, config: Settings, model: Any, provider: str | None) -> Model:
    from .ai.types import Model as ModelType

    if isinstance(model, ModelType):
        return model
    wanted = model or config.default_model
    wanted_provider = provider or (config.default_provider if not model else None)
    try:
        return models.resolve(provider=wanted_provider, model=wanted)
    except LookupError as exc:
        raise SetupError(str(exc)) from exc


def _session_manager(cwd: Path, choice: Any, session_dir: Any) -> Any:
    from .session import SessionError

    try:
        return _open_session(cwd, choice, session_dir)
    except SessionError as exc:  # a locked, foreign or unreadable file: one line, no traceback
        raise SetupError(str(exc)) from exc


def _open_session(cwd: Path, choice: Any, session_dir: Any) -> Any:
    from .session import SessionManager

    if isinstance(choice, SessionManager):
        return choice
    if callable(choice):
        return choice(cwd, session_dir)
    if choice in (None, "new"):
        return SessionManager.create(cwd, session_dir=session_dir)
    if choice == "memory":
        return SessionManager.in_memory(cwd)
    if choice == "continue":
        return SessionManager.continue_recent(cwd, session_dir=session_dir)
    return SessionManager.open(find_session(cwd, str(choice), session_dir))


def find_session(cwd: Path, choice: str, session_dir: Any = None) -> Path:
    """The file of a session given as a path, an id or an id prefix among ``cwd``'s sessions."""
    from .session import SessionManager

    path = Path(choice).expanduser()
    if path.suffix == ".jsonl" or path.exists():
        return path
    found = SessionManager.find_by_id(cwd, choice, session_dir=session_dir)
    if found is None:
        matches = [info.path for info in SessionManager.list(cwd, session_dir) if info.id.startswith(choice)]
        if len(matches) > 1:
            raise SetupError(f"session id prefix {choice!r} matches {len(matches)} sessions; give more of it")
        found = matches[0] if matches else None
    if found is None:
        raise SetupError(f"no session {choice!r} for {cwd} (give a .jsonl path or a session id)")
    return found


def _restored_level(manager: Any) -> str | None:
    if not manager.raw_entries():
        return None
    return manager.build_session_context().thinking_level


def _active_tools(host: PluginHost, config: Settings, tools: Sequence[str] | None, toolset: str | None,
                  exclude: Sequence[str] | None = None, no_tools: NoTools | None = None) -> list[str]:
    from .extensions.manager import Diagnostic
    from .runtime.tool_choice import choose_tools

    if toolset is not None:
        chosen = host.toolsets.get(toolset)
        if chosen is None:
            known = ", ".join(sorted(host.toolsets.names())) or "none"
            raise SetupError(f"unknown toolset {toolset!r} (known: {known})")
        tools = list(chosen.tools)
    try:
        choice = choose_tools(config.default_tool_names(), tools=tools, exclude=exclude, no_tools=no_tools)
    except ValueError as exc:
        raise SetupError(f"--tools: {exc}") from exc
    available = list(host.tools.names())
    unknown = [n for n in choice.unknown(available) if not n.startswith("mcp__")]
    if unknown and (tools is not None or toolset is not None):
        known = ", ".join(sorted(available)) or "none"
        host.diagnostics.append(Diagnostic("warning", f"no tool named {', '.join(unknown)} (available: {known}); "
                                                      "continuing without it"))
    return choice.active(available)


def _skills_and_templates(cwd: Path, agent: Path, config: Settings,
                          extra: ResourceOptions, host: PluginHost) -> tuple[list[Any], list[Any]]:
    from .packages import package_set_for
    from .runtime import resources

    packages = package_set_for(host)
    skill_paths = [*extra.skill_paths, *(() if extra.no_skills else config.skill_paths())]
    template_paths = [*extra.prompt_template_paths, *(() if extra.no_prompt_templates else config.prompt_paths())]
    skills = resources.load_skills(cwd, agent, trusted=config.trusted, extra_paths=skill_paths,
                                   include_defaults=not extra.no_skills,
                                   package_paths=() if extra.no_skills else packages.skill_paths).skills
    templates = resources.load_prompt_templates(
        cwd, agent, trusted=config.trusted, extra_paths=template_paths, include_defaults=not extra.no_prompt_templates,
        package_paths=() if extra.no_prompt_templates else packages.prompt_paths).templates
    return list(skills), list(templates)


def _prompt_factory(cwd: Path, agent: Path, config: Settings, skills: list[Any], custom: str | None,
                    append: str | None, extra: ResourceOptions) -> Callable[[list[Any]], Any]:
    from .runtime import resources, system_prompt

    trusted = config.trusted
    context_files = resources.load_context_files(cwd, agent, no_context_files=extra.no_context_files).files

    def build(tools: list[Any]) -> Any:
        options = system_prompt.SystemPromptOptions(
            cwd=cwd, agent_dir=agent, tools=tools, custom_prompt=custom, append_prompt=append,
            context_files=context_files, skills=skills, trusted=trusted)
        return system_prompt.build_system_prompt(options)

    return build


__all__ = ["ResourceOptions", "SetupError", "create_agent_session"]
