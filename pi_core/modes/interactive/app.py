"""The interactive mode's main loop: ``pi`` without ``-p``.

One asyncio loop runs everything: the editor line (prompt_toolkit), the agent run (a task), the
renderer (a session subscriber) and dialogs. The editor stays on screen while the agent works, so
the user can queue steering (Enter) or follow-ups (Alt+Enter) and interrupt (Esc). A dialog (from a
plugin or a command) takes the keyboard: the editor is put away with its text kept, the dialog
runs, the editor comes back.

Without a terminal on stdout the same loop runs line by line (:class:`LineOutput`): no live region,
no colours, one line of input per prompt.
"""

from __future__ import annotations

import asyncio
import inspect
import contextlib
import shlex
import shutil
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pi_core import UnknownCommandError

from ...runtime.commands import argument_completions
from ..signals import SignalStop
from .commands import all_commands, parse
from .dialogs import LineDialogs, TerminalDialogs
from .footer import footer_rows
from .keybindings import Keymap
from .render import Renderer
from .style import ASCII_GLYPHS, Glyphs, Palette, clip, unicode_wanted
from .terminal import (
    TerminalOutput,
    disable_extended_keys,
    enable_extended_keys,
    install_extended_keys,
    keys_held_for_the_editor,
    set_title,
)
from .ui import InteractiveUI

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

T = TypeVar("T")
HINT_SECONDS = 2.0
DOUBLE_ESCAPE_SECONDS = 0.5
PENDING_SHOWN = 20
"""Rows waiting to be written to the scrollback are drawn above the live region meanwhile (so nothing
flickers away); a big batch shows only its end (it is written a moment later anyway)."""
THEME_POLL_TICKS = 5
"""How often (in 0.1 s ticks) the active theme's file is checked for changes (pi watches it)."""
COMMAND_WAIT = 0.5
"""How long the editor stays away while a command runs (it comes back sooner if the command asks
something, and later commands' output still lands in the scrollback)."""


class _Suspend(Exception):
    """Puts the editor away (a dialog wants the keyboard, or pi is exiting)."""


class LineOutput:
    """Renderer output for a pipe: rows as plain lines, nothing live."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def scroll(self, rows: list[str]) -> None:
        self.stream.write("".join(f"{row}\n" for row in rows))
        self.stream.flush()

    def live_changed(self) -> None:
        return None


class _EarlyHost:
    """Where a UI made before the app starts (for ``create_agent_session(ui=...)``) sends things."""

    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, tuple[list[str] | None, str]] = {}
        self.draft = ""
        self.theme: Any = None  # ctx.ui.set_theme before the terminal is up (a plugin's session_start)

    async def exclusive(self, run: Callable[[], Awaitable[T]]) -> T:
        return await run()

    def notify(self, message: str, level: str) -> None:
        self.notices.append((message, level))

    def set_status(self, key: str, text: str | None) -> None:
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text

    def set_title(self, title: str) -> None:
        return None

    def switch_theme(self, theme: Any) -> str | None:
        self.theme = theme
        return None

    def set_widget(self, key: str, lines: list[str] | None, placement: str) -> None:
        self.widgets[key] = (lines, placement)

    def editor_text(self) -> str:
        return self.draft

    def show_block(self, title: str, lines: list[str]) -> None:
        self.notices.append(("\n".join([title, *lines] if title else lines), "info"))

    def set_editor_text(self, text: str, *, paste: bool = False) -> None:
        self.draft = self.draft + text if paste else text


def create_ui(stdout: TextIO | None = None) -> InteractiveUI:
    """A UI to pass to ``create_agent_session(ui=...)`` before :func:`run_interactive` starts: what
    plugins report during start-up is shown once the screen is up."""
    stream = stdout or sys.stdout
    palette = Palette.for_stream(stream)
    return InteractiveUI(_EarlyHost(), TerminalDialogs(palette))


class InteractiveApp:
    """One interactive run over a session (and the sessions ``/new`` and ``/resume`` switch to)."""

    def __init__(self, session: AgentSession, *, stdin: TextIO, stdout: TextIO, tty: bool) -> None:
        self.session = session
        self.stdin = stdin
        self.stdout = stdout
        self.tty = tty
        self.exit_code = 0  # 143/129 when SIGTERM/SIGHUP ended the program
        glyphs = Glyphs() if unicode_wanted(stdout) else ASCII_GLYPHS
        self.palette = Palette.for_stream(stdout) if tty else Palette(False, glyphs)
        self._theme_errors: list[str] = []
        self._capabilities = self._detect_terminal()
        self.palette = self.palette.with_theme(self._choose_theme(self.palette.colour))
        self.output: TerminalOutput | LineOutput = TerminalOutput(stdout, self._output_app) if tty \
            else LineOutput(stdout)
        self.renderer = Renderer(self.output, self.palette, self._width)
        self.renderer.defer_layout = tty  # long answers are laid out off the loop: keys keep echoing
        self._apply_display_settings()
        self.status = self._terminal_status()
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, tuple[Any, str]] = {}  # lines or a plugin's component, placement
        self._widget_factories: dict[str, Any] = {}
        self._footer_component: Any = None
        self._editor_bridge: Any = None  # a plugin's editor (ctx.ui.set_editor_component), once the editor is up
        self._handed_out = False  # a plugin gave the terminal to a program (tui.stop())
        self._terminal_modes: list[Any] = []  # the terminal's mode as pi found it, and while pi holds it
        self.terminal_handoff = _TerminalHandoff(self)
        self.hint: str | None = None
        self._hint_until = 0.0
        self._last_ctrl_c = 0.0
        self._task: asyncio.Task[Any] | None = None
        self._exit = False
        self._submit_kind = "enter"
        self._draft = ""
        self._dialogs: deque[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = deque()
        self._dialog_wanted = asyncio.Event()
        self._editor: Any = None
        self._editor_active = False
        self._loop_done = False
        self._unsubscribe: Callable[[], None] | None = None
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._line_waiters: deque[asyncio.Future[str | None]] = deque()
        self._reading = False
        self._last_escape = 0.0
        self._branch: Any = None
        self._ansi_cache: dict[str, tuple[str, Any]] = {}
        self.starting = False
        self._theme_stamp: tuple[int, int] | None = None  # the active theme file's mtime and size (hot reload)
        self._pending_command: str | None = None
        self._draft_after_command = ""
        self.keymap = Keymap.load(getattr(session.host, "agent_dir", None))
        from .layer import Layer

        self.layer = Layer(self)  # plugins' custom() components and overlays
        self.renderer.hide_thinking = self._setting("hideThinkingBlock", False) is True
        self._early_theme: Any = None
        self.ui = self._adopt_ui()
        if self._early_theme is not None:  # a plugin's set_theme before the terminal was up
            problem = self.switch_theme(self._early_theme)
            if problem:
                self.renderer.notice(f"theme: {problem}", "warning")
        self.components_changed("all")  # what plugins set before the terminal was up
        self.renderer.lookup_message = lambda custom_type: self.session.ctx.get_message_renderer(custom_type)
        self.renderer.lookup_entry = lambda custom_type: self.session.ctx.get_entry_renderer(custom_type)
        self._entries_seen = 0  # the session's entries already drawn (plugins' custom entries come after)
        self.renderer.lookup_tool = self._tool_named
        self.renderer.cwd = lambda: str(self.session.cwd)

    # -- set-up --------------------------------------------------------------------------------

    def _adopt_ui(self) -> InteractiveUI:
        current = self.session.ctx.ui
        if self.tty:
            dialogs: Any = TerminalDialogs(self.palette)
        else:
            dialogs = LineDialogs(lambda text: self.output.scroll(text.split("\n")), self._read_line)
        if isinstance(current, InteractiveUI):
            early = current.host
            current.host, current.dialogs = self, dialogs
            if isinstance(early, _EarlyHost):
                self.statuses.update(early.statuses)
                for key, (lines, placement) in early.widgets.items():
                    self.set_widget(key, lines, placement)
                self._draft = early.draft
                for message, level in early.notices:
                    self.renderer.notice(message, level)
                self._early_theme = early.theme
            return current
        ui = InteractiveUI(self, dialogs)
        self.session.ctx.ui = ui
        return ui

    def _choose_theme(self, colour: bool) -> Any:
        """The ``theme`` setting (or ``--theme``): a built-in, a theme file of the agent directory,
        the project (trusted) or the ``themes`` setting; ``light/dark`` picks by the terminal."""
        from .theme import choose_theme, session_theme_catalog, terminal_background

        catalog = session_theme_catalog(self.session)
        self.themes = catalog
        self._theme_errors.extend(catalog.errors)
        setting = self._setting("theme", None)
        return choose_theme(setting if isinstance(setting, str) else None, catalog,
                            background=terminal_background(), colour=colour, errors=self._theme_errors)

    def _detect_terminal(self) -> Any:
        """What the terminal shows (OSC 8 hyperlinks, truecolour), as pi decides it from the terminal,
        ``PI_HYPERLINKS`` / ``PI_TRUE_COLOR`` and the ``terminal.*`` settings; themes follow it."""
        from .capabilities import Capabilities, configure

        return configure(getattr(self.session, "settings", None)) if self.tty else Capabilities(False, False)

    def _apply_display_settings(self) -> None:
        """pi's ``outputPad`` (the transcript's side padding; a pipe gets none), ``markdown.codeBlockIndent``
        and the hyperlink decision, for what the renderer prints from now on."""
        from .capabilities import code_block_indent, output_pad

        self.renderer.pad = output_pad(self._setting("outputPad", None)) if self.tty else 0
        self.renderer.code_indent = code_block_indent(self._setting("markdown.codeBlockIndent", None))
        self.renderer.hyperlinks = self._capabilities.hyperlinks

    def _attach(self, session: AgentSession) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.session = session
        session.ctx.ui = self.ui
        def handle(event: Any) -> None:
            self._draw_new_entries()  # a plugin's entry appended before this event is drawn before it
            self.renderer.handle(event)
            self.status.handle(event)
            if getattr(event, "type", None) == "session_info_changed":
                self._update_title()

        unsubscribe = session.subscribe(handle)
        forget = session.on_shutdown_requested(self._on_shutdown_requested)
        forget_moves = session.on_session_changed(self._on_session_changed)
        forget_reload = session.on_reloaded(self._on_reloaded)

        def detach() -> None:
            unsubscribe()
            forget()
            forget_moves()
            forget_reload()

        self._unsubscribe = detach
        self._entries_seen = self._entry_count()

    def _width(self) -> int | None:
        return shutil.get_terminal_size((80, 24)).columns if self.tty else None

    def _editor_app(self) -> Any:
        return self._editor.app if self._editor is not None else None

    def _output_app(self) -> Any:
        """The application on screen: a plugin's component or overlay (the layer's), else the editor."""
        layer = getattr(self, "layer", None)
        app = layer.app if layer is not None else None
        return app if app is not None and app.is_running else self._editor_app()

    # -- running -------------------------------------------------------------------------------

    async def run(self, initial_prompt: str | None = None) -> int:
        self._loop = asyncio.get_running_loop()
        self._attach(self.session)
        self._header()
        self._list_loaded()
        self._update_title()
        self._show_history()
        self._package_updates()
        restore = self._install_sigint()
        terminate = SignalStop(self._on_terminate).install()
        try:
            if initial_prompt and initial_prompt.strip():
                self.starting = True  # e.g. `pi -r`: Esc in the picker exits
                task = await self.submit(initial_prompt, "enter")
                if task is not None and self._is_command(initial_prompt) and self.tty:
                    await asyncio.wait({task}, timeout=COMMAND_WAIT)
                self.starting = False
            if self.tty:
                await self._terminal_loop()
            else:
                await self._line_loop()
        finally:
            self._loop_done = True
            restore()
            terminate.remove()
            await self._shutdown()
        return self.exit_code

    def _header(self) -> None:
        from pi_core import __version__

        p = self.palette
        s = self.session
        name = s.session.get_session_name()
        where = str(s.cwd).replace(str(Path.home()), "~", 1)
        title = f"pi {__version__}  {p.glyphs.bullet}  {s.model.provider}/{s.model.id}  {p.glyphs.bullet}  {where}"
        session_label = f"session {s.session.session_id[:8]}" + (f" ({name})" if name else "")
        header = self.ui.header_factory
        if header is not None:  # a plugin's header replaces pi's
            from .components import build, render_component

            self.renderer.scroll(render_component(build(header, self._tui(), self.palette.theme),
                                                  self._width() or 80))
            self.renderer.gap()
        elif self._setting("quietStartup", False) is not True:  # true hides the header, as in pi
            self.renderer.scroll([p(title, "bold"), p(f"{session_label}  {p.glyphs.bullet}  /help for commands, "
                                                       "Esc interrupts, Ctrl+D exits", "gray")])
            self.renderer.gap()
        for problem in self.keymap.errors:
            self.renderer.notice(f"keybindings: {problem}", "warning")
        for problem in self._theme_errors:
            self.renderer.notice(problem if problem.startswith("theme") else f"theme: {problem}", "warning")
        self.keymap.errors.clear()
        self._theme_errors.clear()
        if isinstance(self.output, TerminalOutput):
            self.output.flush_now()

    async def _shutdown(self) -> None:
        self.layer.close()
        self.status.close()
        task = self._task
        if task is not None and not task.done():
            if self.session.is_streaming:
                await self.session.abort()
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), 5)
            if not task.done():
                task.cancel()
        try:
            await self.session.close("quit")
            await self.renderer.settled()
        finally:
            if self._unsubscribe is not None:
                self._unsubscribe()
            with contextlib.suppress(OSError):  # after a hangup there is no terminal to write to
                if isinstance(self.output, TerminalOutput):
                    # a flush begun just before the editor went away may never be answered: don't wait on it
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.output.flush(), 1.0)
                    self.output.flush_now()
                self._print_resume_hint()

    def _print_resume_hint(self) -> None:
        from .actions import resume_command

        command = resume_command(self.session) if self.tty else None
        if command:  # on its own line, so a triple-click selects it
            self.stdout.write(f"{self.palette('To resume this session:', 'dim')}\n{command}\n")
            self.stdout.flush()

    def _install_sigint(self) -> Callable[[], None]:
        """Ctrl+C outside the editor (a pipe, or between two prompts) interrupts a run, else exits."""
        loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        try:
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        except (NotImplementedError, RuntimeError, ValueError):
            return lambda: None
        return lambda: loop.remove_signal_handler(signal.SIGINT)

    def _terminal_gone(self) -> None:
        self.exit_code = self.exit_code or 129
        if self.is_working():
            self.interrupt()
        self._exit = True

    def _on_terminate(self, code: int) -> None:
        """SIGTERM/SIGHUP: stop the run as Esc would, then quit (session_shutdown runs) with ``code``."""
        self.exit_code = code
        if self.is_working():
            self.interrupt()
        self.request_exit()

    def _on_sigint(self) -> None:
        if self._handed_out:  # Ctrl+C was for the program that has the terminal (ui.custom's tui.stop())
            return
        if self.is_working():
            self.interrupt()
        else:
            self.request_exit()

    # -- submitting ----------------------------------------------------------------------------

    def is_working(self) -> bool:
        return (self._task is not None and not self._task.done()) or self.session.is_streaming

    async def submit(self, text: str, kind: str = "enter") -> asyncio.Task[Any] | None:
        """Handle one submitted text: a command, a queued message, or a new prompt."""
        text = text.strip()
        if not text:
            return None
        parsed = parse(text)
        busy = self.is_working()
        if text.startswith("!") and len(text.lstrip("!").strip()) > 0:
            return self._spawn(self._user_bash(text), track=not busy)
        if parsed is not None:
            name, args = parsed
            if name in self.session.host.commands:  # the session runs it, also while the agent works
                self.renderer.notice(f"{self.palette.glyphs.user} /{name}" + (f" {args}" if args else ""))
                return self._spawn(self._prompt(text), track=not busy)
        if busy:
            self._queue(text, kind)
            return None
        return self._spawn(self._prompt(text))

    def _queue(self, text: str, kind: str) -> None:
        if not self.session.is_streaming:
            self.renderer.notice("A command is still running; try again when it is done", "warning")
        elif kind == "followUp":
            self.session.follow_up(text)
        else:
            self.session.steer(text)

    def _spawn(self, work: Awaitable[Any], *, track: bool = True) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        if track:
            self._task = task
        return task

    async def _prompt(self, text: str) -> None:
        try:
            await self.session.prompt(text, source="interactive")
        except UnknownCommandError as exc:
            self.renderer.notice(str(exc), "error")
        except Exception as exc:  # a failing hook or provider must not end the interactive session
            self.renderer.notice(f"Error: {type(exc).__name__}: {exc}", "error")
        finally:
            if self.session.shutdown_requested and not self.session.is_streaming:
                self.request_exit()

    def _on_shutdown_requested(self) -> None:
        """``ctx.shutdown()`` from a plugin: exit now when idle, else once the run is over."""
        if not self.is_working():
            self.request_exit()

    async def _user_bash(self, text: str) -> None:
        """``!cmd`` runs a shell command whose output the model sees with the next prompt; ``!!cmd``
        keeps it out of the model's context."""
        from pi_core import TextContent, ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent
        from pi_core import ToolResult

        private = text.startswith("!!")
        command = text[2 if private else 1:].strip()
        args = {"command": command}
        output: list[str] = []

        def on_output(chunk: str) -> None:
            output.append(chunk)
            partial = ToolResult(content=[TextContent(text="".join(output)[-2000:])])
            self.renderer.handle(ToolExecutionUpdateEvent("user-bash", "bash", args, partial))

        self.renderer.handle(ToolExecutionStartEvent("user-bash", "bash", args))
        try:
            data = (await self.session.run_bash(command, exclude_from_context=private, on_output=on_output)).to_rpc()
        except Exception as exc:
            data = {"output": f"{type(exc).__name__}: {exc}", "exitCode": None, "cancelled": False}
        status = "" if data.get("exitCode") == 0 else \
            ("\n(cancelled)" if data.get("cancelled") else f"\n(exit code {data.get('exitCode')})")
        result = ToolResult(content=[TextContent(text=(data.get("output") or "").rstrip("\n") + status)])
        failed = data.get("exitCode") != 0
        self.renderer.handle(ToolExecutionEndEvent("user-bash", "bash", result, failed))
        if private:
            self.renderer.notice("(not added to the model's context)")

    # -- what commands use ---------------------------------------------------------------------

    def request_exit(self) -> None:
        self._exit = True
        self._suspend_editor()
        self._lines.put_nowait(None)

    def _on_session_changed(self) -> None:
        """The session continues in another file (``/new``, ``/resume``, ``/fork``, ``/clone``): redraw."""
        self._header()
        self._update_title()
        self._show_history()

    def _terminal_status(self) -> Any:
        """OSC 7501 program status and OSC 9;4 progress (:mod:`.terminal_status`); nothing without a terminal."""
        from .terminal_status import TerminalStatus, program_status_wanted

        wanted = program_status_wanted()
        return TerminalStatus(self._write_terminal, lambda: self.session.session.get_session_name(),
                              progress=self.tty and self._setting("terminal.showTerminalProgress", False) is True,
                              supported=self.tty and wanted is True)

    def _write_terminal(self, text: str) -> None:
        if self.tty:
            with contextlib.suppress(OSError, ValueError):
                self.stdout.write(text)
                self.stdout.flush()

    def _start_status(self) -> None:
        """Ask the terminal whether it shows program status (pi asks at start), take its answer off the input,
        and check tmux's key setup in the background."""
        from prompt_toolkit.key_binding import merge_key_bindings

        from .terminal_status import PROGRAM_STATUS_QUERY, program_status_wanted, reply_key_bindings, tmux_warning

        self._editor.key_bindings = merge_key_bindings([self._editor.key_bindings,
                                                        reply_key_bindings(self.status.confirm)])
        if program_status_wanted() is None:
            self._write_terminal(PROGRAM_STATUS_QUERY)
        self.status.report()

        async def tmux() -> None:
            warning = await asyncio.to_thread(tmux_warning)
            if warning:
                self.renderer.notice(warning, "warning")

        self._spawn(tmux(), track=False)

    def _on_reloaded(self) -> None:
        """``/reload`` finished: read ``keybindings.json`` and the themes again (the editor's keys follow at
        once, the theme setting is chosen anew), and list what is loaded now, as pi does."""
        from .keybindings import Keymap

        self.keymap = Keymap.load(getattr(self.session.host, "agent_dir", None))
        for problem in self.keymap.errors:
            self.renderer.notice(f"keybindings: {problem}", "warning")
        self.keymap.errors.clear()
        self._theme_errors.clear()
        self._capabilities = self._detect_terminal()  # the terminal.* settings may have changed
        self._apply_display_settings()
        if self._editor is not None:
            from .input import truecolor_depth

            self._editor.color_depth = truecolor_depth(self._capabilities.truecolor)
        theme = self._choose_theme(self.palette.colour)
        for problem in self._theme_errors:
            self.renderer.notice(problem if problem.startswith("theme") else f"theme: {problem}", "warning")
        self._theme_errors.clear()
        self.switch_theme(theme)
        self._theme_stamp = _stamp(theme)
        self._list_loaded()

    def _reload_changed_theme(self) -> None:
        """pi's hot reload: the active theme, when it is a file of ``<agent dir>/themes``, is read again once it
        changes; a file that does not load (half written) keeps the theme as it was."""
        from .theme import ThemeError, load_theme_file

        theme = self.palette.theme
        source = getattr(theme, "source", None)
        agent_dir = getattr(self.session.host, "agent_dir", None)
        if source is None or agent_dir is None or Path(source).parent != Path(agent_dir) / "themes":
            return
        stamp = _stamp(theme)
        if stamp == self._theme_stamp:
            return
        if self._theme_stamp is None:  # the first look: remember the file as it is
            self._theme_stamp = stamp
            return
        self._theme_stamp = stamp
        try:
            fresh = load_theme_file(Path(source), colour=self.palette.colour, truecolor=theme.truecolor)
        except ThemeError:
            return
        self.switch_theme(fresh)

    def _list_loaded(self) -> None:
        """pi's listing of the context files, skills, prompt templates and extensions loaded, under the header
        (left out with ``quietStartup`` or a plugin's header)."""
        if self.ui.header_factory is not None or self._setting("quietStartup", False) is True:
            return
        from .loaded import loaded_resource_rows

        self.renderer.scroll(loaded_resource_rows(self.palette, self.session))

    def _update_title(self) -> None:
        """pi's window title: ``π - <session name> - <folder>`` (``π - <folder>`` without a name)."""
        name = self.session.session.get_session_name()
        self.set_title(" - ".join(["π", *([name] if name else []), Path(self.session.cwd).name]))

    def _show_history(self) -> None:
        """The tail of the conversation, and the footer's totals for the whole of it."""
        from .footer import GitBranch
        from .render import Stats

        messages = list(self.session.messages)
        if messages:
            self.renderer.replay(self._with_entries(messages))
        self._entries_seen = self._entry_count()
        self.renderer.stats = Stats.of(messages)
        self._branch = GitBranch(self.session.cwd)

    def _entry_count(self) -> int:
        count = getattr(getattr(self.session, "session", None), "entry_count", None)
        return int(count()) if callable(count) else 0

    def _draw_new_entries(self) -> None:
        """Draw the ``custom`` entries appended since the last look that a plugin renders
        (``ctx.register_entry_renderer``)."""
        count = self._entry_count()
        if count <= self._entries_seen:
            self._entries_seen = count
            return
        renderers = self.session.ctx.get_entry_renderer_types()
        manager = self.session.session
        fresh = manager.raw_entries()[self._entries_seen:] if renderers else []
        self._entries_seen = count
        for raw in fresh:
            if raw.get("type") == "custom" and raw.get("customType") in renderers:
                entry = manager.get_entry(raw["id"])
                if entry is not None:
                    self.renderer.entry_block(entry)

    def _with_entries(self, messages: list[Any]) -> list[Any]:
        """``messages`` with the branch's rendered ``custom`` entries at their places."""
        from .render import EntryItem

        renderers = self.session.ctx.get_entry_renderer_types()
        manager = getattr(self.session, "session", None)
        entry_id_of = getattr(self.session, "entry_id_of", None)
        if not renderers or manager is None or entry_id_of is None:
            return messages
        branch = manager.get_raw_branch()
        position = {raw.get("id"): index for index, raw in enumerate(branch)}
        items = [(index, EntryItem(manager.get_entry(raw["id"]))) for index, raw in enumerate(branch)
                 if raw.get("type") == "custom" and raw.get("customType") in renderers]
        if not items:
            return messages
        stamped = {raw["message"].get("timestamp"): index for index, raw in enumerate(branch)
                   if raw.get("type") == "message" and isinstance(raw.get("message"), dict)}
        out: list[Any] = []
        for message in messages:  # loaded messages are found by their timestamp, live ones by their id
            at = position.get(entry_id_of(message))
            if at is None:
                at = stamped.get(getattr(message, "timestamp", None))
            while items and at is not None and items[0][0] < at:
                out.append(items.pop(0)[1])
            out.append(message)
        out.extend(item for _, item in items)
        return out

    def _package_updates(self) -> None:
        """pi's "Extension Updates" notice: what changed in updated packages, once, on a fresh start."""
        if list(self.session.messages):
            return
        from ...packages import package_set_for
        from ...packages.changelog import SETTING, changelog_updates
        from .markdown import render_markdown

        host = self.session.host
        settings = getattr(self.session, "settings", None)
        recorded = settings.scope_data("global").get(SETTING, {}) if settings is not None else {}
        updates = changelog_updates(package_set_for(host), Path(host.agent_dir) / "settings.json",
                                    recorded if isinstance(recorded, dict) else {})
        if not updates:
            return
        p = self.palette
        if self._setting("collapseChangelog", False) is True:
            self.renderer.scroll([f"Updated {u.name} to v{u.version}." for u in updates])
        else:
            self.renderer.scroll([p("Extension Updates", "bold")])
            self.renderer.scroll(render_markdown(p, "\n\n".join(u.markdown for u in updates), self.renderer.width(),
                                                 hyperlinks=self.renderer.hyperlinks,
                                                 code_indent=self.renderer.code_indent))
        self.renderer.gap()

    # -- keys ----------------------------------------------------------------------------------

    def set_submit_kind(self, kind: str) -> None:
        self._submit_kind = kind

    def interrupt(self) -> None:
        steering, follow_ups = self.session.clear_queue()
        queued = [*steering, *follow_ups]
        if queued:
            self._restore_into_editor(queued)
        self.session.abort_bash()
        asyncio.ensure_future(self.session.abort())

    def _restore_into_editor(self, texts: list[str]) -> None:
        app = self._editor_app()
        if self._editor_active and app is not None:
            buffer = app.current_buffer
            text = "\n".join([*texts, buffer.text] if buffer.text else texts)
            buffer.text = text
            buffer.cursor_position = len(text)
        else:
            self._draft = "\n".join([*texts, self._draft] if self._draft else texts)

    def ctrl_c(self, buffer: Any) -> None:
        now = time.monotonic()
        if self.is_working():
            self.interrupt()
        elif buffer.text:
            buffer.reset()
        elif now - self._last_ctrl_c < HINT_SECONDS:
            self.request_exit()
        else:
            self._last_ctrl_c = now
            self.show_hint("Press Ctrl+C again to exit")

    def ctrl_d(self) -> None:
        self.request_exit()

    def show_hint(self, text: str) -> None:
        self.hint, self._hint_until = text, time.monotonic() + HINT_SECONDS
        self.output.live_changed()

    def key_action(self, action: str, event: Any) -> None:
        """An application key (see :data:`.input.APP_ACTIONS`); errors become notices."""
        handler = getattr(self, "_key_" + action.split(".", 1)[1].replace(".", "_"), None)
        if handler is None:
            return
        try:
            handler(event)
        except Exception as exc:  # a key must never end the session
            self.renderer.notice(f"{action} failed: {type(exc).__name__}: {exc}", "error")

    def _run_command_text(self, text: str) -> None:
        """Run a slash command as if it had been typed, keeping the editor's text."""
        self._draft_after_command = self.editor_text()
        self._pending_command = text
        self._suspend_editor()

    def _key_interrupt(self, event: Any) -> None:  # Escape while idle: a second one runs doubleEscapeAction
        now = time.monotonic()
        if event.current_buffer.text or now - self._last_escape > DOUBLE_ESCAPE_SECONDS:
            self._last_escape = now
            return
        self._last_escape = 0.0
        action = self._setting("doubleEscapeAction", "tree")
        if action in ("tree", "fork"):
            self._run_command_text(f"/{action}")

    def _key_model_select(self, event: Any) -> None:
        self._run_command_text("/model")

    def _key_model_cycleForward(self, event: Any) -> None:
        self._cycle_model(1)

    def _key_model_cycleBackward(self, event: Any) -> None:
        self._cycle_model(-1)

    def _cycle_model(self, step: int) -> None:
        from .actions import next_model

        model = next_model(self.session, step)  # while the agent works too: the next request uses it, as in pi
        if model is None:
            self.show_hint("No other model to switch to (see /scoped-models)")
            return

        async def switch() -> None:
            await self.session.set_model(model, source="cycle")
            level = self.session.level_for_model(model)
            if level != self.session.thinking_level:
                self.session.set_thinking_level(level)
            self.show_hint(f"Model: {model.provider}/{model.id}" +
                           (f" • thinking {level}" if model.reasoning else ""))

        self._spawn(switch(), track=False)

    def _key_thinking_cycle(self, event: Any) -> None:
        from .actions import next_thinking_level

        buffer = event.current_buffer
        if buffer.complete_state is not None:
            buffer.complete_previous()
            return
        level = next_thinking_level(self.session)
        if level is None:
            self.show_hint(f"{self.session.model.id} does not support thinking")
            return
        self.session.set_thinking_level(level)
        self.show_hint(f"Thinking level: {level}")

    def _key_thinking_toggle(self, event: Any) -> None:
        self.renderer.hide_thinking = not self.renderer.hide_thinking
        self.renderer.notice("Thinking blocks: " + ("hidden" if self.renderer.hide_thinking else "shown"))

    def _key_tools_expand(self, event: Any) -> None:
        self.renderer.toggle_tools_expanded()

    def _key_message_copy(self, event: Any) -> None:
        from .commands import copy_to_clipboard, last_answer

        text = last_answer(self.session) or self.renderer.last_answer
        if not text:
            self.show_hint("There is no answer to copy yet")
            return

        async def copy() -> None:
            how = await asyncio.to_thread(copy_to_clipboard, text)
            self.show_hint("Copied the last answer to the clipboard" if how else "No clipboard available (try /copy)")

        self._spawn(copy(), track=False)

    def _key_message_dequeue(self, event: Any) -> None:
        steering, follow_ups = self.session.clear_queue()
        queued = [*steering, *follow_ups]
        if not queued:
            self.show_hint("No queued messages")
            return
        self._restore_into_editor(queued)

    def _key_editor_external(self, event: Any) -> None:
        from prompt_toolkit.application import run_in_terminal

        from .actions import edit_externally

        buffer = event.current_buffer
        settings = getattr(self.session, "settings", None)

        def edit() -> None:
            disable_extended_keys(self.stdout)
            try:
                result = edit_externally(buffer.text, settings)
            finally:
                enable_extended_keys(self.stdout)
            if result is not None:
                buffer.text, buffer.cursor_position = result, len(result)

        run_in_terminal(edit, in_executor=False)

    def _key_clipboard_pasteImage(self, event: Any) -> None:
        from .actions import paste_from_clipboard

        buffer = event.current_buffer

        async def paste() -> None:
            try:
                got = await asyncio.to_thread(paste_from_clipboard)
            except OSError as exc:
                self.renderer.notice(f"Failed to paste from the clipboard: {exc}", "error")
                return
            if got is None:
                self.show_hint("Nothing to paste from the clipboard")
                return
            kind, text = got
            if kind == "files" and buffer.text.lstrip().startswith("!"):  # shell words on one line, as pi pastes
                text = " ".join(shlex.quote(path) for path in text.split("\n"))
            before = buffer.document.char_before_cursor
            after = buffer.document.current_char
            lead = " " if kind != "text" and before and not before.isspace() else ""
            trail = " " if kind != "text" and after and not after.isspace() else ""
            buffer.insert_text(f"{lead}{text}{trail}")

        self._spawn(paste(), track=False)

    def _key_suspend(self, event: Any) -> None:
        disable_extended_keys(self.stdout)
        try:
            event.app.suspend_to_background()
        finally:
            enable_extended_keys(self.stdout)

    def _key_session_new(self, event: Any) -> None:
        self._run_command_text("/new")

    def _key_session_tree(self, event: Any) -> None:
        self._run_command_text("/tree")

    def _key_session_fork(self, event: Any) -> None:
        self._run_command_text("/fork")

    def _key_session_resume(self, event: Any) -> None:
        self._run_command_text("/resume")

    def _setting(self, key: str, default: Any) -> Any:
        """A pi setting by its key (run-time overrides such as ``--theme`` first, then the files)."""
        settings = getattr(self.session, "settings", None)
        if settings is None:
            return default
        value = getattr(settings, key, None)
        if value is None:  # a typed key holds the effective value, run-time overrides (--verbose) included
            from pydantic.alias_generators import to_snake

            value = getattr(settings, to_snake(key), None)
        if value is None and hasattr(settings, "get"):
            value = settings.get(key, None)
        return default if value is None else value

    # -- the DialogHost side of InteractiveUI ----------------------------------------------------

    async def exclusive(self, run: Callable[[], Awaitable[T]]) -> T:
        if not self.tty or self._loop_done:
            return await run()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._dialogs.append((run, future))
        self._dialog_wanted.set()
        self._suspend_editor()
        self.status.dialog(True)  # the terminal may show that pi waits for the user
        try:
            return await future
        finally:
            self.status.dialog(False)

    def notify(self, message: str, level: str) -> None:
        self.renderer.notice(message, level)

    def show_block(self, title: str, lines: list[str]) -> None:
        self.renderer.print_block([self.palette(title, "bold"), *lines] if title else lines)

    def set_status(self, key: str, text: str | None) -> None:
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text
        self.output.live_changed()

    def set_title(self, title: str) -> None:
        if self.tty:
            set_title(self.stdout, title)

    def set_widget(self, key: str, lines: Any, placement: str) -> None:
        self._widget_factories.pop(key, None)
        if lines is None:
            self.widgets.pop(key, None)
        else:
            where = "belowEditor" if placement == "belowEditor" else "aboveEditor"
            if callable(lines):
                from .components import build

                self._widget_factories[key] = lines
                lines = build(lines, self._tui(), self.palette.theme)
            self.widgets[key] = (lines, where)
        self.output.live_changed()

    def _widget_rows(self, placement: str) -> list[str]:
        from .components import render_component

        width = self._width() or 80
        rows: list[str] = []
        for lines, where in self.widgets.values():
            if where != placement:
                continue
            if isinstance(lines, list):
                rows.extend(clip(line, width, self.palette.glyphs.ellipsis) for line in lines)
            else:
                rows.extend(render_component(lines, width))
        return rows

    # -- plugins' components and looks (ctx.ui) --------------------------------------------------

    def overlay_background(self) -> list[str]:
        """What an overlay is drawn over: the conversation's last rows."""
        if not isinstance(self.output, TerminalOutput):
            return []
        return [*self.output.recent, *self.output.pending]

    def current_theme(self) -> Any:
        return self.palette.theme

    def _tui(self) -> Any:
        from .components import TuiHandle

        return TuiHandle(self.output.live_changed, lambda: self._width() or 80, self.terminal_handoff)

    def components_changed(self, what: str) -> None:
        """Apply what a plugin set through ``ctx.ui`` (footer, working row, tools expanded...)."""
        state = self.ui.working
        r = self.renderer
        r.working_message = state.get("message")
        r.working_visible = state.get("visible", True)
        r.working_frames = state.get("frames")
        r.working_interval_ms = max(int(state.get("interval_ms") or 100), 10)
        r.hidden_thinking_label = state.get("thinking_label")
        if "tools_expanded" in state and bool(state.pop("tools_expanded")) != r.expand_tools:
            r.toggle_tools_expanded()
        if what in ("footer", "all"):
            self._build_footer()
        if what in ("editor", "all"):
            self._build_editor_component()
        if what == "header" and self.ui.header_factory is not None and getattr(self, "_loop", None) is not None:
            from .components import build, render_component

            self.renderer.print_block(render_component(build(self.ui.header_factory, self._tui(), self.palette.theme),
                                                       self._width() or 80))
        self.output.live_changed()

    def _build_footer(self) -> None:
        from .components import FooterData, build

        factory = self.ui.footer_factory
        data = FooterData(lambda: self._branch.get() if self._branch else None, lambda: self.statuses)
        self._footer_component = None if factory is None else build(factory, self._tui(), self.palette.theme, data)

    def _build_editor_component(self) -> None:
        bridge = self._editor_bridge
        if bridge is None:  # the editor is not up yet: built when it is
            return
        factory = self.ui.editor_factory
        component = None
        if factory is not None:
            try:
                component = factory(self._tui(), self.palette.theme, self.keymap)
            except Exception as exc:  # a plugin's bug leaves pi's editor in place
                self.renderer.notice(f"editor component failed: {exc}", "error")
        bridge.set_component(component)
        self.output.live_changed()

    def _tool_named(self, name: str) -> Any:
        """How calls to ``name`` are drawn: plugins' tool renderers (``ctx.register_tool_renderer``), then the
        tool's own."""
        def tool() -> Any:
            try:
                return next((t for t in self.session.ctx.get_all_tools() if t.name == name), None)
            except RuntimeError:  # no session runtime (yet)
                return None

        return self.session.ctx.resolve_tool_renderers(name, tool)

    def _bind_shortcuts(self) -> None:
        """Plugins' shortcuts (``ctx.register_shortcut``) beside the editor's keys; rebuilt when plugins
        register more. A key a built-in action uses stays the built-in's (reported once)."""
        from prompt_toolkit.key_binding import DynamicKeyBindings, KeyBindings, merge_key_bindings

        from .keybindings import display, to_prompt_toolkit

        built: dict[str, Any] = {"version": -1, "keys": KeyBindings()}
        reported: set[str] = set()

        def current() -> Any:
            ctx = self.session.ctx
            version = ctx.shortcuts_version
            if built["version"] == version:
                return built["keys"]
            keys = KeyBindings()
            for problem in ctx.take_shortcut_problems():
                self.renderer.notice(problem, "warning")
            for shortcut in ctx.get_shortcuts():
                taken = self.keymap.action_for(shortcut.key)
                if taken is not None:
                    if shortcut.key not in reported:
                        reported.add(shortcut.key)
                        self.renderer.notice(f"shortcut {display(shortcut.key)} is the built-in {taken!r}; "
                                             "the plugin's is not bound", "warning")
                    continue
                keys.add(*to_prompt_toolkit(shortcut.key))(lambda event, s=shortcut: self._run_shortcut(s))
            built.update(version=version, keys=keys)
            return keys

        self._editor.key_bindings = merge_key_bindings([self._editor.key_bindings, DynamicKeyBindings(current)])

    def _run_shortcut(self, shortcut: Any) -> None:
        async def run() -> None:
            try:
                result = shortcut.handler(self.session.ctx)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # a plugin's failing key must not end the editor
                self.renderer.notice(f"shortcut {shortcut.key} failed: {exc}", "error")

        self._spawn(run(), track=False)

    def switch_theme(self, theme: Any) -> str | None:
        """``ctx.ui.set_theme``: a theme's name or a theme object; an error text, or ``None``."""
        from .theme import Theme, ThemeError

        if isinstance(theme, str):
            try:
                theme = self.themes.get(theme, colour=self.palette.colour)
            except ThemeError as exc:
                return str(exc)
        if not isinstance(theme, Theme):
            return "not a theme"
        self.palette = self.palette.with_theme(theme)
        self.renderer.palette = self.palette
        if hasattr(self.ui.dialogs, "palette"):
            self.ui.dialogs.palette = self.palette
        for key, factory in list(self._widget_factories.items()):  # components built with the old theme
            self.set_widget(key, factory, self.widgets[key][1])
        self._build_footer()
        if self._editor_bridge is not None and self._editor_bridge.component is not None:
            self._editor_bridge.component.theme = theme
        self._ansi_cache.clear()
        self.output.live_changed()
        return None

    def editor_text(self) -> str:
        app = self._editor_app()
        return app.current_buffer.text if self._editor_active and app is not None else self._draft

    def set_editor_text(self, text: str, *, paste: bool = False) -> None:
        app = self._editor_app()
        if self._editor_active and app is not None:
            buffer = app.current_buffer
            if paste:
                buffer.insert_text(text)
            else:
                buffer.text, buffer.cursor_position = text, len(text)
        else:
            self._draft = self._draft + text if paste else text

    # -- the terminal loop ---------------------------------------------------------------------

    async def _terminal_loop(self) -> None:
        from .capabilities import hardware_cursor, menu_rows
        from .input import PiCompleter, build_prompt, history_for

        install_extended_keys()
        completer = PiCompleter(lambda: all_commands(self.session), lambda: Path(self.session.cwd),
                                lambda name, typed: argument_completions(self.session, name, typed),
                                providers=lambda: self.ui.autocomplete_factories,
                                report=lambda problem: self.renderer.notice(problem, "warning"))
        completer.files.warm()
        from .editor import EditorBridge

        bridge = EditorBridge(self._editor_app, lambda: self._width() or 80, lambda: self.ui.input_listeners)
        self._editor = build_prompt(self, message=self._live_region, footer=self._footer, completer=completer,
                                    history=history_for(Path(self.session.host.agent_dir)),
                                    keymap=lambda: self.keymap,
                                    lexer=bridge.lexer(), compact=lambda: bridge.component is not None,
                                    padding=self._editor_padding,
                                    menu_rows=lambda: menu_rows(self._setting("autocompleteMaxVisible", None)),
                                    hardware_cursor=lambda: hardware_cursor(getattr(self.session, "settings", None)),
                                    truecolor=self._capabilities.truecolor)
        bridge.install(self._editor.app.key_processor)
        self._editor_bridge = bridge
        self._build_editor_component()
        self._bind_shortcuts()
        ticker = asyncio.ensure_future(self._tick())
        from .warmup import warm_up

        warm_up()  # what the first answer imports, while the first prompt is typed
        self._start_status()
        enable_extended_keys(self.stdout)
        self._terminal_modes = [_terminal_mode(self.stdin)]
        try:
            with keys_held_for_the_editor(self.stdin):
                await self._edit_loop()
        finally:
            disable_extended_keys(self.stdout)
            ticker.cancel()
            while self._dialogs:  # nobody will answer them now: they get their "cancel" value
                _, future = self._dialogs.popleft()
                if not future.done():
                    future.set_result(None)

    async def _edit_loop(self) -> None:
        while not self._exit:
            if self._dialogs:
                await self._serve_dialog()
                continue
            text = await self._edit()
            if text is None and self._pending_command is not None:  # a key asked for a command
                text, self._pending_command = self._pending_command, None
                self._draft = self._draft_after_command
            if text is None:
                continue
            kind, self._submit_kind = self._submit_kind, "enter"
            task = await self.submit(text, kind)
            if task is not None and self._is_command(text):
                await self._await_command(task)

    async def _edit(self) -> str | None:
        draft, self._draft = self._draft, ""
        self._editor_active = True
        try:
            return await self._editor.prompt_async(default=draft, pre_run=self._pre_run)
        except _Suspend:
            return None
        except EOFError:
            self._exit = True
            return None
        except KeyboardInterrupt:
            return None
        except OSError:  # the terminal went away (EIO after a hangup): quit as SIGHUP would
            self._terminal_gone()
            return None
        finally:
            self._editor_active = False

    def _pre_run(self) -> None:
        if self._dialogs or self._exit:
            self._suspend_editor()

    def _suspend_editor(self) -> None:
        app = self._editor_app()
        if not self._editor_active or app is None or app.future is None or app.future.done():
            return
        self._draft = app.current_buffer.text
        app.exit(exception=_Suspend())

    async def _serve_dialog(self) -> None:
        run, future = self._dialogs.popleft()
        if not self._dialogs:
            self._dialog_wanted.clear()
        if isinstance(self.output, TerminalOutput):
            await self.output.flush()
        try:
            future.set_result(await run())
        except Exception as exc:
            future.set_exception(exc)

    def _is_command(self, text: str) -> bool:
        return parse(text.strip()) is not None

    async def _await_command(self, task: asyncio.Task[Any]) -> None:
        wanted = asyncio.ensure_future(self._dialog_wanted.wait())
        try:
            await asyncio.wait({task, wanted}, timeout=COMMAND_WAIT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            wanted.cancel()
        if isinstance(self.output, TerminalOutput):
            await self.output.flush()

    async def _tick(self) -> None:
        ticks = 0
        while True:
            await asyncio.sleep(0.1)
            ticks += 1
            self._draw_new_entries()
            if ticks % THEME_POLL_TICKS == 0:
                self._reload_changed_theme()
            if ticks % 10 == 0:
                self.status.renew()
            if self.hint and time.monotonic() > self._hint_until:
                self.hint = None
                self.output.live_changed()
            elif self.is_working():
                self.output.live_changed()

    def _live_region(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI

        pending = self.output.pending[-PENDING_SHOWN:] if isinstance(self.output, TerminalOutput) else []
        rows = [*pending, *self.renderer.live_rows(self._width()), *self._widget_rows("aboveEditor")] \
            if isinstance(self.output, TerminalOutput) else []
        marker = " " * self._editor_padding() + self.palette(f"{self.palette.glyphs.user} ", "bold", "blue")
        rows.append(self._editor_frame()[0])  # the editor's top border
        return self._ansi("live", "\n".join([*rows, marker]))

    def _editor_padding(self) -> int:
        """pi's ``editorPaddingX``: blank columns left and right of the editor's text."""
        from .capabilities import editor_padding

        return editor_padding(self._setting("editorPaddingX", None), self._width() or 80)

    def _editor_frame(self) -> tuple[str, str]:
        """The rows over and under the editor's text: a plugin's editor draws its own; pi's editor has a rule
        in the thinking level's colour, or ``bashMode``'s while the text is a ``!command``."""
        editor = self._editor_rows()
        if editor:
            return editor[0], editor[-1]
        if self.editor_text().lstrip().startswith("!"):
            token = "bashMode"
        else:
            level = str(getattr(self.session, "thinking_level", "off") or "off")
            token = "thinking" + level[:1].upper() + level[1:]
        if token not in getattr(self.palette.theme, "colors", {token: None}):
            token = "thinkingOff"
        rule = self.palette(("─" if self.palette.glyphs.user == "›" else "-") * (self._width() or 80), token)
        return rule, rule

    def rendered_rows(self) -> list[str]:
        """What is drawn below the scrollback now: the live region, the editor's text, the footer (``/debug``)."""
        rows: list[str] = []
        for slot in ("live", "footer"):
            cached = self._ansi_cache.get(slot)
            if cached is not None:
                rows += cached[0].split("\n")
            if slot == "live":
                rows += self.editor_text().split("\n")
        return rows

    def _editor_rows(self) -> list[str]:
        bridge = self._editor_bridge
        return bridge.rendered() if bridge is not None and bridge.component is not None else []

    def _ansi(self, slot: str, text: str) -> Any:
        """prompt_toolkit asks for the prompt several times per frame: parse each text once."""
        from prompt_toolkit.formatted_text import ANSI

        cached = self._ansi_cache.get(slot)
        if cached is None or cached[0] != text:
            cached = self._ansi_cache[slot] = (text, ANSI(text))
        return cached[1]

    def _footer(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI

        if self._footer_component is not None:
            from .components import render_component

            rows = render_component(self._footer_component, self._width() or 80)
            return self._ansi("footer", "\n".join([self._editor_frame()[1], *self._widget_rows("belowEditor"),
                                                   *rows]))
        compaction = getattr(getattr(self.session, "settings", None), "compaction", None)
        rows = footer_rows(self.palette, self.session, self.renderer.stats, self.statuses, self.hint,
                           self._width() or 80, branch=self._branch.get() if self._branch else None,
                           auto_compact=bool(getattr(compaction, "enabled", True)))
        return self._ansi("footer", "\n".join([self._editor_frame()[1], *self._widget_rows("belowEditor"),
                                               *rows]))

    # -- the line loop (no terminal) -------------------------------------------------------------

    async def _line_loop(self) -> None:
        reader = threading.Thread(target=self._read_stdin, name="pi-stdin", daemon=True)
        reader.start()
        sequential = not _isatty(self.stdin)
        while not self._exit:
            self._reading = True
            line = await self._lines.get()
            self._reading = False
            if line is None:
                break
            if self._line_waiters:
                self._line_waiters.popleft().set_result(line)
                continue
            task = await self.submit(line, "enter")
            if task is not None and (sequential or self._is_command(line)):
                await task
        if self._task is not None and not self._task.done() and not self._exit:
            await self._task

    def _read_stdin(self) -> None:
        loop = self._loop
        for line in iter(self.stdin.readline, ""):
            loop.call_soon_threadsafe(self._lines.put_nowait, line.rstrip("\n").rstrip("\r"))
        loop.call_soon_threadsafe(self._lines.put_nowait, None)

    async def _read_line(self) -> str | None:
        if self._reading:  # the loop is waiting for a line too: it hands the next one over
            future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
            self._line_waiters.append(future)
            return await future
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # keep the end of input for the loop
        return line


class _TerminalHandoff:
    """``tui.stop()`` / ``tui.start()``: the terminal goes to another program and comes back."""

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app

    def hand_out(self) -> None:
        app = self.app
        if app._handed_out or not app.tty:
            return
        app._handed_out = True
        if isinstance(app.output, TerminalOutput):
            app.output.flush_now()
        with contextlib.suppress(OSError):
            disable_extended_keys(app.stdout)
            app.stdout.write("\x1b[?25h")  # the cursor shows
            app.stdout.flush()
        held = _terminal_mode(app.stdin)
        if app._terminal_modes and app._terminal_modes[0] is not None:
            _set_terminal_mode(app.stdin, app._terminal_modes[0])  # cooked, as before pi started
        app._terminal_modes[1:] = [held]

    def take_back(self) -> None:
        app = self.app
        if not app._handed_out:
            return
        if len(app._terminal_modes) > 1 and app._terminal_modes[1] is not None:
            _set_terminal_mode(app.stdin, app._terminal_modes[1])
        with contextlib.suppress(OSError):
            enable_extended_keys(app.stdout)
        # a Ctrl+C typed in the program reaches pi's handler on the next loop turns: still the program's
        asyncio.get_running_loop().call_later(0.3, lambda: setattr(app, "_handed_out", False))
        app.output.live_changed()


def _stamp(theme: Any) -> tuple[int, int] | None:
    """When and how big the theme's file is (``None`` for a built-in theme or a file that is gone)."""
    source = getattr(theme, "source", None)
    try:
        info = Path(source).stat() if source is not None else None
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size) if info is not None else None


def _terminal_mode(stream: Any) -> Any:
    try:
        import termios

        return termios.tcgetattr(stream.fileno())
    except (ImportError, AttributeError, ValueError, OSError):
        return None


def _set_terminal_mode(stream: Any, mode: Any) -> None:
    try:
        import termios

        termios.tcsetattr(stream.fileno(), termios.TCSANOW, mode)
    except (ImportError, AttributeError, ValueError, OSError):
        return


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:
        return False


async def run_interactive(session: AgentSession, *, initial_prompt: str | None = None, stdin: TextIO | None = None,
                          stdout: TextIO | None = None) -> int:
    """Run the interactive mode on ``session`` until the user quits; returns the exit code.

    The session is closed before this returns (``session_shutdown`` runs, the file is complete).
    Without a terminal on stdout, it runs as a line-based REPL.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    app = InteractiveApp(session, stdin=stdin, stdout=stdout, tty=_isatty(stdout) and _isatty(stdin))
    return await app.run(initial_prompt)


__all__ = ["InteractiveApp", "LineOutput", "create_ui", "run_interactive"]
