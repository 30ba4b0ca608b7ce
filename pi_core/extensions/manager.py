"""Building a session's plugin manager: the factory, load order, failure isolation and registries.

A fresh :class:`PluginHost` per session (never a module-level manager), loaded in this order:
built-in entry points, third-party entry points, global extensions, project extensions (trusted
projects only), ``-e`` files, then plugin objects passed by an SDK host. A plugin that fails to import,
implements an unknown hook or raises while registering is reported and unregistered; the rest keeps
working. ``PI_STRICT_PLUGINS=1`` makes such failures fatal.
"""

from __future__ import annotations

import difflib
import importlib
import os
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pluggy

import hookspecs

from .bus import EventBus
from .contributions import CliCommand, Command, Flag, Toolset
from .discovery import PluginSpec, extension_files, scan_entry_points
from .dispatch import Dispatcher, HookError, HookTimeouts, StrictPluginError
from .loader import import_extension
from .markers import hookimpl
from .registry import Conflict, Registry, Replacement
from ..paths import agent_dir as default_agent_dir
from .trust import TrustStore, TrustStoreError, has_trust_inputs

if TYPE_CHECKING:
    from .context import UI

REGISTRATION_HOOKS = ("register_tools", "register_commands", "register_providers", "register_toolsets",
                      "register_flags", "register_cli_commands")

TrustPrompt = Callable[[Path], "tuple[bool, bool] | None"]
"""Asks the user whether to trust a project: returns ``(trusted, remember)`` or ``None`` (no answer)."""


@dataclass
class Diagnostic:
    level: Literal["error", "warning", "info"]
    message: str
    plugin: str | None = None

    def __str__(self) -> str:
        return self.message


@dataclass
class PluginRecord:
    """What ``pi plugins`` shows for one plugin."""

    name: str
    source: str
    dist: str | None = None
    version: str | None = None
    path: Path | None = None
    error: str | None = None
    disabled: bool = False
    hooks: list[str] = field(default_factory=list)


class PiPluginManager(pluggy.PluginManager):
    """pluggy's manager plus what our dispatcher needs: load positions and a change counter."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.load_order: dict[str, int] = {}
        self.generation = 0

    def register(self, plugin: object, name: str | None = None) -> str | None:
        registered = super().register(plugin, name)
        if registered is not None:
            self.load_order.setdefault(registered, len(self.load_order))
            self.generation += 1
        return registered

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        result = super().unregister(plugin, name)
        self.generation += 1
        return result

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None and isinstance(plugin, type(os)):
            # A marked function imported from another module would otherwise register twice.
            # (Re-exports from the plugin's own sub-modules are fine.)
            module = getattr(getattr(plugin, name, None), "__module__", plugin.__name__) or ""
            if module != plugin.__name__ and not module.startswith(plugin.__name__ + "."):
                return None
        return opts


@dataclass
class HostOptions:
    cwd: Path
    agent_dir: Path
    extension_paths: Sequence[Path] = ()
    approve: bool | None = None
    autoload: bool = True
    discover_extensions: bool = True
    disabled: frozenset[str] = frozenset()
    strict: bool = False
    plugins: Sequence[object] = ()
    trust_prompt: TrustPrompt | None = None
    trust_ui: UI | None = None
    """``ctx.ui`` for ``project_trust`` handlers (they run before any mode exists)."""
    trust_mode: str = "sdk"
    """``ctx.mode`` for ``project_trust`` handlers: the mode pi is starting (``tui``, ``rpc``, ``json``,
    ``print``). Outside the terminal there is no UI, as in pi: dialogs answer "cancel" and notices go to
    stderr (an RPC client is not asked: the trust question is settled before the protocol starts)."""
    default_trust: str = "ask"
    temporary_packages: Sequence[tuple[Any, Path]] = ()
    """``-e`` package sources for this run, as ``(PackageSource, where it was fetched)``."""
    configured: Callable[[bool], ConfiguredExtensions] | None = None
    builtin_extensions: frozenset[str] = frozenset()
    """Built-in plugins asked for with ``-e builtin:<name>`` (they load even with ``--no-extensions``)."""
    hook_timeouts: HookTimeouts = field(default_factory=HookTimeouts)
    """The time limit of each hook call (``plugins.hookTimeoutMs``)."""


@dataclass(frozen=True)
class ConfiguredExtensions:
    """What the settings' ``extensions`` list asks for: files or directories, and built-ins on or off."""

    paths: Sequence[Path] = ()
    builtins: dict[str, bool] = field(default_factory=dict)
    enabled: Callable[[Path], bool] | None = None
    """Whether the settings' ``!glob`` / ``+path`` / ``-path`` entries leave an extension file on
    (``None``: there are none)."""

    def keep(self, files: Sequence[Path]) -> list[Path]:
        return [f for f in files if self.enabled(f)] if self.enabled is not None else list(files)


#: Built-in plugins that pi ships as extensions: ``--no-extensions`` turns them off too (as in pi), and
#: ``builtin:<name>`` entries in ``extensions`` (or ``-e builtin:<name>``) name them.
BUILTIN_EXTENSIONS = frozenset({"mcp", "codemode", "tool-search", "llama.cpp"})


class PluginHost:
    """One session's plugins: the manager, the dispatcher, what was registered, what went wrong."""

    def __init__(self, options: HostOptions) -> None:
        self.options = options
        self.cwd = options.cwd
        self.agent_dir = options.agent_dir
        self.pm = PiPluginManager()
        self.records: dict[str, PluginRecord] = {}
        self.diagnostics: list[Diagnostic] = []
        self.hook_errors: list[HookError] = []
        self.error_listeners: list[Callable[[HookError], None]] = []
        self.dispatch = Dispatcher(self.pm, on_error=self._on_hook_error, strict=options.strict,
                                   timeouts=options.hook_timeouts)
        self.events = EventBus(on_error=self._on_bus_error)
        """The bus the plugins of this session share (``ctx.events``)."""
        self.tools: Registry[Any] = Registry("tool", lambda t: t.name)
        self.commands: Registry[Command] = Registry("command", lambda c: c.name)
        self.apis: Registry[Any] = Registry("api", lambda a: a.api)
        self.providers: Registry[Any] = Registry("provider", lambda p: p.name)
        self.toolsets: Registry[Toolset] = Registry("toolset", lambda t: t.name)
        self.flags: Registry[Flag] = Registry("flag", lambda f: f.name)
        self.cli_commands: Registry[CliCommand] = Registry("cli command", lambda c: c.name)
        self.packages: Any = None
        """The session's :class:`pi_core.packages.resolve.PackageSet` (settings ``packages`` and installs)."""
        self.project_trusted: bool | None = None
        """This run's trust decision for the project's ``.pi/`` files (settings, extensions, skills, ...);
        ``None`` until it is needed."""

    def is_project_trusted(self) -> bool:
        """This run's trust decision for the project (``--approve``, trust.json, ``defaultProjectTrust``,
        or the user's answer), taken once; a project with nothing trust gates is not asked about."""
        if self.project_trusted is None and not has_trust_inputs(self.cwd):
            return bool(self.options.approve)
        return _project_trusted(self)

    # -- loading -------------------------------------------------------------------------------

    def load(self, spec: PluginSpec, obtain: Callable[[], object]) -> None:
        """Import (``obtain``) and register one plugin, isolating every failure."""
        record = PluginRecord(spec.name, spec.source, spec.dist, spec.version, spec.path)
        if spec.name in self.records:
            other = self.records[spec.name]
            self._fail(record, f"plugin name {spec.name!r} is already taken by "
                               f"{other.dist or other.source}; this one was not loaded", keep=False)
            return
        self.records[spec.name] = record
        if spec.name in self.options.disabled:
            record.disabled = True
            return
        try:
            plugin = obtain()
        except (Exception, SystemExit) as exc:
            self._fail(record, f"failed to import: {_describe(exc)}")
            return
        if spec.source == "builtin":
            self.dispatch.unlimited.add(spec.name)
        try:
            self.pm.register(plugin, name=spec.name)
        except (ValueError, pluggy.PluginValidationError) as exc:
            self._fail(record, f"cannot be registered: {exc}")
            return
        problem = self._check_hooks(plugin)
        if problem:
            self.pm.unregister(plugin)
            self._fail(record, problem)
            return
        record.hooks = sorted(c.name for c in self.pm.get_hookcallers(plugin) or ())

    def _check_hooks(self, plugin: object) -> str | None:
        for caller in self.pm.get_hookcallers(plugin) or ():
            if caller.spec is None:
                close = [hookspecs.PI_NAMES[caller.name]] if caller.name in hookspecs.PI_NAMES else \
                    difflib.get_close_matches(caller.name, hookspecs.DISPATCH_MODES, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                return f"implements unknown hook {caller.name!r}{hint}"
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper):
                    return f"uses a hook wrapper for {caller.name!r}; pi hooks do not support wrappers"
        return None

    def _fail(self, record: PluginRecord, message: str, *, keep: bool = True) -> None:
        text = f"plugin {record.name!r} ({record.dist or record.source}) {message}"
        if self.options.strict:
            raise StrictPluginError(text)
        if keep:
            record.error = message
        self.diagnostics.append(Diagnostic("error", text, record.name))

    # -- registration --------------------------------------------------------------------------

    def run_registrations(self) -> None:
        for hook in REGISTRATION_HOOKS:
            self.dispatch.call_each_sync(hook, lambda plugin, h=hook: {"register": self._registrar(h, plugin)},
                                         self._registration_failed)

    def _registrar(self, hook: str, plugin: str) -> Callable[..., None]:
        def register(item: Any, *, replaces: str | None = None, name: str | None = None,
                     help: str | None = None) -> None:
            if self.pm.get_plugin(plugin) is None:
                return  # a handler that ran out of time and was unregistered, still registering: ignored
            if hook == "register_cli_commands":
                item = item if isinstance(item, CliCommand) else CliCommand(
                    name or item.__name__.replace("_", "-"), item, help)
            _check_item(hook, item)
            self.registry_for(hook, item).add(item, plugin, replaces=replaces)

        return register

    def registry_for(self, hook: str, item: Any) -> Registry[Any]:
        if hook == "register_providers":
            return self.apis if getattr(item, "stream", None) is not None else self.providers
        return {"register_tools": self.tools, "register_commands": self.commands,
                "register_toolsets": self.toolsets, "register_flags": self.flags,
                "register_cli_commands": self.cli_commands}[hook]

    def _registration_failed(self, plugin: str, exc: BaseException) -> None:
        for registry in self.registries():
            registry.remove_plugin(plugin)
        obj = self.pm.get_plugin(plugin)
        if obj is not None:
            self.pm.unregister(obj)
        record = self.records.get(plugin) or PluginRecord(plugin, "unknown")
        self._fail(record, f"failed while registering: {_describe(exc)}")

    def registries(self) -> list[Registry[Any]]:
        return [self.tools, self.commands, self.apis, self.providers, self.toolsets, self.flags, self.cli_commands]

    # -- reporting -----------------------------------------------------------------------------

    def conflicts(self) -> list[Conflict]:
        return [c for r in self.registries() for c in r.conflicts]

    def replacements(self) -> list[Replacement]:
        return [c for r in self.registries() for c in r.replacements]

    def failed(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.error]

    def contributions(self, plugin: str) -> dict[str, list[str]]:
        return {
            "tools": self.tools.by_plugin(plugin),
            "commands": self.commands.by_plugin(plugin),
            "providers": [*self.apis.by_plugin(plugin), *self.providers.by_plugin(plugin)],
            "toolsets": self.toolsets.by_plugin(plugin),
        }

    def describe(self) -> list[dict[str, Any]]:
        """One JSON object per plugin, in load order (``pi plugins --json``)."""
        rows = []
        for record in self.records.values():
            rows.append({
                "name": record.name, "source": record.source, "dist": record.dist, "version": record.version,
                "path": str(record.path) if record.path else None, "hooks": record.hooks,
                **self.contributions(record.name), "disabled": record.disabled, "error": record.error,
            })
        return rows

    def _on_bus_error(self, channel: str, exc: BaseException) -> None:
        self._on_hook_error(HookError("events", f"events:{channel}", exc, "".join(traceback.format_exception(exc))))

    def _on_hook_error(self, error: HookError) -> None:
        self.hook_errors.append(error)
        for listener in list(self.error_listeners):
            listener(error)


def _check_item(hook: str, item: Any) -> None:
    needs = {"register_tools": ("name", "execute", "parameters"), "register_commands": ("name", "handler"),
             "register_toolsets": ("name", "tools"), "register_flags": ("name", "type"),
             "register_cli_commands": ("name", "callback"), "register_providers": ("api",)}[hook]
    if hook == "register_providers" and getattr(item, "stream", None) is None:
        needs = ("name",)
    missing = [a for a in needs if getattr(item, a, None) is None]
    if missing:
        raise TypeError(f"{hook}: {type(item).__name__} is missing {', '.join(missing)}")


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    if isinstance(cause, SystemExit):
        return f"SystemExit({cause.code!r})"
    return f"{type(cause).__name__}: {cause}"


# -------------------------------------------------------------------------------------------------
# the factory


def _env_set(name: str) -> frozenset[str]:
    return frozenset(p.strip() for p in os.environ.get(name, "").split(",") if p.strip())


def build_plugin_host(
    cwd: Path | str | None = None,
    *,
    agent_dir: Path | str | None = None,
    extension_paths: Iterable[Path | str] = (),
    approve: bool | None = None,
    autoload: bool | None = None,
    discover_extensions: bool = True,
    disabled: Iterable[str] | None = None,
    strict: bool | None = None,
    plugins: Sequence[object] = (),
    trust_prompt: TrustPrompt | None = None,
    default_trust: str = "ask",
    temporary_packages: Sequence[tuple[Any, Path]] = (),
    configured: Callable[[bool], ConfiguredExtensions] | None = None,
    trust_ui: UI | None = None,
    trust_mode: str = "sdk",
    hook_timeouts: HookTimeouts | None = None,
) -> PluginHost:
    """Build a fresh plugin host for one session.

    :param cwd: the project directory (default: the current directory).
    :param agent_dir: pi's agent dir (default: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``).
    :param extension_paths: files given with ``-e``; they load without a trust decision.
    :param approve: ``True`` trusts the project for this run (``--approve``), ``False`` distrusts it.
    :param autoload: load third-party entry points (default: unless ``PI_DISABLE_PLUGIN_AUTOLOAD``).
    :param discover_extensions: load ``~/.pi/agent/extensions`` and ``.pi/extensions`` (``--no-extensions``).
    :param disabled: plugin names not to load (default: ``$PI_DISABLE_PLUGINS``).
    :param strict: make plugin failures fatal (default: ``$PI_STRICT_PLUGINS``).
    :param plugins: plugin objects (modules or instances) from an SDK host.
    :param trust_prompt: asks the user about an undecided project (interactive mode only).
    :param trust_ui: ``ctx.ui`` inside ``project_trust`` handlers (default: no UI, ``ctx.has_ui`` False).
    :param trust_mode: ``ctx.mode`` inside ``project_trust`` handlers (``tui``, ``rpc``, ``json``, ``print``;
        default ``sdk``); without ``trust_ui``, the modes other than ``sdk`` print handlers' notices on stderr.
    :param default_trust: ``ask``, ``always`` or ``never`` (pi's ``defaultProjectTrust``).
    :param temporary_packages: packages fetched for this run only (``pi -e git+URL``).
    :param configured: given the trust decision, the settings' ``extensions`` entries (paths load like
        discovered extensions; ``builtin:<name>`` switches built-in plugins on or off).
    :param hook_timeouts: the time limit of each hook call (default: ``plugins.hookTimeoutMs``'s default,
        5 s; registration hooks run with it while the host is built).
    """
    paths = [str(p) for p in extension_paths]
    builtins = frozenset(_builtin_name(p) for p in paths if p.startswith("builtin:"))
    options = HostOptions(
        cwd=Path(cwd or os.getcwd()).resolve(),
        agent_dir=Path(agent_dir).expanduser() if agent_dir else default_agent_dir(),  # pi's rules
        extension_paths=[Path(p).expanduser().resolve() for p in paths if not p.startswith("builtin:")],
        builtin_extensions=builtins,
        configured=configured,
        approve=approve,
        autoload=(not os.environ.get("PI_DISABLE_PLUGIN_AUTOLOAD")) if autoload is None else autoload,
        discover_extensions=discover_extensions,
        disabled=frozenset(disabled) if disabled is not None else _env_set("PI_DISABLE_PLUGINS"),
        strict=(os.environ.get("PI_STRICT_PLUGINS", "") not in ("", "0")) if strict is None else strict,
        plugins=plugins,
        trust_prompt=trust_prompt,
        trust_ui=trust_ui,
        trust_mode=trust_mode,
        default_trust=default_trust,
        temporary_packages=temporary_packages,
        hook_timeouts=hook_timeouts if hook_timeouts is not None else HookTimeouts(),
    )
    host = PluginHost(options)
    _populate(host)
    return host


def _populate(host: PluginHost) -> None:
    options = host.options
    _resolve_packages(host)
    configured = options.configured or (lambda trusted: ConfiguredExtensions())
    untrusted = configured(False)  # the global settings' entries
    switches = untrusted.builtins
    if configured(True).builtins != switches:  # the project switches built-ins: they act before plugins load
        switches = configured(host.is_project_trusted()).builtins
    _switch_builtins(host, switches)
    _load_entry_points(host)
    if options.discover_extensions:
        _load_packages(host)
        _load_files(host, "global", untrusted.keep(extension_files(options.agent_dir / "extensions")))
        _load_configured(host, untrusted.paths, untrusted)
    # -e files load before the project's extensions so that their project_trust handlers can decide;
    # handlers still run in pi's order (project extensions before -e files), see _project_before_cli.
    _load_files(host, "cli", [p for p in options.extension_paths if _exists(host, p)])
    if options.discover_extensions:
        _load_project(host, configured)
        # decided only when the project lists some (a project with nothing to trust stays undecided)
        extra = [p for p in configured(True).paths if p not in untrusted.paths]
        if extra and host.is_project_trusted():
            _load_configured(host, extra, configured(True))
        _project_before_cli(host)
    _load_objects(host, options.plugins)
    host.run_registrations()


def _project_before_cli(host: PluginHost) -> None:
    order = host.pm.load_order
    project = [n for n, r in host.records.items() if r.source == "project" and n in order]
    cli = [n for n, r in host.records.items() if r.source == "cli" and n in order]
    if not project or not cli:
        return
    start = min(order[n] for n in cli)
    for position, name in enumerate([*project, *cli], start):
        order[name] = position
    host.pm.generation += 1


def rebuild_plugin_host(host: PluginHost) -> PluginHost:
    """A fresh host with ``host``'s options, for ``/reload``: extension files are imported again (edits
    take effect); installed packages and SDK plugin objects are the ones already imported. The event
    bus is new: plugins subscribe again from ``session_start``."""
    import sys

    from .loader import module_name_for

    for record in host.records.values():
        if record.path is not None and record.source in ("global", "project", "cli"):
            sys.modules.pop(module_name_for(record.path), None)
    fresh = PluginHost(host.options)
    fresh.dispatch.timeouts = host.dispatch.timeouts  # the session's (the settings read after the host was built)
    fresh.error_listeners = host.error_listeners
    _populate(fresh)
    return fresh


def _resolve_packages(host: PluginHost) -> None:
    """The settings' packages (the project's only when trusted), before anything loads: their filters
    can switch entry-point plugins off."""
    from ..packages.resolve import read_package_entries, resolve_packages

    listed = read_package_entries(host.cwd / ".pi" / "settings.json")
    trusted = _project_trusted(host) if listed else False
    host.packages = resolve_packages(host.cwd, host.agent_dir, trusted=trusted,
                                     temporary=host.options.temporary_packages)
    for package in host.packages.missing:
        where = "project" if package.scope == "project" else "user"
        host.diagnostics.append(Diagnostic("warning", f"package {package.source.text} ({where} settings) is not "
                                                      f"installed: {package.problem or 'run `pi install`'}"))


def _load_entry_points(host: PluginHost) -> None:
    disabled = host.packages.disabled_plugins if host.packages is not None else set()
    for spec in scan_entry_points():
        if spec.source == "entrypoint" and not host.options.autoload:
            continue
        if spec.source == "entrypoint" and spec.name in disabled:
            host.records[spec.name] = PluginRecord(spec.name, spec.source, spec.dist, spec.version, disabled=True)
            continue
        host.load(spec, lambda spec=spec: _import_target(spec.module))


def _load_packages(host: PluginHost) -> None:
    """Extension files of directory packages (git clones, local folders), in package order."""
    for package, path in host.packages.extension_files if host.packages is not None else ():
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        name = f"package:{stem}"
        host.load(PluginSpec(name, str(path), "package", dist=package.source.text, path=path),
                  lambda path=path: import_extension(path))


def _import_target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name.strip())
    return getattr(module, attr.strip()) if attr else module


def _load_files(host: PluginHost, source: str, paths: Iterable[Path]) -> None:
    for path in paths:
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        name = f"cli:{path}" if source == "cli" else f"{source}:{stem}"
        host.load(PluginSpec(name, str(path), source, path=path), lambda path=path: import_extension(path))


def _exists(host: PluginHost, path: Path) -> bool:
    if path.is_dir() and (path / "__init__.py").is_file():
        return True
    if path.is_file():
        return True
    host.diagnostics.append(Diagnostic("error", f"extension {path} (given with -e) does not exist"))
    return False


def _builtin_name(entry: str) -> str:
    return entry.removeprefix("builtin:").strip()


def _switch_builtins(host: PluginHost, switches: dict[str, bool]) -> None:
    """``-builtin:<name>`` turns a built-in plugin off; ``--no-extensions`` the built-in extensions,
    except those asked for with ``-e builtin:<name>``. Names compare with ``-`` and ``_`` alike."""
    def norm(name: str) -> str:
        return name.replace("_", "-")

    options = host.options
    known = {norm(s.name): s.name for s in scan_entry_points() if s.source == "builtin"}
    for name in sorted({*switches, *options.builtin_extensions}):
        if norm(name) not in known:
            host.diagnostics.append(Diagnostic("warning", f"builtin:{name} names no built-in plugin "
                                                          f"(built-in: {', '.join(sorted(known.values()))})"))
    off = {norm(name) for name, on in switches.items() if not on}
    if not options.discover_extensions:
        off |= {norm(name) for name in BUILTIN_EXTENSIONS}
    off -= {norm(name) for name in options.builtin_extensions}
    options.disabled = options.disabled | frozenset(known[n] for n in off if n in known)


def _load_configured(host: PluginHost, paths: Sequence[Path], rules: ConfiguredExtensions) -> None:
    """Files and directories listed in the settings' ``extensions`` (a missing one is reported)."""
    project = host.cwd / ".pi"
    for path in paths:
        scope = "project" if path.is_relative_to(project) else "global"
        if path.is_dir() and not (path / "__init__.py").is_file():
            found = extension_files(path)
        elif path.is_dir() or path.is_file():
            found = [path / "__init__.py" if path.is_dir() else path]
        else:
            host.diagnostics.append(Diagnostic("error", f"extension {path} (listed in the {scope} settings) "
                                                        "does not exist"))
            continue
        for file in rules.keep(found):
            if any(r.path == file for r in host.records.values()):
                continue  # also discovered in an extensions directory
            name = f"{scope}:{file}"
            host.load(PluginSpec(name, str(file), scope, path=file), lambda file=file: import_extension(file))


def _load_project(host: PluginHost, configured: Callable[[bool], ConfiguredExtensions]) -> None:
    directory = host.cwd / ".pi" / "extensions"
    files = extension_files(directory)
    if not files:
        return
    if _project_trusted(host):
        _load_files(host, "project", configured(True).keep(files))
        return
    host.diagnostics.append(Diagnostic(
        "warning",
        f"skipped {len(files)} project extension(s) in {directory}: this project is not trusted "
        f"(use --approve for this run, or `pi trust` to remember)",
    ))


def _project_trusted(host: PluginHost) -> bool:
    """Trusted by ``--approve``, trust.json, ``defaultProjectTrust`` or the prompt (decided once); a project
    with nothing that trust gates is trusted without asking."""
    if host.project_trusted is None:
        nothing_gated = host.options.approve is None and not has_trust_inputs(host.cwd)
        host.project_trusted = nothing_gated or _decide_trust(host)
    return host.project_trusted


def _decide_trust(host: PluginHost) -> bool:
    options = host.options
    if options.approve is not None:
        return options.approve
    store = TrustStore(options.agent_dir)
    decided = _trust_hooks(host)
    if decided is not None:
        trusted, remember = decided
        if remember:
            store.set(host.cwd, trusted)
        return trusted
    try:
        decision = store.get(host.cwd)
    except TrustStoreError as exc:
        host.diagnostics.append(Diagnostic("error", str(exc)))
        return False
    if decision is not None:
        return decision
    if options.default_trust in ("always", "never"):
        return options.default_trust == "always"
    answer = options.trust_prompt(host.cwd) if options.trust_prompt else None
    if answer is None:
        return False
    trusted, remember = answer
    if remember:
        store.set(host.cwd, trusted)
    return trusted


def _trust_hooks(host: PluginHost) -> tuple[bool, bool] | None:
    """The ``project_trust`` handlers loaded so far (installed plugins, global extensions, ``-e`` files):
    the first ``yes``/``no`` as ``(trusted, remember)``, or ``None``."""
    if not host.dispatch.has("project_trust"):
        return None
    from ..events import ProjectTrustEvent
    from .context import ExtensionContext
    from .dispatch import _run_sync

    from .context import StderrNotices

    options = host.options
    ui = options.trust_ui if options.trust_ui is not None or options.trust_mode == "sdk" else StderrNotices()
    ctx = ExtensionContext(host.cwd, mode=options.trust_mode, events=host.events, ui=ui)
    event = _run_sync(host.dispatch.call("project_trust", ProjectTrustEvent(host.cwd), ctx))
    if event.decision is None:
        return None
    return event.decision.trusted == "yes", event.decision.remember


class ProviderSource:
    """A model-layer object that offers ``register_providers(register)`` without a hook marker (such as
    :class:`pi_core.ai.FauxProvider`: the model layer does not import the plugin framework), taking part as a
    plugin."""

    def __init__(self, source: object) -> None:
        self.source = source

    @hookimpl
    def register_providers(self, register: Callable[..., None]) -> None:
        getattr(self.source, "register_providers")(register)

    def __repr__(self) -> str:
        return repr(self.source)


def as_plugin(plugin: object) -> object:
    """``plugin`` itself, or a :class:`ProviderSource` for an object whose only contribution is an unmarked
    ``register_providers`` (the duck type :mod:`pi_core.ai.discovery` reads)."""
    method = getattr(plugin, "register_providers", None)
    if callable(method) and getattr(method, f"{hookspecs.PROJECT}_impl", None) is None:
        return ProviderSource(plugin)
    return plugin


def _load_objects(host: PluginHost, plugins: Sequence[object]) -> None:
    for index, plugin in enumerate(plugins):
        label = getattr(plugin, "__name__", None) or getattr(plugin, "name", None) or type(plugin).__name__
        name = f"sdk:{label}" if f"sdk:{label}" not in host.records else f"sdk:{label}#{index}"
        host.load(PluginSpec(name, repr(plugin), "sdk"), lambda plugin=plugin: as_plugin(plugin))


__all__ = ["BUILTIN_EXTENSIONS", "ConfiguredExtensions", "Diagnostic", "PluginHost", "PluginRecord",
           "build_plugin_host", "rebuild_plugin_host"]
