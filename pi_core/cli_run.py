"""What ``pi [options] [@files] [messages]`` does once typer has parsed the options."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cli_args import GlobalOptions
    from .extensions.manager import PluginHost

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


class RunError(Exception):
    """The run cannot start or failed (unknown model, missing file...): exit code 1."""


@dataclass
class RunOptions:
    messages: list[str] = field(default_factory=list)
    print_mode: bool = False
    mode: str | None = None
    provider: str | None = None
    model: str | None = None
    models: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    tools: str | None = None
    exclude_tools: str | None = None
    no_tools: bool = False
    no_builtin_tools: bool = False
    toolset: str | None = None
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    name: str | None = None
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    no_skills: bool = False
    prompt_templates: list[str] = field(default_factory=list)
    no_prompt_templates: bool = False
    no_context_files: bool = False
    list_models: str | None = None
    export: str | None = None
    verbose: bool = False
    themes: list[str] = field(default_factory=list)
    """``--theme`` values: theme files or directories (pi's meaning), or a theme name (our older meaning)."""
    use_theme: str | None = None
    no_themes: bool = False
    tui_mode: str | None = None


def run_command(options: RunOptions, host: PluginHost, globals_: GlobalOptions) -> int:
    try:
        if options.list_models is not None:
            return list_models(host, options.list_models)
        if options.export is not None:
            return export_session(options, host)
        return asyncio.run(_run(options, host, globals_))
    except UsageError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def _run(options: RunOptions, host: PluginHost, globals_: GlobalOptions) -> int:
    from .runtime.agent_session import UnknownCommandError
    from .session import SessionError
    from .sdk import ResourceOptions, SetupError, StartCancelled, create_agent_session
    from .startup import startup_done

    mode = _mode(options)
    if mode == "rpc" and _file_args(options):
        raise RunError("@file arguments cannot be used in RPC mode")
    if options.resume and mode != "interactive":
        raise UsageError("--resume picks a session in the terminal interface; use --continue or --session")
    if options.tui_mode not in (None, "regular"):
        # pi's default is its fullscreen mode; this program has only the regular (scrollback) one
        raise UsageError("--tui-mode fullscreen is not available in pi for Python: the terminal interface "
                         "writes to the scrollback only (--tui-mode regular)" if options.tui_mode == "fullscreen"
                         else f"--tui-mode must be fullscreen or regular, not {options.tui_mode!r}")
    if options.thinking is not None and options.thinking not in THINKING_LEVELS:
        raise UsageError(f"--thinking must be one of {', '.join(THINKING_LEVELS)}, not {options.thinking!r}")
    resources = ResourceOptions(
        skill_paths=tuple(options.skills), no_skills=options.no_skills,
        prompt_template_paths=tuple(options.prompt_templates), no_prompt_templates=options.no_prompt_templates,
        no_context_files=options.no_context_files, theme_paths=tuple(_theme_paths(options)),
        no_themes=options.no_themes)
    reported = len(host.diagnostics)
    ui = _interactive_ui() if mode == "interactive" else _rpc_ui() if mode == "rpc" else None
    if mode != "interactive":  # -p, JSON and RPC: a failing hook is named on stderr (RPC adds an event)
        host.error_listeners.append(_report_hook_error)
    else:  # the terminal: a notice (those from start-up show once the screen is up)
        host.error_listeners.append(lambda error: _notify_hook_error(ui, error))
    try:
        session = await create_agent_session(
            host.cwd, host=host, model=options.model, provider=options.provider, thinking_level=options.thinking,
            scoped_models=_split(options.models) or (),
            tools=_split(options.tools), toolset=options.toolset, exclude_tools=_split(options.exclude_tools),
            no_tools="all" if options.no_tools else "builtin" if options.no_builtin_tools else None,
            resources=resources, session=_session_choice(options),
            session_dir=options.session_dir, system_prompt=_text_or_file(options.system_prompt),
            append_system_prompt="\n\n".join(filter(None, map(_text_or_file, options.append_system_prompt))) or None,
            mode="tui" if mode == "interactive" else mode, flags=globals_.plugin_flags, api_key=options.api_key,
            ui=ui,
            settings=_setting_overrides(options), explicit=_explicit(options),
        )
    except StartCancelled:  # asked in the terminal how to open the session, the user chose Cancel
        return 0
    except SetupError as exc:
        raise RunError(str(exc)) from exc
    finally:
        for diagnostic in host.diagnostics[reported:]:
            print(f"pi: {diagnostic.message}", file=sys.stderr)
    startup_done()
    if mode != "interactive":  # the terminal shows its own notices
        for problem in _config_problems(session):
            print(f"pi: {problem}", file=sys.stderr)
    if options.name:
        session.set_session_name(options.name)
    try:
        # piped stdin is read once the session is open: a question asked while opening it (a session of
        # another project) takes the first line, as pi's does
        prompts, images = _prompts(options, mode)
        if options.resume:
            prompts = ["/resume", *prompts]  # the interface opens its session picker first
        code = await _dispatch(session, mode, prompts, images)
        # Another program truncated or replaced the session file mid-run: said when it happened; the run
        # went on in memory (its answer was given), but not all of it is on disk.
        return code or (1 if getattr(session.session, "write_error", None) is not None else 0)
    except UnknownCommandError as exc:  # pi -p "/nope": said plainly, never sent to the model
        raise RunError(str(exc)) from None
    except SessionError as exc:  # the session file failed under the run: one line, naming it
        raise RunError(str(exc)) from None
    finally:
        await session.close()


async def _dispatch(session: Any, mode: str, prompts: list[str], images: list[Any]) -> int:
    if mode == "rpc":
        from .modes.rpc import run_rpc

        return await run_rpc(session)
    if mode == "interactive":
        from .modes.interactive import run_interactive

        if len(prompts) > 1 or images:
            raise UsageError("the terminal interface takes one prompt and no images; use -p for more")
        return await run_interactive(session, initial_prompt=prompts[0] if prompts else None)
    if not prompts:
        raise UsageError("nothing to do: give a prompt (pi -p \"task\") or pipe one on stdin")
    from .ai.turn_store import defer_to_exit

    defer_to_exit()  # the process ends with the answer: turns are stored after it, not beside the request
    code = 0
    for index, prompt in enumerate(prompts):
        if mode == "json":
            from .modes.json_mode import run_json

            code = await run_json(session, prompt, images=images if index == 0 else None, header=index == 0)
        else:
            from .modes.print_mode import run_print

            code = await run_print(session, prompt, images=images if index == 0 else None)
        if code:
            break
    return code


def _config_problems(session: Any) -> list[str]:
    """What pi read and ignored in its files (settings.json, models.json, auth.json: broken, nested too
    deeply, values of the wrong type), each naming the file: said once at start, not silently dropped."""
    found = [*getattr(session.settings, "errors", ()), *getattr(session.models, "errors", ())]
    return list(dict.fromkeys(str(problem) for problem in found))


def _report_hook_error(error: Any) -> None:
    print(f"pi: {error}", file=sys.stderr, flush=True)


def _notify_hook_error(ui: Any, error: Any) -> None:
    task = asyncio.ensure_future(ui.notify(str(error), "error"))
    _notices.add(task)
    task.add_done_callback(_notices.discard)


_notices: set[Any] = set()


def _mode(options: RunOptions) -> str:
    if options.mode not in (None, "text", "json", "rpc"):
        raise UsageError(f"--mode must be text, json or rpc, not {options.mode!r}")
    if options.mode in ("json", "rpc"):
        return options.mode
    if options.print_mode or options.mode == "text" or not sys.stdin.isatty() or not sys.stdout.isatty():
        return "print"
    return "interactive"


def _file_args(options: RunOptions) -> list[str]:
    return [m[1:] for m in options.messages if m.startswith("@") and len(m) > 1]


def _prompts(options: RunOptions, mode: str) -> tuple[list[str], list[Any]]:
    files = _file_args(options)
    messages = [m for m in options.messages if not (m.startswith("@") and len(m) > 1)]
    if mode == "rpc":
        return [], []
    piped = sys.stdin.read().strip() if mode != "interactive" and not sys.stdin.isatty() else ""
    prefix, images = _file_arguments(files)
    # pi's rule: piped text, then the @file text, then the first message, joined as they are.
    first = piped + prefix + (messages[0] if messages else "")
    if first:
        messages = [first, *messages[1:]]
    return messages, images


def _file_arguments(files: list[str]) -> tuple[str, list[Any]]:
    """``@path`` arguments: text files inlined in ``<file>`` tags, images attached to the first prompt."""
    from .ai.types import ImageContent
    from .toolkit.images import detect_image_mime

    text, images = "", []
    for name in files:
        path = Path(name).expanduser().resolve()
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise RunError(f"file not found: {path}") from exc
        except OSError as exc:
            raise RunError(f"cannot read {path}: {exc.strerror}") from exc
        if not data:
            continue
        mime = detect_image_mime(data)
        if mime:
            images.append(ImageContent(data=base64.b64encode(data).decode(), mime_type=mime))
            text += f'<file name="{path}"></file>\n'
        else:
            text += f'<file name="{path}">\n{data.decode("utf-8", "replace")}\n</file>\n'
    return text, images


def _theme_paths(options: RunOptions) -> list[str]:
    return [str(Path(value).expanduser().resolve()) for value in options.themes if Path(value).expanduser().exists()]


def _setting_overrides(options: RunOptions) -> dict[str, Any] | None:
    """Settings that flags change for this run only: ``--use-theme`` (or a ``--theme`` value that names
    no file: a theme name), ``--verbose`` (``quietStartup`` off)."""
    overrides: dict[str, Any] = {}
    names = [value for value in options.themes if not Path(value).expanduser().exists()]
    chosen = options.use_theme or (names[-1] if names else None)
    if chosen:
        overrides["theme"] = chosen
    if options.verbose:
        overrides["quiet_startup"] = False
    return overrides or None


def _explicit(options: RunOptions) -> list[str]:
    """What the flags chose, which a switch to another session keeps (pi re-applies its flags then)."""
    tools = (options.tools, options.toolset, options.exclude_tools, options.no_tools or None,
             options.no_builtin_tools or None)
    given = {"model": options.model is not None or options.provider is not None,
             "thinking": options.thinking is not None, "tools": any(t is not None for t in tools)}
    return [name for name, chosen in given.items() if chosen]


def _split(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (``None`` when the option was not given)."""
    if value is None:
        return None
    return [t.strip() for t in value.split(",") if t.strip()]


def _session_choice(options: RunOptions) -> Any:
    _check_session_flags(options)
    if options.fork:
        return lambda cwd, session_dir: _fork(options.fork or "", options.session_id, cwd, session_dir)
    if options.no_session:
        return "memory" if options.session_id is None else lambda cwd, _dir: _in_memory(cwd, options.session_id)
    if options.session:
        return options.session
    if options.continue_session:
        return "continue"
    if options.session_id is not None:
        return lambda cwd, session_dir: _with_id(options.session_id or "", cwd, session_dir)
    return "new"


_SESSION_FLAGS = {"session": "--session", "continue_session": "--continue", "resume": "--resume",
                  "no_session": "--no-session"}


def _check_session_flags(options: RunOptions) -> None:
    """pi's combinations: ``--fork`` and ``--session-id`` choose a session, so they exclude the others."""
    rules = [("--fork", bool(options.fork), ("session", "continue_session", "resume", "no_session")),
             ("--session-id", options.session_id is not None, ("session", "continue_session", "resume"))]
    for flag, given, excluded in rules:
        clash = [_SESSION_FLAGS[name] for name in excluded if given and getattr(options, name)]
        if clash:
            raise UsageError(f"{flag} cannot be combined with {', '.join(clash)}")
    if options.session_id is not None:
        from .session.ids import check_session_id

        try:
            check_session_id(options.session_id)
        except ValueError as exc:
            raise UsageError(f"--session-id: {exc}") from exc


def _fork(source: str, session_id: str | None, cwd: Path, session_dir: Any) -> Any:
    from .sdk import find_session
    from .session import SessionManager

    if session_id is not None and SessionManager.find_by_id(cwd, session_id, session_dir=session_dir):
        raise RunError(f"a session with id {session_id!r} already exists here; choose another --session-id")
    path = find_session(cwd, source, session_dir)
    if not path.is_file():
        raise RunError(f"no session file {path} to fork")
    return SessionManager.fork_from(path, cwd, session_dir, id=session_id)


def _in_memory(cwd: Path, session_id: str | None) -> Any:
    from .session import SessionManager

    manager = SessionManager.in_memory(cwd)
    manager.new_session(id=session_id)
    return manager


def _with_id(session_id: str, cwd: Path, session_dir: Any) -> Any:
    """``--session-id``: this directory's session with that id, else a new session given that id."""
    from .session import SessionManager

    found = SessionManager.find_by_id(cwd, session_id, session_dir=session_dir)
    if found is not None:
        return SessionManager.open(found)
    print(f"pi: no session of this directory has id {session_id!r}; starting a new one with it", file=sys.stderr)
    return SessionManager.create(cwd, session_dir=session_dir, id=session_id)


def _text_or_file(value: str | None) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    try:
        if len(value) < 4096 and path.is_file():
            return path.read_text()
    except OSError:
        pass
    return value


def _rpc_ui() -> Any:
    """The RPC mode's ``ctx.ui`` from the start: what plugins show in ``session_start`` reaches the client
    once the server runs."""
    from .modes.rpc.ui import RpcUI

    return RpcUI()


def _interactive_ui() -> Any:
    from .modes.interactive import create_ui

    return create_ui()


def list_models(host: PluginHost, search: str) -> int:
    from .ai import ModelRegistry

    registry = ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=host.agent_dir)
    # the offline test provider is listed only when asked for by name (or with PI_FAUX=1)
    show_faux = os.environ.get("PI_FAUX") == "1" or "faux" in search.lower()
    rows = [m for m in registry.available_models(unlisted=show_faux) if _matches(search, f"{m.provider} {m.id}")]
    rows.sort(key=lambda m: (m.provider, m.id))
    table = [("provider", "model", "context", "max-out", "thinking", "images")]
    table += [(m.provider, m.id, _tokens(m.context_window), _tokens(m.max_tokens), "yes" if m.reasoning else "no",
               "yes" if "image" in m.input else "no") for m in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    if not rows:
        print("no models with usable credentials" + (f" match {search!r}" if search else ""), file=sys.stderr)
    return 0


def _matches(search: str, text: str) -> bool:
    """Fuzzy: every character of ``search`` appears in order (case-insensitive)."""
    position = 0
    text = text.lower()
    for char in search.lower():
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:g}M"
    return f"{count // 1000}K" if count >= 1000 else str(count)


def export_session(options: RunOptions, host: PluginHost) -> int:
    from .export_html import export_session_html

    source = Path(options.export or "").expanduser()
    target = Path(options.messages[0]) if options.messages else Path(f"pi-session-{source.stem}.html")
    try:
        written = export_session_html(source, target, theme=_export_theme(options, host))
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot export {source}: {exc}") from exc
    print(f"Exported to: {written}")
    return 0


def _export_theme(options: RunOptions, host: PluginHost) -> Any:
    """The theme the terminal would use here (``--theme``/``--use-theme``, the ``theme`` setting, theme
    files of the agent directory, the trusted project, packages): pi 1.6's ``--export`` ignores it."""
    from .modes.interactive.theme import choose_theme, configured_catalog, terminal_background, theme_setting
    from .packages import package_set_for
    from .runtime.session_cwd import stored_trust
    from .runtime.settings import Settings

    cwd, agent_dir = Path(host.cwd), Path(host.agent_dir)
    settings = Settings.load(cwd, agent_dir, trusted=stored_trust(host, cwd))
    extra = [] if options.no_themes else package_set_for(host).theme_paths
    catalog = configured_catalog(settings, agent_dir, cwd, extra=extra, given=[Path(p) for p in _theme_paths(options)],
                                 no_themes=options.no_themes)
    errors = list(catalog.errors)
    setting = (_setting_overrides(options) or {}).get("theme") or theme_setting(settings)
    theme = choose_theme(setting, catalog, background=terminal_background(), errors=errors)
    for problem in errors:
        print(f"pi: {problem}", file=sys.stderr)
    return theme


__all__ = ["RunError", "RunOptions", "UsageError", "run_command"]
