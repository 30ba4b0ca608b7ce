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
) -> AgentSession:
    """Build and start a session.

    :param cwd: the project directory (default: the current directory).
    :param model: a :class:`pi_core.Model`, ``"provider/model"`` or a model id (fuzzy-matched).
    :param provider: restricts ``model`` to a provider.
    :param thinking_level: ``off``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``.
    :param tools: the active tool names (default: settings ``defaultTools``, else read, bash, edit, write).
    :param toolset: a registered toolset name instead of ``tools``.
    :param plugins: plugin objects for this session (no entry point needed).
    :param session: ``"new"``, ``"continue"`` (most recent of ``cwd``), ``"memory"`` (never written), a
        session file path or id, or a ready :class:`pi_core.SessionManager`.
    :param settings: overrides applied on top of the settings files.
    :param stream: a stream function replacing the provider call (hosts bringing their own model).
    :param api_key: an API key for the chosen model's provider, for this session only.
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
    manager = _session_manager(root, session, session_dir or config.session_dir_path)
    active = _active_tools(host, config, tools, toolset)
    level = thinking_level or _restored_level(manager) or config.default_thinking_level or "off"
    skills, templates = _skills_and_templates(root, agent, config)
    prompt = _prompt_factory(root, agent, config, skills, system_prompt, append_system_prompt)
    agent_session = AgentSession(
        host=host, session=manager, model=chosen, stream=stream or _bound_stream(models, api_key), tools=active,
        system_prompt=prompt, thinking_level=level, mode=mode, ui=ui, settings=config, models=models, flags=flags,
    )
    agent_session.skills, agent_session.templates = skills, templates
    if not manager.raw_entries():
        manager.append_model_change(chosen.provider, chosen.id)
        manager.append_thinking_level_change(level)
    await agent_session.start("startup" if session in ("new", "memory") else "resume")
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
    from .session import SessionManager

    if isinstance(choice, SessionManager):
        return choice
    if choice in (None, "new"):
        return SessionManager.create(cwd, session_dir=session_dir)
    if choice == "memory":
        return SessionManager.in_memory(cwd)
    if choice == "continue":
        return SessionManager.continue_recent(cwd, session_dir=session_dir)
    path = Path(str(choice)).expanduser()
    if path.suffix == ".jsonl" or path.exists():
        return SessionManager.open(path)
    found = SessionManager.find_by_id(cwd, str(choice), session_dir=session_dir)
    if found is None:
        matches = [info.path for info in SessionManager.list(cwd, session_dir) if info.id.startswith(str(choice))]
        if len(matches) > 1:
            raise SetupError(f"session id prefix {choice!r} matches {len(matches)} sessions; give more of it")
        found = matches[0] if matches else None
    if found is None:
        raise SetupError(f"no session {choice!r} for {cwd} (give a .jsonl path or a session id)")
    return SessionManager.open(found)


def _restored_level(manager: Any) -> str | None:
    if not manager.raw_entries():
        return None
    return manager.build_session_context().thinking_level


def _active_tools(host: PluginHost, config: Settings, tools: Sequence[str] | None, toolset: str | None) -> list[str]:
    if toolset is not None:
        chosen = host.toolsets.get(toolset)
        if chosen is None:
            known = ", ".join(sorted(host.toolsets.names())) or "none"
            raise SetupError(f"unknown toolset {toolset!r} (known: {known})")
        names = list(chosen.tools)
    elif tools is not None:
        names = list(tools)
    else:
        names = config.default_tool_names()
    unknown = [n for n in names if n not in host.tools]
    if unknown and (tools is not None or toolset is not None):
        known = ", ".join(sorted(host.tools.names())) or "none"
        raise SetupError(f"unknown tool(s) {', '.join(unknown)} (available: {known})")
    return [n for n in names if n in host.tools]


def _skills_and_templates(cwd: Path, agent: Path, config: Settings) -> tuple[list[Any], list[Any]]:
    from .runtime import resources

    skills = resources.load_skills(cwd, agent, trusted=config.trusted, extra_paths=config.skill_paths()).skills
    templates = resources.load_prompt_templates(cwd, agent, trusted=config.trusted,
                                                extra_paths=config.prompt_paths()).templates
    return list(skills), list(templates)


def _prompt_factory(cwd: Path, agent: Path, config: Settings, skills: list[Any], custom: str | None,
                    append: str | None) -> Callable[[list[Any]], Any]:
    from .runtime import resources, system_prompt

    trusted = config.trusted
    context_files = resources.load_context_files(cwd, agent).files

    def build(tools: list[Any]) -> Any:
        options = system_prompt.SystemPromptOptions(
            cwd=cwd, agent_dir=agent, tools=tools, custom_prompt=custom, append_prompt=append,
            context_files=context_files, skills=skills, trusted=trusted)
        return system_prompt.build_system_prompt(options)

    return build


__all__ = ["SetupError", "create_agent_session"]
