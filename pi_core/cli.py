"""The ``pi`` command line (typer).

``pi "task"`` is a prompt; ``pi plugins``, ``pi trust`` and commands that plugins register are
sub-commands. A word is a sub-command only when it is the first word (after the global flags) and a
registered command's exact name, so adding commands never changes what a prompt means.

Exit codes: 0 success, 1 model or run error, 2 usage error.

This module is imported on every start, so it imports almost nothing at module level: ``pi --version``
answers without loading plugins, typer or pydantic.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

from ._version import __version__

if TYPE_CHECKING:
    from .extensions.context import UI


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-v"]):
        # The fast path: no plugins, no typer, no pydantic.
        sys.stdout.write(f"{__version__}\n")
        raise SystemExit(0)
    _without_httpx_cli()
    from . import dataclass_code

    dataclass_code.install()  # before the first dataclass of the run is made
    import gc

    # Start-up allocates objects that live as long as the process (modules, pydantic schemas,
    # plugins): collecting while they are made only rescans them. Collection resumes once the
    # session is built (pi_core.startup.startup_done), with all of them frozen out of its way.
    gc.disable()
    try:
        code = run(args)
    finally:
        # The interpreter's final collections would scan the whole heap once more (~50 ms) only to
        # find it is all still referenced; refcounting still closes files and runs atexit handlers.
        gc.freeze()
        gc.enable()
    _leave(code)


def _leave(code: int) -> NoReturn:
    """End the process the way the interpreter would, without tearing the heap down object by object.

    After a long session that teardown (every module's globals, every message still referenced) takes
    about a tenth of a second for nothing: the operating system frees the memory at once. What the
    interpreter's exit does that matters is done here in its order: thread pools are told to stop and
    other non-daemon threads are waited for, exit handlers run (stored turns, logging), and the standard
    streams are flushed (a stream that can no longer be written exits with the interpreter's status for
    that, 120). pi's own files are written unbuffered and its sessions closed before this point."""
    import atexit
    import os
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter's exit calls first
    if shutdown is None:  # another interpreter: its own exit
        raise SystemExit(code)
    shutdown()
    atexit._run_exitfuncs()
    for stream in dict.fromkeys((sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 120
    os._exit(code)


def _without_httpx_cli() -> None:
    """Keep httpx's own command line out of this process.

    ``import httpx`` imports ``httpx._main``, its command-line client, which imports click, pygments and
    rich whenever they are installed (typer brings rich): about a tenth of pi's start-up, for a program
    this process never runs. pi owns the process here, so it registers a stand-in first; library users
    of pi_core (SDK hosts) keep httpx as it is."""
    import types

    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main", "Stand-in: pi does not run httpx's command line.")

    def main() -> None:  # the same name httpx re-exports
        raise SystemExit("httpx's command line is not available inside pi")

    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in


def run(args: list[str]) -> int:
    import os
    from pathlib import Path

    # pi's process markers: programs run by the tools can tell they run under a coding agent.
    os.environ["PI_CODING_AGENT"] = "true"
    os.environ["AI_AGENT"] = "pi"
    _check_session_early(args)  # first: what it starts runs while the rest of pi is imported

    from .cli_args import DEFAULT_COMMAND, OptionShapes, preparse, route, scan_options, take_plugin_flags
    from .extensions.dispatch import StrictPluginError
    from .extensions.manager import build_plugin_host
    from .startup import startup_done

    from .paths import agent_dir
    from .sdk import settings_for_host

    options, rest = preparse(args)
    if _protocol_mode(rest):  # before any plugin is imported: their prints must not reach the stream
        from .modes.protocol_stdout import take_over_stdout

        take_over_stdout()
    temporary = _temporary_packages(options.package_sources)
    if temporary is None:
        return 1
    cwd = Path.cwd().resolve()
    try:
        host = build_plugin_host(cwd, extension_paths=options.extensions, approve=options.approve,
                                 autoload=False if options.no_plugins else None,
                                 discover_extensions=not options.no_extensions,
                                 trust_prompt=ask_trust if _interactive(rest) else None,
                                 trust_ui=_trust_ui() if _interactive(rest) else None, trust_mode=_trust_mode(rest),
                                 temporary_packages=temporary, **settings_for_host(cwd, agent_dir()))
    except StrictPluginError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return 1
    if _interactive(rest) and host.packages is not None and host.packages.missing:
        from .packages.offer import offer_missing

        if offer_missing(host):
            host = build_plugin_host(Path.cwd(), extension_paths=options.extensions, approve=host.project_trusted,
                                     autoload=False if options.no_plugins else None,
                                     discover_extensions=not options.no_extensions, temporary_packages=temporary)
    for diagnostic in host.diagnostics:
        print(f"pi: {diagnostic.message}", file=sys.stderr)
    options.plugin_flags, rest = take_plugin_flags(rest, host)
    import typer

    from .cli_app import build_app

    app, commands = build_app(host, options)
    argv = route(rest, commands)
    command = typer.main.get_command(app)
    if argv[0] == DEFAULT_COMMAND:
        run_command = command.commands[DEFAULT_COMMAND]  # type: ignore[attr-defined]
        wants_help, unknown = scan_options(argv[1:], OptionShapes.of(run_command.params))
        if wants_help:
            from .cli_help import render_help

            sys.stdout.write(render_help(host))
            return 0
        if unknown:
            print(f"pi: unknown option {unknown} (see pi --help; a message starting with '-' goes after --)",
                  file=sys.stderr)
            return 2
    else:  # a sub-command (maybe a plugin's, maybe long-running): no session to wait for
        startup_done()
    try:
        command(args=argv, prog_name="pi", standalone_mode=True, obj=host)  # sub-commands see the host as ctx.obj
    except SystemExit as exc:
        return _exit_code(exc.code)
    return 0


def _temporary_packages(sources: list[str]) -> list[object] | None:
    """``-e`` packages fetched for this run (``None`` after a reported failure)."""
    if not sources:
        return []
    from pathlib import Path

    from .packages.install import InstallError
    from .packages.temporary import fetch
    from .paths import agent_dir

    try:
        return list(fetch(sources, Path.cwd(), agent_dir()))
    except InstallError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return None


def _interactive(args: list[str]) -> bool:
    """Will this invocation start the terminal interface (the only place pi asks questions)?"""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    from .cli_args import BUILTIN_COMMANDS

    if args and args[0] in BUILTIN_COMMANDS:
        return False
    return not any(a in ("-p", "--print", "--mode", "--help", "-h", "--list-models", "--export") or
                   a.startswith("--mode=") for a in args)


def _protocol_mode(args: list[str]) -> bool:
    """``--mode json`` or ``--mode rpc``, where stdout carries the protocol alone."""
    return _stream_mode(args) is not None


def _stream_mode(args: list[str]) -> str | None:
    """``json`` or ``rpc`` for ``--mode json`` / ``--mode rpc`` (``None`` otherwise)."""
    from .cli_args import BUILTIN_COMMANDS

    if (args and args[0] in BUILTIN_COMMANDS) or any(a in ("--help", "-h") for a in args):
        return None
    for i, arg in enumerate(args):
        value = arg[7:] if arg.startswith("--mode=") else args[i + 1] if arg == "--mode" and i + 1 < len(args) else None
        if value in ("json", "rpc"):
            return value
    return None


def _trust_mode(args: list[str]) -> str:
    """``ctx.mode`` of ``project_trust`` handlers: the mode this invocation starts (pi's; ``print`` for
    everything that is neither the terminal nor a protocol, as pi has it for ``--help``)."""
    return "tui" if _interactive(args) else _stream_mode(args) or "print"


def _trust_ui() -> UI:
    """``ctx.ui`` for ``project_trust`` handlers: line dialogs on the terminal, before the interface starts."""
    from .modes.interactive.trust_ui import TrustPromptUI

    return TrustPromptUI()


def ask_trust(cwd: object) -> tuple[bool, bool] | None:
    """Ask once whether this project's .pi/ code may run; the answer can be remembered (trust.json)."""
    sys.stderr.write(f"pi: {cwd} has project files (.pi/) that can run code from this repository.\n"
                     "    Trust it?  y = yes, remember   o = only this time   n = no, remember   Enter = not now: ")
    sys.stderr.flush()
    try:
        answer = input().strip().lower()
    except (EOFError, KeyboardInterrupt):
        return None
    return {"y": (True, True), "yes": (True, True), "o": (True, False), "n": (False, True), "no": (False, True),
            "": (False, False)}.get(answer, (False, False))


def _check_session_early(args: list[str]) -> None:
    """Start the index check of the session this run will open (``--session FILE``, ``--continue``) on a
    thread, so it runs while plugins load (see :func:`pi_core.session.scan_index.check_early`); in a run
    that sends a message and ends (print and json modes), also a helper decoding its messages on the other
    core for the first request (:func:`pi_core.ai.turn_helper.read_ahead`). Only hints: the open uses the
    index check if the file is unchanged, the request the helper if it has the lines the request sends;
    ``--continue`` picks as the open will, but in the folder flags and the environment name (settings are
    not read yet), so a guess may name another file."""
    from pathlib import Path

    values: dict[str, str] = {}
    continuing = False
    for n, arg in enumerate(args):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if name in ("--session", "--session-dir"):
            if not eq:
                value = args[n + 1] if n + 1 < len(args) else ""
            values[name] = value
        continuing = continuing or arg in ("-c", "--continue")
    target: Path | None = None
    if values.get("--session"):
        target = Path(values["--session"]).expanduser()
    elif continuing:
        from .session.manager import recent_session_file

        target = recent_session_file(Path.cwd(), values.get("--session-dir") or None)
    if target is not None and target.is_file():
        if not _interactive(args) and _stream_mode(args) != "rpc":
            from .ai.turn_helper import read_ahead

            read_ahead(target)  # before any thread is started
        from .session.scan_index import check_early

        check_early(target)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    main()

__all__ = ["main", "run"]
