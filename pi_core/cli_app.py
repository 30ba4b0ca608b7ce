"""The typer application behind ``pi``, built after the plugins are loaded (plugins add commands)."""

# Annotations are evaluated where the functions are defined (no ``from __future__ import annotations``):
# typer reads every command's signature twice, and would compile and evaluate string annotations both times.

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from .cli_args import BUILTIN_COMMANDS, DEFAULT_COMMAND, GlobalOptions

if TYPE_CHECKING:
    from .extensions.manager import PluginHost

Opt = typer.Option

# Accepted by every command so that `pi plugins --approve` works; their values were read by preparse().
_Approve = Annotated[bool, typer.Option("--approve", help="Trust this project for this run.", hidden=True)]
_NoPlugins = Annotated[bool, typer.Option("--no-plugins", help="Do not load pip-installed plugins.", hidden=True)]
_NoExtensions = Annotated[bool, typer.Option("--no-extensions", help="Do not load extension files.", hidden=True)]


def build_app(host: "PluginHost", options: GlobalOptions) -> tuple[typer.Typer, list[str]]:
    app = typer.Typer(add_completion=False, no_args_is_help=False, context_settings={"help_option_names": ["-h", "--help"]},
                      rich_markup_mode=None, pretty_exceptions_enable=False)
    _add_run(app, host, options)
    _add_plugins(app, host)
    _add_trust(app, host)
    _add_packages(app, host)
    commands = [DEFAULT_COMMAND, *BUILTIN_COMMANDS]
    for registered in host.cli_commands.entries.values():
        command = registered.item
        if command.name in commands:
            print(f"pi: plugin {registered.plugin!r} registers sub-command {command.name!r}, which pi already "
                  f"has; the plugin's command is not available", file=sys.stderr)
            continue
        app.command(name=command.name, help=command.help, **command.extra)(command.callback)
        commands.append(command.name)
    return app, commands


def _add_run(app: typer.Typer, host: "PluginHost", options: GlobalOptions) -> None:
    @app.command(name=DEFAULT_COMMAND, add_help_option=False)
    def run(
        messages: Annotated[Optional[list[str]], typer.Argument()] = None,
        print_mode: Annotated[bool, Opt("--print", "-p")] = False,
        mode: Annotated[Optional[str], Opt("--mode")] = None,
        provider: Annotated[Optional[str], Opt("--provider")] = None,
        model: Annotated[Optional[str], Opt("--model")] = None,
        models: Annotated[Optional[str], Opt("--models")] = None,
        api_key: Annotated[Optional[str], Opt("--api-key")] = None,
        thinking: Annotated[Optional[str], Opt("--thinking")] = None,
        tools: Annotated[Optional[str], Opt("--tools", "-t")] = None,
        exclude_tools: Annotated[Optional[str], Opt("--exclude-tools", "-xt")] = None,
        no_tools: Annotated[bool, Opt("--no-tools", "-nt")] = False,
        no_builtin_tools: Annotated[bool, Opt("--no-builtin-tools", "-nbt")] = False,
        toolset: Annotated[Optional[str], Opt("--toolset")] = None,
        continue_session: Annotated[bool, Opt("--continue", "-c")] = False,
        resume: Annotated[bool, Opt("--resume", "-r")] = False,
        session: Annotated[Optional[str], Opt("--session")] = None,
        session_id: Annotated[Optional[str], Opt("--session-id")] = None,
        fork: Annotated[Optional[str], Opt("--fork")] = None,
        session_dir: Annotated[Optional[str], Opt("--session-dir")] = None,
        no_session: Annotated[bool, Opt("--no-session")] = False,
        name: Annotated[Optional[str], Opt("--name", "-n")] = None,
        system_prompt: Annotated[Optional[str], Opt("--system-prompt")] = None,
        append_system_prompt: Annotated[Optional[list[str]], Opt("--append-system-prompt")] = None,
        skill: Annotated[Optional[list[str]], Opt("--skill")] = None,
        no_skills: Annotated[bool, Opt("--no-skills", "-ns")] = False,
        prompt_template: Annotated[Optional[list[str]], Opt("--prompt-template")] = None,
        no_prompt_templates: Annotated[bool, Opt("--no-prompt-templates", "-np")] = False,
        no_context_files: Annotated[bool, Opt("--no-context-files", "-nc")] = False,
        list_models: Annotated[Optional[str], Opt("--list-models")] = None,
        export: Annotated[Optional[str], Opt("--export")] = None,
        verbose: Annotated[bool, Opt("--verbose")] = False,
        tui_mode: Annotated[Optional[str], Opt("--tui-mode")] = None,
        theme: Annotated[Optional[list[str]], Opt("--theme")] = None,
        use_theme: Annotated[Optional[str], Opt("--use-theme")] = None,
        no_themes: Annotated[bool, Opt("--no-themes")] = False,
        offline: Annotated[bool, Opt("--offline")] = False,
        approve: _Approve = False,
        no_plugins: _NoPlugins = False,
        no_extensions: _NoExtensions = False,
        extension: Annotated[Optional[list[str]], Opt("--extension", "-e")] = None,
    ) -> None:
        from .cli_run import RunOptions, run_command

        if offline:
            import os

            os.environ["PI_OFFLINE"] = "1"  # as pi does: plugins and providers read it
        run_options = RunOptions(
            messages=list(messages or []), print_mode=print_mode, mode=mode, provider=provider, model=model,
            models=models, api_key=api_key, thinking=thinking, tools=tools, exclude_tools=exclude_tools,
            no_tools=no_tools, no_builtin_tools=no_builtin_tools, toolset=toolset,
            continue_session=continue_session, resume=resume, session=session, session_id=session_id, fork=fork,
            session_dir=session_dir, no_session=no_session, name=name, system_prompt=system_prompt,
            append_system_prompt=list(append_system_prompt or []), skills=list(skill or []), no_skills=no_skills,
            prompt_templates=list(prompt_template or []), no_prompt_templates=no_prompt_templates,
            no_context_files=no_context_files, list_models=list_models, export=export, verbose=verbose,
            themes=list(theme or []), use_theme=use_theme, no_themes=no_themes, tui_mode=tui_mode)
        raise typer.Exit(run_command(run_options, host, options))


def _add_plugins(app: typer.Typer, host: "PluginHost") -> None:
    plugins = typer.Typer(help="List plugins and what they registered.", invoke_without_command=True,
                          no_args_is_help=False)

    @plugins.callback()
    def plugins_list(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object per plugin.")] = False,
        approve: _Approve = False,
        no_plugins: _NoPlugins = False,
        no_extensions: _NoExtensions = False,
    ) -> None:
        if ctx.invoked_subcommand is not None:
            return
        rows = host.describe()
        if as_json:
            for row in rows:
                typer.echo(json.dumps(row))
            return
        typer.echo(_table(rows))

    @plugins.command("doctor")
    def doctor(approve: _Approve = False, no_plugins: _NoPlugins = False, no_extensions: _NoExtensions = False) -> None:
        """Explain plugin failures and name conflicts; exit 1 when there are any."""
        problems = _doctor_lines(host)
        for line in problems:
            typer.echo(line)
        for replacement in host.replacements():
            typer.echo(f"note: {replacement}")
        if problems:
            raise typer.Exit(1)
        typer.echo(f"ok: {len(host.records)} plugins loaded, no failures, no conflicts")

    app.add_typer(plugins, name="plugins")


def _doctor_lines(host: "PluginHost") -> list[str]:
    lines = []
    for record in host.failed():
        where = f" [{record.path}]" if record.path else f" [{record.dist}]" if record.dist else ""
        lines.append(f"failed: {record.name} ({record.source}){where}: {record.error}")
    lines += [f"conflict: {c}" for c in host.conflicts()]
    lines += [f"error: {d.message}" for d in host.diagnostics if d.level == "error" and not d.plugin]
    return lines


def _table(rows: list[dict]) -> str:
    header = ("NAME", "SOURCE", "VERSION", "REGISTERED", "HOOKS", "STATUS")
    lines = [header]
    for row in rows:
        registered = ", ".join(f"{kind}:{name}" for kind in ("tools", "commands", "providers", "toolsets")
                               for name in row[kind])
        status = "disabled" if row["disabled"] else ("FAILED: " + row["error"]) if row["error"] else "ok"
        hooks = ", ".join(h for h in row["hooks"] if not h.startswith("register_"))
        lines.append((row["name"], row["source"], row["version"] or "-", registered or "-", hooks or "-", status))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header) - 1)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths)) + "  " + str(line[-1])
                     for line in lines)


def _add_trust(app: typer.Typer, host: "PluginHost") -> None:
    @app.command("trust")
    def trust(
        path: Annotated[Optional[Path], typer.Argument(help="Project directory (default: current).")] = None,
        no: Annotated[bool, typer.Option("--no", help="Remember that the project is NOT trusted.")] = False,
        forget: Annotated[bool, typer.Option("--forget", help="Forget the decision.")] = False,
        approve: _Approve = False,
        no_plugins: _NoPlugins = False,
        no_extensions: _NoExtensions = False,
    ) -> None:
        """Remember whether a project's .pi/ code and settings may run (shared with pi's trust.json)."""
        from .extensions.trust import TrustStore

        target = (path or host.cwd).resolve()
        store = TrustStore(host.agent_dir)
        store.set(target, None if forget else not no)
        state = "forgotten" if forget else "not trusted" if no else "trusted"
        typer.echo(f"{target}: {state} (saved in {store.path})")


def _add_packages(app: typer.Typer, host: "PluginHost") -> None:
    from .packages.cli import add_package_commands

    add_package_commands(app, host)


__all__ = ["build_app"]
