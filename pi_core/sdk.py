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
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .extensions.context import UI
from .runtime.loader import ResourceOptions

if TYPE_CHECKING:
    from .ai.registry import ModelRegistry
    from .ai.types import Model
    from .extensions.manager import PluginHost
    from .runtime.agent_session import AgentSession
    from .runtime.settings import Settings

SessionChoice = Literal["new", "continue", "memory"]
NoTools = Literal["all", "builtin"]


class SetupError(Exception):
    """The session cannot be built as asked (unknown model, toolset, session...); the message says why."""


async def create_agent_session(
    cwd: str | os.PathLike[str] | None = None,
    *,
    model: Model | str | None = None,
    provider: str | None = None,
    thinking_level: str | None = None,
    scoped_models: Sequence[Model | str] = (),
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
    explicit: Collection[str] = (),
) -> AgentSession:
    """Build and start a session.

    :param cwd: the project directory (default: the current directory).
    :param model: a :class:`pi_core.Model`, ``"provider/model"`` or a model id (fuzzy-matched).
    :param provider: restricts ``model`` to a provider.
    :param thinking_level: ``off``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``.
    :param scoped_models: the models cycling goes through (``--models``): models or ``provider/id`` names.
    :param tools: the active tools: names and ``*`` patterns (an allowlist), or only ``+name``/``-name``
        entries editing the default (settings ``defaultTools``, else read, bash, edit, write; plus every
        plugin tool that does not opt out with ``Tool(default_active=False)``).
    :param toolset: a registered toolset name instead of ``tools``.
    :param exclude_tools: names and ``*`` patterns never active (applied last).
    :param no_tools: ``"all"``: start with no tools; ``"builtin"``: only the plugins' tools.
    :param plugins: plugin objects for this session (no entry point needed).
    :param session: ``"new"``, ``"continue"`` (most recent of ``cwd``), ``"memory"`` (never written), a
        session file path or id, a ready :class:`pi_core.SessionManager`, or a function
        ``(cwd, session_dir) -> SessionManager`` that makes one.
    :param settings: overrides applied on top of the settings files.
    :param stream: a stream function replacing the provider call (hosts bringing their own model).
    :param api_key: an API key for the chosen model's provider, for this session only.
    :param resources: extra skill / prompt-template paths and what not to discover (``--skill``,
        ``--no-skills``, ``--no-context-files``, ...).
    :param explicit: choices a switch to another session file keeps instead of restoring the session's own:
        ``"model"``, ``"thinking"``, ``"tools"`` (the CLI passes those its flags set, as pi keeps ``--model``).
    """
    from .extensions.manager import build_plugin_host
    from .paths import agent_dir as default_agent_dir
    from .runtime.agent_session import AgentSession
    from .runtime.loader import ResourceLoader

    root = Path(cwd or os.getcwd()).resolve()
    agent = Path(agent_dir).expanduser() if agent_dir else default_agent_dir()
    host = host or build_plugin_host(root, agent_dir=agent, extension_paths=extension_paths, approve=approve,
                                     autoload=autoload, discover_extensions=discover_extensions, plugins=plugins,
                                     **settings_for_host(root, agent))
    config = _settings(root, agent, host, settings)
    _apply_hook_timeouts(host, config)
    models = _model_registry(host, agent)
    _apply_shell_env(config, models)
    # --session-dir, then $PI_CODING_AGENT_SESSION_DIR, then the sessionDir setting (pi's order)
    env_dir = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    sessions_at = session_dir or (None if env_dir else config.session_dir_path)
    session = _other_project(root, session, sessions_at, mode)
    manager = _session_manager(root, session, sessions_at)
    resumed = manager.entry_count() > 0
    if resumed:
        manager = await _check_session_cwd(manager, root, mode, ui, sessions_at)
    restored = manager.build_session_context() if resumed else None
    scope = _model_scope(models, list(scoped_models) or _enabled_models(config))
    chosen, chosen_level = _initial_model(models, config, model, provider, scope, restored)
    explicit_tools = not (tools is None and toolset is None and exclude_tools is None and no_tools is None)
    if not explicit_tools and restored is not None:
        tools = _restored_tools(host, restored)
    active, admits = _active_tools(host, config, tools, toolset, exclude_tools, no_tools)
    level = _startup_level(chosen, config, thinking_level or chosen_level or _restored_level(manager))
    loader = ResourceLoader(root, agent, config, system_prompt, append_system_prompt, resources or ResourceOptions(),
                            _package_set(host))
    if api_key:
        models.set_api_key(chosen.provider, api_key)
    agent_session = AgentSession(
        host=host, session=manager, model=chosen, stream=stream or _bound_stream(models, config), tools=active,
        resources=loader,
        thinking_level=level, mode=mode, ui=ui, settings=config, models=models, flags=flags,
        scoped_models=[m for m, _ in scope], admits_tool=admits,
        explicit=frozenset(explicit),
        resume_tools=_resume_tools,
    )
    if not manager.entry_count():
        manager.append_model_change(chosen.provider, chosen.id)
        manager.append_thinking_level_change(level)
    await agent_session.start("resume" if resumed else "startup")
    return agent_session


def _apply_hook_timeouts(host: PluginHost, config: Settings) -> None:
    """The session's hook time limits: the settings' ``plugins.hookTimeoutMs`` (registration ran with the
    global file's, before the project was trusted)."""
    from .extensions.dispatch import HookTimeouts

    plugins = getattr(config, "plugins", None)
    if plugins is not None:
        host.dispatch.timeouts = HookTimeouts.from_settings(plugins)


def _apply_shell_env(config: Settings, models: ModelRegistry) -> None:
    """Processes started for the model lose the providers' key variables and credential-like names."""
    from .toolkit.shell_env import ShellEnvPolicy, set_shell_env_policy

    names = [n for p in models.get_providers() if (c := models.get_provider(p)) is not None for n in c.env_vars()]
    policy, problems = ShellEnvPolicy.from_setting(config.get("shellEnv"), names)
    for problem in problems:
        print(f"pi: settings: {problem}", file=sys.stderr)
    set_shell_env_policy(policy)


def _settings(cwd: Path, agent: Path, host: PluginHost, overrides: Any) -> Settings:
    from pydantic import BaseModel

    from .runtime.settings import Settings

    trusted = host.is_project_trusted()
    if isinstance(overrides, Settings):
        return overrides
    loaded = Settings.load(cwd, agent, trusted=trusted)
    for key, value in (overrides or {}).items():
        current = getattr(loaded, key, None)
        if isinstance(current, BaseModel) and isinstance(value, dict):  # a section: {"retry": {"max_retries": 1}}
            value = current.model_copy(update=value)
        loaded = loaded.model_copy(update={key: value})
    return loaded


def settings_for_host(cwd: Path, agent: Path) -> dict[str, Any]:
    """What :func:`pi_core.build_plugin_host` needs from the settings: ``defaultProjectTrust`` (a global
    setting) and, once trust is decided, the ``extensions`` entries of the files that count."""
    from .extensions.manager import ConfiguredExtensions
    from .runtime.settings import Settings

    def configured(trusted: bool) -> ConfiguredExtensions:
        from .runtime.resource_filter import ResourceFilter

        settings = Settings.load(cwd, agent, trusted=trusted)
        rules = ResourceFilter(settings, "extensions", cwd, agent)
        return ConfiguredExtensions(settings.extension_paths(), settings.builtin_extension_switches(),
                                    rules.enabled if rules.active else None)

    from .extensions.dispatch import HookTimeouts

    untrusted = Settings.load(cwd, agent, trusted=False)
    return {"default_trust": untrusted.default_project_trust, "configured": configured,
            "hook_timeouts": HookTimeouts.from_settings(untrusted.plugins)}


def _model_registry(host: PluginHost, agent: Path) -> ModelRegistry:
    from .ai import ModelRegistry

    return ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=agent)


def _bound_stream(models: ModelRegistry, config: Settings) -> Callable[..., Any]:
    """The registry's stream with pi's ``retry.provider.*`` settings applied to every request."""
    from .ai import RetryPolicy

    provider = config.retry.provider
    # retries inside one request (off by default; the agent retries whole turns itself)
    retry = RetryPolicy(provider.max_retries, config.retry.base_delay_ms, provider.max_retry_delay_ms) \
        if provider.max_retries > 0 else None
    # pi: retry.provider.timeoutMs wins over the HTTP idle timeout
    idle_ms = provider.timeout_ms or config.http_idle_timeout_ms
    if config.http_proxy:  # pi sets the variables, so tools and the shared httpx client both see them
        os.environ["HTTP_PROXY"] = os.environ["HTTPS_PROXY"] = config.http_proxy

    def bound(model: Any, context: Any, **options: Any) -> Any:
        if retry is not None:
            options.setdefault("retry", retry)
        if idle_ms:
            options.setdefault("read_timeout", idle_ms / 1000)
        return models.stream(model, context, **options)

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


def _initial_model(models: ModelRegistry, config: Settings, model: Any, provider: str | None,
                   scope: list[tuple[Model, str | None]], restored: Any) -> tuple[Model, str | None]:
    """pi's start-up model and the thinking level that came with it (a ``:level`` suffix, a scope entry's):
    ``--model``/``--provider``; else the resumed session's model (when it can still be used); else the
    first model of the scope (``--models``, else ``enabledModels``) for a new session; else
    ``defaultProvider``/``defaultModel``; else the first model with credentials (never ``faux``, unless
    ``PI_FAUX=1``)."""
    from .ai.types import Model as ModelType

    if isinstance(model, ModelType):
        return model, None
    if model or provider:
        try:
            resolved = models.resolve_full(provider=provider, model=model)
        except LookupError as exc:
            raise SetupError(str(exc)) from exc
        for warning in resolved.warnings:
            print(f"pi: {warning}", file=sys.stderr)
        return resolved.model, resolved.thinking_level
    fallback = None
    if restored is not None and restored.model is not None:
        ref = restored.model
        found = models.get_model(ref.provider, ref.model_id)
        if found is not None and models.has_configured_auth(found):
            return found, None
        fallback = f"Could not restore model {ref.provider}/{ref.model_id}"
    if scope and restored is None:
        return scope[0]
    if config.default_model or config.default_provider:
        chosen = _choose_model(models, config, None, None)
    else:
        chosen = _first_usable(models)
    if fallback:
        print(f"pi: {fallback}. Using {chosen.provider}/{chosen.id}", file=sys.stderr)
    return chosen, None


def _first_usable(models: ModelRegistry) -> Model:
    """pi's last resort: a provider's default model among the usable ones, else the first usable model."""
    hide_faux = os.environ.get("PI_FAUX") != "1"
    usable = [m for m in models.available_models() if not (hide_faux and m.provider == "faux")]
    for name in dict.fromkeys(m.provider for m in usable):
        default = models.default_model(name)
        if default is not None and any((m.provider, m.id) == (name, default.id) for m in usable):
            return default
    if usable:
        return usable[0]
    raise SetupError("No model available: set a provider's API key (pi --help lists the variables) or sign in "
                     "with `pi auth login <provider>`, add a provider to models.json, or pass --model")


def _enabled_models(config: Settings) -> list[str]:
    patterns = config.get("enabledModels")
    return [p for p in patterns if isinstance(p, str) and p.strip()] if isinstance(patterns, list) else []


def _model_scope(models: ModelRegistry, patterns: list[Any]) -> list[tuple[Model, str | None]]:
    """``--models`` / ``enabledModels`` as pi reads them: each entry a model, or a pattern (``*``/``?``
    globs against ``provider/id`` and ``id``, else exact or fuzzy as ``--model``) over the models that
    have credentials, with an optional ``:level``. A pattern matching nothing is reported."""
    import fnmatch

    from .ai.registry import valid_thinking_level
    from .ai.types import Model as ModelType

    scope: list[tuple[Model, str | None]] = []

    def add(found: Model, level: str | None) -> None:
        if all((m.provider, m.id) != (found.provider, found.id) for m, _ in scope):
            scope.append((found, level))

    available = models.available_models() if patterns else []
    for entry in patterns:
        if isinstance(entry, ModelType):
            add(entry, None)
            continue
        pattern, level = entry.strip(), None
        head, sep, tail = pattern.rpartition(":")
        if sep and valid_thinking_level(tail):
            pattern, level = head, tail
        if any(c in pattern for c in "*?["):
            wanted = pattern.lower()
            hits = [m for m in available if fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), wanted)
                    or fnmatch.fnmatchcase(m.id.lower(), wanted)]
            for hit in hits:
                add(hit, level)
            if not hits:
                print(f"pi: no model matches {entry!r} (--models / enabledModels)", file=sys.stderr)
            continue
        try:
            add(models.resolve(model=pattern), level)
        except LookupError:
            print(f"pi: no model matches {entry!r} (--models / enabledModels)", file=sys.stderr)
    return scope


def _restored_tools(host: PluginHost, restored: Any) -> list[str] | None:
    """The tools a resumed branch last declared to the model (pi restores them): the ones still
    registered and declared directly, and MCP tools that connect later; ``None`` when it declared none."""
    from .runtime.tool_changes import DeclaredTools

    # only the system messages are read and typed (all of them were, before)
    names = DeclaredTools().names(restored.message_list("system"))
    if not names:
        return None
    registered = set(host.tools.names())
    kept = [n for n in names if n.startswith("mcp__")
            or (n in registered and getattr(host.tools.get(n), "exposure", "direct") in ("direct", "model-only"))]
    return kept or None


def _resume_tools(session: AgentSession, restored: Any) -> list[str]:
    """The tools a session switched to starts with: those its branch last declared, else the defaults."""
    return _active_tools(session.host, session.settings, _restored_tools(session.host, restored), None)[0]


class StartCancelled(SetupError):
    """The user chose Cancel when asked how to open the session (pi exits with status 0)."""


async def _check_session_cwd(manager: Any, fallback: Path, mode: str, ui: UI | None, session_dir: Any) -> Any:
    """pi refuses, outside the terminal, to resume a session whose stored working directory is gone; in
    the terminal it asks whether to continue or fork the session in ``fallback``. Returns the session to use."""
    from .runtime.session_cwd import ask_missing_cwd, missing_session_cwd
    from .session import SessionManager

    issue = missing_session_cwd(manager, fallback)
    if issue is None:
        return manager
    if mode in ("print", "json", "rpc"):
        manager.close()
        raise SetupError(issue.error())
    if mode != "tui" or ui is None or not ui.has_ui:  # an SDK host decides itself
        return manager
    choice = await ask_missing_cwd(ui, issue)
    manager.close()
    if choice is None:
        raise StartCancelled("cancelled")
    if choice == "fork":
        return SessionManager.fork_from(issue.session_file, fallback, session_dir)
    return _session_manager(fallback, lambda cwd, _dir: SessionManager.open(issue.session_file, manager.session_dir,
                                                                            cwd_override=cwd), session_dir)


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
    """The file of a session given as a path, an id or an id prefix: ``cwd``'s sessions first, then those of
    every project (see :func:`locate_session`)."""
    return locate_session(cwd, choice, session_dir).path


@dataclass(frozen=True)
class FoundSession:
    """A session :func:`locate_session` found: its file, and the project it belongs to when that is
    another one than the directory asked about (``None``: that directory's own, or given as a path)."""

    path: Path
    other_project: Path | None = None


def locate_session(cwd: Path, choice: str, session_dir: Any = None) -> FoundSession:
    """pi's lookup of ``--session``/``--fork``: a path (with ``/`` or ``.jsonl``); else an id, or an id prefix,
    among ``cwd``'s sessions; else among every project's sessions (an exact id before a prefix).

    :raises SetupError: nothing matches, or a prefix matches several of ``cwd``'s sessions.
    """
    from .session import SessionManager

    path = Path(choice).expanduser()
    if "/" in choice or "\\" in choice or path.suffix == ".jsonl" or path.exists():
        return FoundSession(path if path.is_absolute() else cwd / path)
    found = SessionManager.find_by_id(cwd, choice, session_dir=session_dir)
    if found is None:
        matches = [info.path for info in SessionManager.list(cwd, session_dir) if info.id.startswith(choice)]
        if len(matches) > 1:
            raise SetupError(f"session id prefix {choice!r} matches {len(matches)} sessions; give more of it")
        found = matches[0] if matches else None
    if found is not None:
        return FoundSession(found)
    everywhere = SessionManager.list_all(session_dir)
    match = next((i for i in everywhere if i.id == choice), None) \
        or next((i for i in everywhere if i.id.startswith(choice)), None)
    if match is None:
        raise SetupError(f"No session found matching {choice!r} (give a .jsonl path or a session id)")
    return FoundSession(match.path, Path(match.cwd) if match.cwd else None)


FORK_QUESTION = "Fork this session into current directory?"


def _other_project(cwd: Path, choice: Any, session_dir: Any, mode: str) -> Any:
    """``--session <id>`` of another project, as pi 1.6 handles it: it says where the session was found and
    asks whether to fork it into ``cwd`` (yes: a copy here is used; no: ``StartCancelled``). The question is a
    line on stderr answered by a line on stdin, in every mode, before any interface starts (pi's readline
    prompt). An SDK host (``mode="sdk"``) opens the session where it is."""
    from .session import SessionManager

    if not isinstance(choice, str) or choice in ("new", "memory", "continue") or mode == "sdk":
        return choice
    found = locate_session(cwd, choice, session_dir)
    if found.other_project is None or found.other_project.resolve() == cwd.resolve():
        return str(found.path)
    print(f"Session found in different project: {found.other_project}", file=sys.stderr)
    print(f"{FORK_QUESTION} [y/N] ", end="", file=sys.stderr, flush=True)
    if _read_answer().strip().lower() not in ("y", "yes"):
        print("Aborted.", file=sys.stderr)
        raise StartCancelled("aborted")
    return SessionManager.fork_from(found.path, cwd, session_dir)


def _read_answer() -> str:
    """One line of stdin, read a byte at a time so that nothing after it is consumed (RPC commands and
    piped prompt text that follow stay for the mode); ``""`` at the end of input."""
    line = bytearray()
    try:
        while not line.endswith(b"\n"):
            byte = os.read(0, 1)
            if not byte:
                break
            line += byte
    except OSError:
        return ""
    return line.decode("utf-8", "replace")


def _startup_level(model: Model, config: Settings, given: str | None) -> str:
    """pi's rule: the flag or the resumed session's level, else the model's ``modelThinkingLevels`` entry,
    else ``defaultThinkingLevel``, else medium; clamped to what the model supports."""
    from .ai.request import clamp_thinking_level

    level = given or config.model_thinking_levels.get(f"{model.provider}/{model.id}") \
        or config.default_thinking_level or "medium"
    return clamp_thinking_level(model, level)


def _restored_level(manager: Any) -> str | None:
    if not manager.entry_count():
        return None
    return manager.build_session_context().thinking_level


def _active_tools(host: PluginHost, config: Settings, tools: Sequence[str] | None, toolset: str | None,
                  exclude: Sequence[str] | None = None,
                  no_tools: NoTools | None = None) -> tuple[list[str], Callable[[str], bool]]:
    """The tools to activate now, and the test tools registered later must pass to be activated."""
    from .extensions.manager import Diagnostic
    from .runtime.tool_choice import choose_tools

    if toolset is not None:
        chosen = host.toolsets.get(toolset)
        if chosen is None:
            known = ", ".join(sorted(host.toolsets.names())) or "none"
            raise SetupError(f"unknown toolset {toolset!r} (known: {known})")
        tools = list(chosen.tools)
    defaults, no_tools = _default_tools(host, config, no_tools)
    try:
        choice = choose_tools(defaults, tools=tools, exclude=exclude, no_tools=no_tools)
    except ValueError as exc:
        raise SetupError(f"--tools: {exc}") from exc
    available = list(host.tools.names())
    unknown = [n for n in choice.unknown(available) if not n.startswith("mcp__")]
    if unknown and (tools is not None or toolset is not None):
        known = ", ".join(sorted(available)) or "none"
        host.diagnostics.append(Diagnostic("warning", f"no tool named {', '.join(unknown)} (available: {known}); "
                                                      "continuing without it"))
    return choice.active(available), choice.admits


def _package_set(host: PluginHost) -> Any:
    from .packages import package_set_for

    return package_set_for(host)


def _default_tools(host: PluginHost, config: Settings,
                   no_tools: NoTools | None) -> tuple[list[str], NoTools | None]:
    """The default selection: the built-ins ``defaultTools`` names (pi's four by default), then every
    plugin tool that does not opt out (``Tool.default_active``), as pi activates extension tools.
    ``no_tools="builtin"`` keeps only the plugins' tools."""
    if no_tools == "all":
        return [], no_tools
    builtin = {n for n in host.tools.names() if _source_of(host, n) == "builtin"}
    plugin_tools = [n for n in host.tools.names() if n not in builtin and _active_by_default(host.tools.get(n))]
    if no_tools == "builtin":
        return plugin_tools, None
    chosen = config.default_tool_names()
    return chosen + [n for n in plugin_tools if n not in chosen], None


def _active_by_default(tool: Any) -> bool:
    """Declared tools are; deferred and hidden ones (reached through codemode or tool_search) are not."""
    return bool(getattr(tool, "default_active", True)) and getattr(tool, "exposure", "direct") in ("direct", "model-only")


def _source_of(host: PluginHost, tool: str) -> str | None:
    record = host.records.get(host.tools.plugin_of(tool) or "")
    return record.source if record is not None else None


__all__ = ["ResourceOptions", "SetupError", "StartCancelled", "create_agent_session"]
