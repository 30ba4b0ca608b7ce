"""``pi install``, ``remove``/``uninstall``, ``list``, ``update`` and ``config``: the package commands.

They follow pi's: ``install SOURCE`` records the source in the user settings (``-l``: the project's)
after installing it, ``remove`` undoes both, ``list`` shows each scope's packages with where they are
and what they contribute, ``update`` brings unpinned packages up to date, ``config`` switches single
resources of a package on and off by writing pi's filter entries. Project settings are used only in a
trusted project (``-a`` trusts it for one command).
"""

# Annotations are evaluated where the functions are defined (no ``from __future__ import annotations``):
# typer reads every command's signature twice, and would compile and evaluate string annotations both times.

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from .resolve import (
    ResolvedPackage,
    Scope,
    describe,
    entry_source,
    read_package_entries,
    resolve_packages,
    settings_base,
    settings_file,
)
from .sources import PackageSource, SourceError, parse_source, settings_text

if TYPE_CHECKING:
    from ..extensions.manager import PluginHost

_Local = Annotated[bool, typer.Option("--local", "-l", help="Use the project's .pi/settings.json.")]
_Approve = Annotated[bool, typer.Option("--approve", "-a", help="Trust this project for this command.", hidden=True)]
_NoApprove = Annotated[bool, typer.Option("--no-approve", "-na", help="Ignore the project's settings for this "
                                                                     "command.", hidden=True)]
_NoPlugins = Annotated[bool, typer.Option("--no-plugins", hidden=True)]
_NoExtensions = Annotated[bool, typer.Option("--no-extensions", hidden=True)]


class PackageCommandError(Exception):
    """A package command cannot do what was asked (printed as ``pi: <message>``, exit 1)."""


def project_trusted(host: "PluginHost") -> bool:
    """Trust for package commands: ``-a``/``-na``, else the saved decision, else trusted when the
    project has nothing that trust gates. Never asks."""
    from ..extensions.trust import TrustStore, TrustStoreError, has_trust_inputs

    if host.options.approve is not None:
        return host.options.approve
    try:
        decision = TrustStore(host.agent_dir).get(host.cwd)
    except TrustStoreError:
        return False
    return decision if decision is not None else not has_trust_inputs(host.cwd)


def _scope(local: bool, host: "PluginHost") -> Scope:
    if local and not project_trusted(host):
        raise PackageCommandError(f"{host.cwd} is not trusted; refusing to use its package settings "
                                  "(use -a for this command, or `pi trust`)")
    return "project" if local else "user"


def _installer(host: "PluginHost", pip_args: Sequence[str] = ()) -> Any:
    from .install import Installer

    return Installer(host.cwd, host.agent_dir, pip_args=pip_args, out=typer.echo)


def _write_entries(host: "PluginHost", scope: Scope, entries: list[Any]) -> None:
    from ..runtime.settings import SettingsError, write_setting

    path = settings_file(scope, host.cwd, host.agent_dir)
    try:
        write_setting(path, "packages", entries, scope="project" if scope == "project" else "global")
    except SettingsError as exc:
        raise PackageCommandError(str(exc)) from exc


def _find(entries: list[Any], source: PackageSource, base: Path) -> int | None:
    for index, entry in enumerate(entries):
        try:
            if parse_source(entry_source(entry), base).identity == source.identity:
                return index
        except SourceError:
            continue
    return None


def _record(host: "PluginHost", scope: Scope, source: PackageSource) -> None:
    base = settings_base(scope, host.cwd, host.agent_dir)
    entries = read_package_entries(base / "settings.json")
    text = settings_text(source, base)
    index = _find(entries, source, base)
    if index is None:
        entries.append(text)
    elif entry_source(entries[index]) != text:
        old = entries[index]
        entries[index] = text if isinstance(old, str) else {**old, "source": text}
    else:
        return
    _write_entries(host, scope, entries)


def _resolved(host: "PluginHost", trusted: bool | None = None) -> list[ResolvedPackage]:
    trusted = project_trusted(host) if trusted is None else trusted
    return resolve_packages(host.cwd, host.agent_dir, trusted=trusted,
                            temporary=host.options.temporary_packages).packages


def _registered(host: "PluginHost") -> dict[str, str]:
    """What each loaded plugin registered, as ``pi plugins`` shows it (``tools:word_count, ...``)."""
    out = {}
    for row in host.describe():
        items = [f"{kind}:{name}" for kind in ("tools", "commands", "providers", "toolsets") for name in row[kind]]
        out[row["name"]] = ", ".join(items)
    return out


def _contributions(package: ResolvedPackage, registered: dict[str, str] | None = None) -> str:
    labels = {"extensions": "plugins" if package.dist else "extensions"}
    parts = []
    for kind, names in describe(package).items():
        if kind == "extensions" and registered:
            names = [f"{n} ({registered[n]})" if registered.get(n) else n for n in names]
        parts.append(f"{labels.get(kind, kind)}: {', '.join(names)}")
    return "; ".join(parts)


def _guard(action: Any, host: "PluginHost | None" = None, approve: bool = False, no_approve: bool = False) -> None:
    from .install import InstallError

    if approve and host is not None:
        host.options.approve = True  # `-a` given after the command word (`pi install SRC -l -a`)
    if no_approve and host is not None:
        host.options.approve = False
    try:
        action()
    except (PackageCommandError, InstallError, SourceError) as exc:
        typer.echo(f"pi: {exc}", err=True)
        raise typer.Exit(1) from None


# -------------------------------------------------------------------------------------------------


def add_package_commands(app: typer.Typer, host: "PluginHost") -> None:
    @app.command("install")
    def install(
        sources: Annotated[Optional[list[str]], typer.Argument(
            help="PyPI names (pypi:NAME), git+URL[@ref], git:host/user/repo[@ref], local paths or wheels. "
                 "None: install what the settings list but is missing.")] = None,
        local: _Local = False,
        editable: Annotated[bool, typer.Option("--editable", "-e", help="Install local projects editable.")] = False,
        approve: _Approve = False, no_approve: _NoApprove = False,
        no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Install packages into pi's environment and record them in settings.

        Arguments after `--` go to pip unchanged (e.g. `-- --no-deps`)."""
        given = list(sources or [])
        pip_args = [s for s in given if s.startswith("-")]  # only reachable after `--`
        given = [s for s in given if not s.startswith("-")]
        _guard(lambda: _install(host, given, local, editable, pip_args), host, approve, no_approve)

    def remove_command(
        sources: Annotated[list[str], typer.Argument(help="Sources as installed (or a distribution name).")],
        local: _Local = False,
        approve: _Approve = False, no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Uninstall packages and remove them from settings."""
        _guard(lambda: _remove(host, sources, local), host, approve)

    app.command("remove")(remove_command)
    app.command("uninstall", help="Alias of `pi remove`.")(remove_command)

    @app.command("list")
    def list_packages(
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object per package.")] = False,
        approve: _Approve = False, no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Packages of the user and the project settings, where they are and what they contribute."""
        if approve:
            host.options.approve = True
        raise typer.Exit(_list(host, as_json))

    @app.command("update")
    def update(
        source: Annotated[Optional[str], typer.Argument(help="One package (default: see the options).")] = None,
        extensions: Annotated[bool, typer.Option("--extensions", help="Update installed packages only.")] = False,
        all_: Annotated[bool, typer.Option("--all", help="Update pi and all packages.")] = False,
        self_: Annotated[bool, typer.Option("--self", help="Update pi only (the default without a source).")] = False,
        extension: Annotated[Optional[str], typer.Option("--extension", help="Same as giving SOURCE.")] = None,
        models: Annotated[bool, typer.Option("--models", help="Refresh model catalogs only.")] = False,
        force: Annotated[bool, typer.Option("--force", help="Reinstall pi even if it is up to date.")] = False,
        approve: _Approve = False, no_approve: _NoApprove = False,
        no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Update pi, all packages (--extensions), or one package; pinned versions and refs stay."""
        flags = UpdateFlags(source, extension, self_=self_, extensions=extensions, all_=all_, models=models)
        _guard(lambda: _update_command(host, flags, force=force), host, approve, no_approve)

    @app.command("config")
    def config(
        action: Annotated[Optional[str], typer.Argument(help="enable or disable (default: list).")] = None,
        package: Annotated[Optional[str], typer.Argument(help="The package source, as `pi config` lists it.")] = None,
        resources: Annotated[Optional[list[str]], typer.Argument(help="Resources, as `pi config` lists them.")] = None,
        local: _Local = False,
        approve: _Approve = False, no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Show every package and local resource and whether it loads; `enable`/`disable PACKAGE|user|project RESOURCE...` switch them."""
        _guard(lambda: _config(host, action, package, list(resources or []), local), host, approve)


    plugin = typer.Typer(help="Plugin authoring: `pi plugin new NAME` writes a package skeleton.",
                         no_args_is_help=True)

    @plugin.command("new")
    def plugin_new(
        name: Annotated[str, typer.Argument(help="The plugin's name (`hello` makes the package pi-hello).")],
        directory: Annotated[Optional[Path], typer.Argument(help="Where to write it (default: ./<package>).")] = None,
        approve: _Approve = False, no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False,
    ) -> None:
        """Write a plugin package: one tool, one hook, a skill, tests with pi's kit, CI config."""
        from .skeleton import SkeletonError, names, write

        try:
            dist = names(name)[0]
            target = (directory or host.cwd / dist).resolve()
            written = write(name, target)
        except SkeletonError as exc:
            typer.echo(f"pi: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"Created {dist} in {target}:")
        for path in written:
            typer.echo(f"  {path.relative_to(target)}")
        typer.echo(f"Next: cd {target} && python -m venv .venv && . .venv/bin/activate && "
                   "pip install -e '.[test]' && pytest")

    app.add_typer(plugin, name="plugin")


def _install(host: "PluginHost", given: list[str], local: bool, editable: bool, pip_args: list[str]) -> None:
    scope = _scope(local, host)
    installer = _installer(host, pip_args)
    if not given:
        missing = [p for p in _resolved(host) if p.scope in ("user", "project") and not p.installed]
        if not missing:
            typer.echo("Nothing to install: every package in settings is installed.")
            return
        from .install import InstallError

        failures = 0
        for package in missing:
            typer.echo(f"Installing {package.source.text}...")
            try:
                installer.install(package.source, package.scope)
            except InstallError as exc:
                typer.echo(f"pi: {exc}", err=True)
                failures += 1
                continue
            typer.echo(f"Installed {package.source.text}")
        _show(host, [p.source for p in missing])
        if failures:
            raise typer.Exit(1)
        return
    parsed = [parse_source(text, host.cwd) for text in given]
    for source in parsed:
        typer.echo(f"Installing {source.text}...")
        installer.install(source, scope, editable=editable)
        _record(host, scope, source)
        typer.echo(f"Installed {source.text}")
    _show(host, parsed)


def _show(host: "PluginHost", sources: list[PackageSource]) -> None:
    """What the installed packages contribute, read by a fresh process (this one scanned before)."""
    import json
    import subprocess

    args = [sys.executable, "-m", "pi_core", "list", "--json"]
    if host.options.approve:
        args.insert(3, "-a")
    done = subprocess.run(args, cwd=host.cwd, capture_output=True, text=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    wanted = {s.identity for s in sources}
    failed = False
    for row in rows:
        if row["identity"] in wanted or any(f"pypi:{row.get('dist_key')}" == w for w in wanted):
            summary = row["contributes"] or row["problem"] or "nothing"
            typer.echo(f"  {row['source']}: {summary}")
            failed = failed or bool(row.get("plugin_errors"))
            for error in row.get("plugin_errors") or []:
                typer.echo(f"  FAILED: {error}")
    if failed:
        raise typer.Exit(1)


def _matches(package: ResolvedPackage, source: PackageSource) -> bool:
    """Whether ``source`` names ``package`` (a distribution name names what installed it, too)."""
    from .sources import normalise

    if package.source.identity == source.identity:
        return True
    return source.kind == "pypi" and bool(package.dist) and normalise(package.dist or "") == normalise(source.name or "")


def _remove(host: "PluginHost", given: list[str], local: bool) -> None:
    scope = _scope(local, host)
    installer = _installer(host)
    for text in given:
        source = parse_source(text, host.cwd)
        found = [p for p in _resolved(host) if _matches(p, source) and (
            p.scope in (scope, "environment") or (scope == "project" and p.project_filter is not None))]
        if not found:
            raise PackageCommandError(f"No matching package found for {text}")
        package = found[0]
        if package.scope != scope and package.project_filter is not None:
            _drop_entry(host, scope, package.source)  # only the project's filter goes; the user's install stays
            typer.echo(f"Removed the project's filter for {text} (still installed for the user)")
            continue
        typer.echo(f"Removing {text}...")
        installer.remove(package.source, scope if package.scope == scope else "user")
        if package.scope == scope:
            _drop_entry(host, scope, package.source)
        typer.echo(f"Removed {text}")


def _drop_entry(host: "PluginHost", scope: Scope, source: PackageSource) -> None:
    base = settings_base(scope, host.cwd, host.agent_dir)
    entries = read_package_entries(base / "settings.json")
    index = _find(entries, source, base)
    if index is not None:
        del entries[index]
        _write_entries(host, scope, entries)


def _list(host: "PluginHost", as_json: bool) -> int:
    import json

    trusted = project_trusted(host)
    packages = _resolved(host, trusted)
    errors = {r.name: r.error for r in host.records.values() if r.error}
    registered = _registered(host)
    if as_json:
        for package in packages:
            typer.echo(json.dumps(_row(package, errors, registered)))
        return 0
    sections: list[tuple[str, list[ResolvedPackage]]] = [
        ("User packages:", [p for p in packages if p.scope == "user"]),
        ("Project packages:", [p for p in packages if p.scope == "project"]),
        ("In pi's environment, not in settings:", [p for p in packages if p.scope == "environment"]),
        ("This run only (-e):", [p for p in packages if p.scope == "temporary"]),
    ]
    shown = False
    for title, group in sections:
        if not group:
            continue
        shown = True
        typer.echo(title)
        for package in group:
            _print_package(package, errors, registered)
    if not trusted and read_package_entries(settings_file("project", host.cwd, host.agent_dir)):
        typer.echo(f"Project packages of {host.cwd} are not shown: the project is not trusted (use -a or `pi trust`).")
    if not shown:
        typer.echo("No packages installed.")
    missing = [p for p in packages if p.scope in ("user", "project") and not p.installed]
    required = _missing_required(host, packages)
    for name in required:
        typer.echo(f"missing: {name} (required by {host.cwd / '.pi' / 'settings.json'}; `pi install {name}`)")
    if missing:
        typer.echo(f"{len(missing)} package(s) missing: run `pi install` to install them.")
    return 1 if missing or required else 0


def _print_package(package: ResolvedPackage, errors: dict[str, str | None], registered: dict[str, str]) -> None:
    label = package.source.text
    if package.project_filter is not None:
        label += " (filtered by this project: autoload false)"
    elif package.filtered:
        label += " (filtered)"
    if package.dist and package.version:
        label += f"  [{package.dist} {package.version}]"
    typer.echo(f"  {label}")
    if package.root is not None:
        typer.echo(f"    {package.root}")
    contributes = _contributions(package, registered)
    if contributes:
        typer.echo(f"    {contributes}")
    for resource in package.resources:
        if resource.note:
            typer.echo(f"    skipped {resource.name}: {resource.note}")
        elif resource.kind == "extensions" and errors.get(resource.name):
            typer.echo(f"    FAILED {resource.name}: {errors[resource.name]}")
    if package.problem:
        typer.echo(f"    {package.problem}")


def _row(package: ResolvedPackage, errors: dict[str, str | None], registered: dict[str, str]) -> dict[str, Any]:
    from .sources import normalise

    return {
        "source": package.source.text, "identity": package.source.identity, "scope": package.scope,
        "kind": package.source.kind, "dist": package.dist, "dist_key": normalise(package.dist) if package.dist else None,
        "version": package.version, "installed": package.installed, "filtered": package.filtered,
        "project_filter": package.project_filter,
        "root": str(package.root) if package.root else None, "pinned": package.source.pinned,
        "resources": [{"kind": r.kind, "name": r.name, "path": str(r.path) if r.path else None,
                       "enabled": r.enabled, "note": r.note} for r in package.resources],
        "contributes": _contributions(package, registered), "problem": package.problem,
        "plugin_errors": [f"{r.name}: {errors[r.name]}" for r in package.resources
                          if r.kind == "extensions" and errors.get(r.name)],
    }


def _missing_required(host: "PluginHost", packages: list[ResolvedPackage]) -> list[str]:
    """``plugins.required`` entries (ours) whose distribution is not installed."""
    from ..runtime.settings import Settings
    from .resolve import _dist_version

    # Reading the list runs nothing from the project, so an untrusted project's list is read too.
    settings = Settings.load(host.cwd, host.agent_dir, trusted=True)
    installed = [p.dist for p in packages if p.dist and p.installed]
    return [name for name in settings.missing_required_plugins(installed)
            if _dist_version(name.split(">")[0].split("=")[0].split("<")[0].strip()) is None]


@dataclass(frozen=True)
class UpdateFlags:
    """``pi update``'s target as given on the command line."""

    source: str | None
    extension: str | None
    self_: bool = False
    extensions: bool = False
    all_: bool = False
    models: bool = False


def update_target(flags: UpdateFlags) -> tuple[str, str | None]:
    """``(what, source)`` — ``what`` is ``self``, ``extensions``, ``all`` or ``models`` — by pi's rules, or
    :class:`PackageCommandError` with pi's message for flags that contradict each other."""
    f = flags
    if f.all_ and (f.self_ or f.extensions or f.models or f.extension):
        raise PackageCommandError("--all cannot be combined with --self, --extensions, --models, or --extension")
    if f.all_ and f.source:
        raise PackageCommandError("--all cannot be combined with a positional source")
    if f.models:
        if f.self_ or f.extensions or f.extension:
            raise PackageCommandError("--models cannot be combined with --self, --extensions, --all, or --extension")
        if f.source:
            raise PackageCommandError("--models cannot be combined with a positional source")
        return "models", None
    if f.extension:
        if f.self_ or f.extensions:
            raise PackageCommandError("--extension cannot be combined with --self, --extensions, or --all")
        if f.source:
            raise PackageCommandError("--extension cannot be combined with a positional source")
        return "extensions", f.extension
    if f.source in ("self", "pi"):
        return ("all" if f.extensions else "self"), None
    if f.source:
        if f.self_ or f.extensions:
            raise PackageCommandError("positional update targets cannot be combined with --self, --extensions, "
                                      "or --all")
        return "extensions", f.source
    if f.all_ or (f.self_ and f.extensions):
        return "all", None
    return ("extensions" if f.extensions and not f.self_ else "self"), None


def _update_command(host: "PluginHost", flags: UpdateFlags, *, force: bool) -> None:
    what, source = update_target(flags)
    if what == "models":
        raise typer.Exit(_refresh_models(host))
    if what == "self" and not flags.self_ and flags.source is None:
        typer.echo("Extensions are skipped. Run pi update --extensions to update extensions.")
    if what in ("extensions", "all"):
        _update(host, source)
    if what in ("self", "all"):  # after the packages, as pi does
        _update_self(host, force=force)


def _update(host: "PluginHost", source_text: str | None) -> None:
    import os

    if os.environ.get("PI_OFFLINE"):
        typer.echo("Skipped package updates (offline mode)")
        return
    targets = [p for p in _resolved(host) if p.scope in ("user", "project")]
    if source_text is not None:
        wanted = parse_source(source_text, host.cwd).identity
        targets = [p for p in targets if p.source.identity == wanted]
        if not targets:
            raise PackageCommandError(f"No matching package found for {source_text}")
    installer = _installer(host)
    changed = 0
    for package in targets:
        if package.source.pinned and package.source.kind == "pypi":
            typer.echo(f"{package.source.text}: pinned; not updated")
            continue
        result = installer.update(package.source, package.scope)
        if result is not None:
            changed += 1
            before, after = (_short(v) for v in result)
            scope = " (project)" if package.scope == "project" else ""
            typer.echo(f"Updated {package.source.text}{scope}: {before} -> {after}")
    if not changed:
        typer.echo("Packages are up to date.")


def _short(value: str | None) -> str:
    if value is None:
        return "(none)"
    return value[:7] if len(value) == 40 else value


def _refresh_models(host: "PluginHost") -> int:
    """``pi update --models``: fetch every provider's model list now (``PI_OFFLINE``: none)."""
    import asyncio

    from ..ai import ModelRegistry, network_allowed

    if not network_allowed():
        typer.echo("Skipped model catalog refresh (offline mode)")
        return 0
    registry = ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=host.agent_dir)
    result = asyncio.run(registry.refresh_models(force=True))
    failures = []
    for provider, message in sorted(result.errors.items()):
        if provider in result.auth_errors:  # a stale sign-in only affects that provider's list
            typer.echo(f"Warning: skipped model catalog for {provider}: {message}", err=True)
        else:
            failures.append(f"{provider}: {message}")
    if failures:
        typer.echo(f"pi: could not refresh model catalogs: {'; '.join(failures)}", err=True)
        return 1
    typer.echo("Model catalogs refreshed")
    return 0


def _self_update_command(host: "PluginHost") -> list[str] | None:
    """pi's custom self-update command: ``PI_SELF_UPDATE_COMMAND`` (split on whitespace), else the global
    ``selfUpdateCommand`` setting (an argv array); ``None`` when neither is set."""
    import os

    from ..runtime.settings import Settings

    text = os.environ.get("PI_SELF_UPDATE_COMMAND", "").strip()
    if text:
        return text.split()
    setting = Settings.load(host.cwd, host.agent_dir, trusted=False).scope_data("global").get("selfUpdateCommand")
    if isinstance(setting, list) and setting and all(isinstance(a, str) for a in setting):
        return list(setting)
    if setting is not None:
        typer.echo("pi: settings: selfUpdateCommand must be an array of strings; ignored", err=True)
    return None


def _update_self(host: "PluginHost", *, force: bool = False) -> None:
    import subprocess
    from importlib import metadata

    from ..entry_points import DISTRIBUTION
    from .install import InstallError, pip

    command = _self_update_command(host)
    if command is not None:
        # pi's placeholders; no release server is asked here, so the version is "latest"
        values = {"{packageName}": DISTRIBUTION, "{version}": "latest", "{installSpec}": DISTRIBUTION}
        argv = [_fill(arg, values) for arg in command]
        try:
            code = subprocess.run(argv, check=False).returncode
        except OSError as exc:
            raise InstallError(f"self-update command {argv[0]!r} could not start: {exc}") from exc
        if code != 0:
            raise InstallError(f"self-update command failed (exit {code}): {' '.join(argv)}")
        typer.echo(f"Updated {DISTRIBUTION} with: {' '.join(argv)}")
        return

    try:
        direct = metadata.distribution(DISTRIBUTION).read_text("direct_url.json") or ""
    except metadata.PackageNotFoundError:
        direct = ""
    if '"editable": true' in direct or '"editable":true' in direct:
        typer.echo("pi runs from a source checkout (an editable install): update it with git, not `pi update`")
        return
    # pip itself leaves an up-to-date pi alone; --force reinstalls it (and its dependencies) all the same
    args = ["--upgrade", *(["--force-reinstall"] if force else []), DISTRIBUTION]
    before = _installed_version(DISTRIBUTION)
    if pip("install", args) != 0:
        raise InstallError(f"pip install {' '.join(args)} failed")
    after = _installed_version(DISTRIBUTION)
    if force:
        typer.echo(f"Reinstalled {DISTRIBUTION} {after}")
    elif before == after:
        typer.echo(f"{DISTRIBUTION} is already up to date ({after})")
    else:
        typer.echo(f"Updated {DISTRIBUTION} from {before} to {after}")


def _installed_version(name: str) -> str | None:
    """The version installed now (asked in a fresh process: pip has just changed this one's environment)."""
    import subprocess

    code = f"from importlib.metadata import version; print(version({name!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or None


def _fill(arg: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        arg = arg.replace(key, value)
    return arg


def _config(host: "PluginHost", action: str | None, package_text: str | None, resources: list[str],
            local: bool) -> None:
    from .local_config import builtin_extensions, local_resources

    trusted = project_trusted(host)
    packages = _resolved(host, trusted)
    found = local_resources(host.cwd, host.agent_dir, trusted=trusted)
    builtins = builtin_extensions(host.cwd, host.agent_dir, trusted=trusted)
    if action is None and sys.stdin.isatty() and sys.stdout.isatty():
        from .config_picker import run_picker

        run_picker(host, trusted, start_local=local)
        return
    if action is None:
        for package in packages:
            if not package.resources:
                continue
            where = "project" if package.scope == "project" else "user"
            if package.project_filter is not None:
                where += "; filtered by this project"
            typer.echo(f"{package.source.text} ({where})")
            for resource in package.resources:
                mark = "-" if resource.note else "x" if resource.enabled else " "
                typer.echo(f"  [{mark}] {resource.kind:<10} {resource.name}" + (f"  ({resource.note})" if resource.note else ""))
        _list_local(host, found, builtins)
        if not any(p.resources for p in packages) and not found and not builtins:
            typer.echo("No package or local resources.")
        return
    if action not in ("enable", "disable") or not package_text or not resources:
        raise PackageCommandError("usage: pi config [enable|disable PACKAGE|user|project|builtin RESOURCE...] [-l]")
    if package_text in ("user", "project"):
        _switch_local(host, found, package_text, resources, action == "enable")
        return
    if package_text == "builtin":
        _switch_local(host, [b for b in builtins if b.scope == ("project" if local else "user")],
                      "project" if local else "user", resources, action == "enable")
        return
    scope = _scope(local, host)
    wanted = parse_source(package_text, host.cwd).identity
    match = [p for p in packages if p.source.identity == wanted or (p.dist and f"pypi:{p.dist}".lower() == wanted)]
    if not match:
        raise PackageCommandError(f"No matching package found for {package_text}")
    package = match[0]
    chosen = []
    for name in resources:
        found = [r for r in package.resources if r.name == name or r.name.rstrip("/").endswith("/" + name)
                 or (r.path is not None and r.path.name == "SKILL.md" and r.path.parent.name == name)]
        if not found:
            known = ", ".join(r.name for r in package.resources) or "none"
            raise PackageCommandError(f"{package.source.text} has no resource {name!r} (it has: {known})")
        chosen.append(found[0])
    switch_package_resources(host, package, chosen, action == "enable", scope)
    for resource in chosen:
        typer.echo(f"{'Enabled' if action == 'enable' else 'Disabled'} {resource.kind} {resource.name} "
                   f"of {package.source.text}")


def switch_package_resources(host: "PluginHost", package: ResolvedPackage, chosen: Sequence[Any], enabled: bool,
                             scope: Scope) -> None:
    """Write ``+name``/``-name`` filter entries for ``chosen`` resources of ``package`` into ``scope``'s file.

    A user package switched for one project gets a project entry with ``"autoload": false`` (pi writes
    the same): it filters the user's entry instead of replacing it."""
    from . import filters

    base = settings_base(scope, host.cwd, host.agent_dir)
    entries = read_package_entries(base / "settings.json")
    index = _find(entries, package.source, base)
    entry: dict[str, Any]
    if index is None:
        entry = {"source": settings_text(package.source, base)}
        if scope == "project" and package.scope == "user":
            entry["autoload"] = False
        entries.append(entry)
    else:
        old = entries[index]
        entry = {"source": old} if isinstance(old, str) else dict(old)
        entries[index] = entry
    for resource in chosen:
        current = entry.get(resource.kind)
        current = [str(e) for e in current] if isinstance(current, list) else []
        if resource.path is not None and package.root is not None:
            # an earlier switch may name the same resource another way (a skill by its directory)
            current = [e for e in current if not (e[:1] in "+-!" and
                                                  filters.matches_exact(resource.path, [e[1:]], package.root))]
        entry[resource.kind] = filters.toggle(current, resource.name, enabled)
    _write_entries(host, scope, entries)


def _list_local(host: "PluginHost", local: list[Any], builtins: list[Any]) -> None:
    headings = {"user": f"user ({host.agent_dir})", "project": f"project ({host.cwd / '.pi'})"}
    for scope in ("user", "project"):
        rows = [r for r in local if r.scope == scope]
        if rows:
            typer.echo(headings[scope])
        for r in rows:
            typer.echo(f"  [{'x' if r.enabled else ' '}] {r.kind:<10} {r.entry}"
                       + (f"  ({r.label})" if r.label not in r.entry.split("/")[-1] else ""))
    user_state = {b.label: b.enabled for b in builtins if b.scope == "user"}
    for scope in ("user", "project"):
        rows = [b for b in builtins if b.scope == scope]
        if scope == "project" and all(user_state.get(b.label) == b.enabled for b in rows):
            continue  # the project changes none of them: the user's list says it all
        if rows:
            typer.echo("builtin" + (" (this project)" if scope == "project" else ""))
        for b in rows:
            typer.echo(f"  [{'x' if b.enabled else ' '}] extensions {b.label}")


def _switch_local(host: "PluginHost", local: list[Any], scope: str, names: list[str], enabled: bool) -> None:
    from .local_config import SettingsError, switch

    mine = [r for r in local if r.scope == scope]
    if scope == "project" and not project_trusted(host):
        raise PackageCommandError(f"{host.cwd} is not trusted; refusing to change its settings "
                                  "(use -a for this command, or `pi trust`)")
    for name in names:
        found = [r for r in mine if r.matches(name)]
        if not found:
            known = ", ".join(r.entry for r in mine) or "none"
            raise PackageCommandError(f"no {scope} resource {name!r} (there are: {known})")
        try:
            written = switch(found[0], enabled, host.cwd, host.agent_dir)
        except SettingsError as exc:
            raise PackageCommandError(str(exc)) from exc
        typer.echo(f"{'Enabled' if enabled else 'Disabled'} {found[0].kind} {found[0].entry} ({written})")


__all__ = ["PackageCommandError", "add_package_commands", "project_trusted"]
