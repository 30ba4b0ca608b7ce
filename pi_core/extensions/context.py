"""The ``ctx`` every hook handler receives: the session's public face and the plugin API handle.

One context belongs to one session and stays valid when the session moves to another file (``/new``,
``/resume``, ``/fork``). Its properties read live state. Actions are delegated to the session's
:class:`SessionRuntime`; before a session runs (for example while ``pi plugins`` lists plugins) they
raise :class:`RuntimeError`, as pi's API does during extension loading.

Slash-command handlers get a :class:`CommandContext`: the same, plus what only a command may do
(wait for the agent, move to another session, reload). Tools reach the hook context through
``ToolContext.session``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from ..offloop import LoopBound, on_loop_thread
from .bus import EventBus
from .dispatch import hook_wait
from .mcp_servers import McpServerRegistry
from .renderers import EntryRenderer, MessageRenderer, RendererRegistry, ToolRendererResolver
from .shortcuts import KeyBinding, Shortcut, ShortcutRegistry

if TYPE_CHECKING:
    from ..agent.tools import Tool
    from ..ai.abort import AbortSignal
    from ..ai.registry import ApiProvider, ModelRegistry, ProviderConfig
    from ..ai.types import ImageContent, Message, Model, TextContent
    from ..runtime.agent_session import ForkPoint
    from ..runtime.compaction import CompactionResult
    from ..runtime.settings import Settings
    from ..runtime.system_prompt import SystemPromptOptions
    from ..session.listing import SessionInfo
    from ..session.manager import SessionManager
    from ..session.messages import CustomMessage
    from ..toolkit.process import ProcessResult
    from .mcp_servers import RegisteredMcpServer
    from .results import ContextUsage, ForkResult, NavigateResult, SessionResult, SlashCommandInfo

Level = Literal["info", "warning", "error"]
DeliverAs = Literal["steer", "followUp", "nextTurn"]
QueueAs = Literal["steer", "followUp"]
SetupFn = Callable[["SessionManager"], "Awaitable[None] | None"]
ComponentFactory = Callable[..., Any]

#: ``UI`` methods that wait on the user: a hook's time in them does not count against its time limit.
DIALOGS = ("select", "confirm", "input", "secret", "editor", "custom", "show", "select_model", "select_session",
           "select_tree_entry", "select_fork_point")


def _untimed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def dialog(*args: Any, **kwargs: Any) -> Any:
        with hook_wait():
            return await method(*args, **kwargs)

    dialog.__pi_untimed__ = True  # type: ignore[attr-defined]
    return dialog


@functools.cache
def headless_theme() -> Any:
    """What ``ctx.ui.theme`` is without a terminal: a theme whose styling calls return plain text."""
    from ..modes.interactive.theme import builtin_theme  # the theme type lives with the terminal

    return builtin_theme("dark", colour=False)


class UI:
    """Dialogs and notices. This base class is what headless modes (print, JSON, SDK) use:
    dialogs answer with their "cancel" value and notices go nowhere, as in pi.

    In a subclass the dialogs (:data:`DIALOGS`) stop the calling hook's time limit while they wait."""

    has_ui: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in DIALOGS:
            method = cls.__dict__.get(name)
            if method is not None and inspect.iscoroutinefunction(method) and \
                    not getattr(method, "__pi_untimed__", False):
                setattr(cls, name, _untimed(method))

    async def notify(self, message: str, level: Level = "info") -> None:
        return None

    # Dialogs take pi's options: ``timeout`` (seconds) and an abort ``signal`` (``ctx.signal`` or an
    # ``AbortController``'s); either dismisses the dialog with its "cancel" value.

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        return None

    async def secret(self, title: str, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        """Like :meth:`input` for a secret (an API key): hosts do not repeat the answer in their log."""
        return await self.input(title, timeout=timeout, signal=signal)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return None

    async def set_status(self, key: str, text: str | None) -> None:
        return None

    async def set_title(self, title: str) -> None:
        return None

    async def set_widget(self, key: str, lines: Sequence[str] | ComponentFactory | None, *,
                         placement: str = "aboveEditor") -> None:
        """Lines, or a component factory ``(tui, theme) -> component`` (:mod:`pi_core.tui`), shown
        above or below the editor; ``None`` removes the widget."""
        return None

    # -- components (pi_core.tui): the terminal draws them; headless UIs answer "cancel" ----------

    async def custom(self, factory: ComponentFactory, *, overlay: bool = False,
                     overlay_options: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                     on_handle: Callable[[Any], Any] | None = None) -> Any:
        """Show a component that takes the keyboard until it calls ``done(value)``; returns the value.
        ``factory(tui, theme, keybindings, done)`` builds it; ``overlay=True`` draws it over the
        conversation, placed by ``overlay_options`` (pi's :class:`pi_core.tui.OverlayOptions`, snake_cased:
        ``anchor``, ``width``, ``max_height``, ``margin``, ``offset_x``/``offset_y``, ``row``/``col``,
        ``visible``, ``non_capturing``; or a function returning them), and ``on_handle(handle)`` gets its
        :class:`pi_core.tui.OverlayHandle`. Several overlays may be open at once. Headless: ``None`` at once."""
        return None

    async def set_footer(self, factory: ComponentFactory | None) -> None:
        """Replace the footer with ``factory(tui, theme, footer_data)``'s component (``None``: pi's)."""
        return None

    async def set_header(self, factory: ComponentFactory | None) -> None:
        """Replace the start-up header with ``factory(tui, theme)``'s component (``None``: pi's)."""
        return None

    async def set_editor_component(self, factory: ComponentFactory | None) -> None:
        """Replace the editor with ``factory(tui, theme, keybindings)``'s :class:`pi_core.tui.CustomEditor`
        (``None``: pi's own). Headless: nothing happens."""
        return None

    def get_editor_component(self) -> ComponentFactory | None:
        """The factory :meth:`set_editor_component` set (to wrap it), or ``None``."""
        return None

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        """See every key first, as raw terminal input, while the editor has the keyboard: ``handler(data)``
        returns ``None`` (pass it on), ``{"consume": True}`` or ``{"data": replacement}``. Returns a
        function that removes the handler. Headless: never called."""
        return lambda: None

    async def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        """Stack an autocomplete provider on the editor's completion: ``factory(current)`` returns a
        :class:`pi_core.tui.AutocompleteProvider` that may delegate to ``current``. Headless: nothing."""
        return None

    async def set_working_message(self, message: str | None = None) -> None:
        """The text of the "Working…" row while the agent runs (``None``: the default)."""
        return None

    async def set_working_visible(self, visible: bool) -> None:
        return None

    async def set_working_indicator(self, frames: Sequence[str] | None = None, *,
                                    interval_ms: int | None = None) -> None:
        """The spinner's frames (``[]`` hides it, ``None`` restores pi's) and their pace."""
        return None

    async def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """The row shown for a hidden thinking block (``None``: "Thinking…")."""
        return None

    def get_tools_expanded(self) -> bool:
        return False

    async def set_tools_expanded(self, expanded: bool) -> None:
        return None

    def get_thinking_hidden(self) -> bool:
        """Whether thinking blocks are drawn as one "Thinking…" row (Ctrl+T, ``hideThinkingBlock``)."""
        return False

    async def set_thinking_hidden(self, hidden: bool) -> None:
        """Hide or show thinking blocks from now on, as Ctrl+T does (the setting is ``hideThinkingBlock``)."""
        return None

    @property
    def theme(self) -> Any:
        """The current theme (``theme.fg("accent", text)``, ``bg``, ``bold``, ``style``, ``hex``...).
        Headless it is pi's dark theme without colour: the same calls work and return plain text."""
        return headless_theme()

    def get_all_themes(self) -> list[dict[str, Any]]:
        """The themes the user can pick: ``{"name", "path"}`` (``path`` ``None`` for built-ins); ``[]``
        headless."""
        return []

    def get_theme(self, name: str) -> Any:
        """The theme named ``name`` (to pass to :meth:`set_theme`), or ``None`` (always, headless)."""
        return None

    async def set_theme(self, theme: Any) -> dict[str, Any]:
        """Switch to a theme by name (or a theme object): ``{"success": True}`` or with ``"error"``
        (headless: ``"UI not available"``, as in pi)."""
        return {"success": False, "error": "UI not available"}

    async def set_editor_text(self, text: str) -> None:
        return None

    async def paste_to_editor(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    async def show(self, title: str, lines: Sequence[str]) -> None:
        """Show a block of text (``/help``, ``/session``); headless: one notice."""
        await self.notify("\n".join([title, *lines] if title else lines))

    # -- pickers: the terminal draws its own; other UIs answer "cancelled" ---------------------

    async def select_model(self, models: Sequence[Model], current: Model | None = None, *,
                           refresh: Callable[[], Awaitable[tuple[Sequence[Model], str] | None]] | None = None
                           ) -> Model | None:
        """Let the user pick a model (the terminal's model picker). With ``refresh``, the picker shows
        ``models`` at once and runs ``refresh()`` in the background; the models it returns (and a status
        line: ``"Model catalogs refreshed."``) replace the shown ones while the picker is open."""
        return None

    async def select_session(self, load: Callable[[bool], Sequence[SessionInfo]], *, exclude: Path | None = None,
                             title: str = "Resume session") -> SessionInfo | None:
        """Let the user pick a session (the terminal's session picker). ``load(all_projects)`` lists them;
        ``exclude`` is the current file."""
        return None

    async def select_tree_entry(self, session: SessionManager, *, title: str = "Session tree") -> str | None:
        """Let the user pick an entry of the session tree (the terminal's tree navigator): its id."""
        return None

    async def select_fork_point(self, points: Sequence[ForkPoint], *, title: str) -> ForkPoint | None:
        """Let the user pick a user message of the branch (the terminal's tree navigator)."""
        return None

    async def show_earlier_messages(self, count: int | None = None) -> int | None:
        """Print messages of a resumed session that are not on screen (the last ``count``; ``None``: all);
        how many were printed, or ``None`` when this UI keeps no scrollback."""
        return None

    def key_help(self) -> list[tuple[str, str]]:
        """The keys this UI answers to, ``(keys, what they do)``, for ``/help`` (none without a terminal)."""
        return []

    def get_keybindings(self) -> list[KeyBinding]:
        """The terminal's named key actions as bound now — pi's defaults with the user's
        ``keybindings.json`` applied — in the order help screens list them (none without a terminal).
        Plugins' own keys are ``ctx.get_shortcuts()``."""
        return []

    def rendered_lines(self) -> list[str]:
        """The rows the terminal draws below the scrollback right now (the block being written, widgets,
        the editor, the footer), with their escape codes — what ``/debug`` records (none without one)."""
        return []

    async def copy_to_clipboard(self, text: str) -> str | None:
        """Copy ``text`` to the user's clipboard; how it was done, or ``None`` when it cannot be."""
        return None


class StderrNotices(UI):
    """A headless :class:`UI` whose notices go to stderr: ``ctx.ui`` of ``project_trust`` handlers outside
    the terminal (pi's: no dialogs, ``has_ui`` false, notices on stderr)."""

    async def notify(self, message: str, level: Level = "info") -> None:
        import sys

        prefix = "" if level == "info" else f"{level}: "
        print(f"pi: {prefix}{message}", file=sys.stderr, flush=True)


class SessionRuntime(Protocol):
    """What a running session offers its plugins, one method per action (implemented by
    ``pi_core.runtime.bridge.PluginBridge``). :class:`ExtensionContext` delegates to it."""

    # state
    def get_model(self) -> Model | None: ...
    def get_thinking_level(self) -> str: ...
    def get_scoped_models(self) -> list[Model]: ...
    def get_signal(self) -> AbortSignal | None: ...
    def get_model_registry(self) -> ModelRegistry: ...
    def session_view(self) -> SessionManager: ...
    def is_idle(self) -> bool: ...
    def is_project_trusted(self) -> bool: ...
    def has_pending_messages(self) -> bool: ...
    def get_context_usage(self) -> ContextUsage: ...
    def get_system_prompt(self) -> str: ...
    def get_settings(self) -> Settings: ...
    def get_commands(self, *, include_builtin: bool = False) -> list[SlashCommandInfo]: ...
    # control
    def abort(self) -> None: ...
    def shutdown(self) -> None: ...
    def compact(self, custom_instructions: str | None,
                on_complete: Callable[[CompactionResult], Any] | None,
                on_error: Callable[[Exception], Any] | None) -> None: ...
    # tools
    def set_active_tools(self, names: Sequence[str]) -> None: ...
    def get_active_tools(self) -> list[str]: ...
    def get_declared_tools(self) -> list[str]: ...
    def get_all_tools(self) -> list[Tool]: ...
    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None: ...
    def mcp_servers_changed(self, servers: list[RegisteredMcpServer]) -> None: ...
    # messages and entries
    def send_message(self, message: Message | CustomMessage | str, *, deliver_as: DeliverAs = "steer",
                     trigger_turn: bool | None = None) -> None: ...
    def send_user_message(self, content: str | Sequence[TextContent | ImageContent], *,
                          deliver_as: QueueAs | None = None, expand_prompt_templates: bool = False) -> None: ...
    def append_entry(self, custom_type: str, data: Any = None) -> str: ...
    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str: ...
    def append_context_edit(self, target_id: str, replacement: Any) -> str: ...
    def set_session_name(self, name: str) -> None: ...
    def set_label(self, entry_id: str, label: str | None) -> str: ...
    # model, thinking, providers
    def set_model(self, model: Model | str) -> bool: ...
    def set_thinking_level(self, level: str) -> str: ...
    def set_scoped_models(self, models: Sequence[Model]) -> None: ...
    def set_setting(self, key: str, value: Any, scope: Literal["global", "project"]) -> Settings: ...
    def register_provider(self, item: ApiProvider | ProviderConfig) -> None: ...
    def unregister_provider(self, name: str) -> bool: ...
    # processes
    async def exec(self, command: str, args: Sequence[str], *, timeout: float | None = None,
                   cwd: Path | None = None, signal: AbortSignal | None = None,
                   max_buffer: int | None = None) -> ProcessResult: ...
    # commands only
    async def wait_for_idle(self) -> None: ...
    async def new_session(self, parent_session: str | Path | None, setup: SetupFn | None) -> SessionResult: ...
    async def fork(self, entry_id: str, position: Literal["before", "at"]) -> ForkResult: ...
    async def switch_session(self, path: str | Path) -> SessionResult: ...
    async def navigate_tree(self, target_id: str, *, summarize: bool, custom_instructions: str | None,
                            replace_instructions: bool, label: str | None) -> NavigateResult: ...
    async def reload(self) -> None: ...
    def get_system_prompt_options(self) -> SystemPromptOptions: ...


class ExtensionContext:
    """Passed as ``ctx`` to every hook.

    :ivar cwd: the session's working directory.
    :ivar ui: dialogs and notices (:class:`UI`); harmless defaults without a UI.
    :ivar mode: ``tui``, ``rpc``, ``json``, ``print`` or ``sdk``.
    :ivar events: the bus the session's plugins share (``events.emit(name, data)``, ``events.on(name, fn)``).
    """

    def __init__(self, cwd: Path, *, ui: UI | None = None, mode: str = "sdk",
                 runtime: SessionRuntime | None = None, flags: dict[str, Any] | None = None,
                 events: EventBus | None = None) -> None:
        self.cwd = Path(cwd)
        self.ui = ui or UI()
        self.mode = mode
        self.events = events or EventBus()
        # a `def` hook runs in a worker thread: what it asks of the session is done on the loop's thread
        self._runtime = cast(SessionRuntime, LoopBound(runtime)) if runtime is not None else None
        self._flags = dict(flags or {})
        self._mcp_servers = McpServerRegistry()
        self._shortcuts = ShortcutRegistry()
        self._renderers = RendererRegistry()

    # -- state ---------------------------------------------------------------------------------

    @property
    def ui(self) -> UI:
        """Dialogs and notices; from a ``def`` hook's worker thread, its plain methods run on the loop's thread."""
        ui = self._ui
        return ui if on_loop_thread() else cast(UI, LoopBound(ui))

    @ui.setter
    def ui(self, value: UI) -> None:
        self._ui = value

    @property
    def has_ui(self) -> bool:
        return self.ui.has_ui

    def waiting(self) -> AbstractContextManager[None]:
        """``with ctx.waiting(): ...`` — time spent in the block does not count against the time limit of
        the hook call it is in (``plugins.hookTimeoutMs``). Wrap waits your plugin bounds itself (a server
        start with its own timeout); ``ctx.ui`` dialogs do this already. Outside a hook it does nothing."""
        return hook_wait()

    @property
    def model(self) -> Model | None:
        return self._runtime.get_model() if self._runtime else None

    @property
    def thinking_level(self) -> str:
        """The current thinking level (``off`` … ``xhigh``)."""
        return self._runtime.get_thinking_level() if self._runtime else "off"

    @property
    def scoped_models(self) -> list[Model]:
        """The models ``--models`` limits the session to (empty: every available model)."""
        return self._runtime.get_scoped_models() if self._runtime else []

    @property
    def signal(self) -> AbortSignal | None:
        """The running agent's abort signal, or ``None`` while idle: pass it to nested work."""
        return self._runtime.get_signal() if self._runtime else None

    @property
    def model_registry(self) -> ModelRegistry:
        """The session's own models and providers (those registered by ``-e`` and project plugins
        included): ``find``, ``get_available``, ``has_configured_auth``, ``get_provider_auth``,
        ``complete``, ``stream``."""
        return self._require().get_model_registry()

    @property
    def session(self) -> SessionManager:
        """A read-only view of the session (entries, branch, leaf, file, id)."""
        return self._require().session_view()

    def is_idle(self) -> bool:
        return self._runtime.is_idle() if self._runtime else True

    def is_project_trusted(self) -> bool:
        """Whether the project's own code and settings are trusted in this session."""
        return self._runtime.is_project_trusted() if self._runtime else False

    def has_pending_messages(self) -> bool:
        """Whether steering or follow-up messages wait to be delivered."""
        return self._runtime.has_pending_messages() if self._runtime else False

    def get_context_usage(self) -> ContextUsage:
        """How full the context was at the last answer: ``tokens`` (``None`` when unknown),
        ``context_window``, ``percent``."""
        return self._require().get_context_usage()

    def get_system_prompt(self) -> str:
        """The system prompt (inside ``before_agent_start``: as changed by the handlers so far)."""
        return self._require().get_system_prompt()

    def get_settings(self) -> Settings:
        """The session's effective settings (read-only)."""
        return self._require().get_settings()

    def get_flag(self, name: str) -> Any:
        """The value of a flag registered through ``register_flags`` (``None`` if unknown)."""
        return self._flags.get(name.lstrip("-"))

    def get_commands(self, *, include_builtin: bool = False) -> list[SlashCommandInfo]:
        """The ``/`` commands: plugin commands, then prompt templates, then skills; pi's own commands
        (``/model``, ``/tree``, ...) too with ``include_builtin``."""
        return self._require().get_commands(include_builtin=include_builtin)

    def get_session_name(self) -> str | None:
        return self._require().session_view().get_session_name()

    def get_thinking_level(self) -> str:
        return self.thinking_level

    # -- control -------------------------------------------------------------------------------

    def abort(self) -> None:
        if self._runtime:
            self._runtime.abort()

    def shutdown(self) -> None:
        """Ask pi to exit once the agent is idle (``session_shutdown`` runs first). Interactive and RPC
        modes honour it; print and JSON modes end after their prompt anyway."""
        self._require().shutdown()

    def compact(self, *, custom_instructions: str | None = None,
                on_complete: Callable[[CompactionResult], Any] | None = None,
                on_error: Callable[[Exception], Any] | None = None) -> None:
        """Start a compaction and return at once (a running turn is stopped first, as by ``/compact``).
        ``on_complete(result)`` or ``on_error(error)`` is called when it is over."""
        self._require().compact(custom_instructions, on_complete, on_error)

    # -- tools ---------------------------------------------------------------------------------

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Choose which registered tools the model is told about from the next request on.

        This is not a sandbox: it changes what the model is offered, nothing else.
        """
        self._require().set_active_tools(list(names))

    def get_active_tools(self) -> list[str]:
        return self._require().get_active_tools()

    def get_declared_tools(self) -> list[str]:
        """The tools the current branch's transcript declares to the model: its system messages'
        ``toolsAdded``/``toolsRemoved`` replayed (as pi records tool-set changes). After a resume or a
        move in the tree this is what that branch used last, which may name tools not registered yet."""
        return self._require().get_declared_tools()

    def get_all_tools(self) -> list[Tool]:
        return self._require().get_all_tools()

    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None:
        """Register a tool discovered at run time; it is activated unless its ``exposure`` is
        ``deferred`` or ``hidden`` (those are reached through ``codemode`` and ``tool_search``)."""
        self._require().register_tool(tool, replaces=replaces)

    # -- shortcuts ---------------------------------------------------------------------------------

    def register_shortcut(self, key: str, handler: Callable[[ExtensionContext], Any], *,
                          description: str = "") -> Shortcut:
        """Run ``handler(ctx)`` (sync or async) when ``key`` (pi's syntax: ``"ctrl+shift+p"``, ``"alt+x"``,
        ``"f5"``) is pressed in the terminal's editor (pi's ``registerShortcut``). A key a built-in action
        uses is not taken (the terminal reports it); registering a key again replaces it. Other modes keep
        the registration and press nothing. Raises :class:`ValueError` for a key not in pi's syntax."""
        return self._shortcuts.register(key, handler, description)

    def register_message_renderer(self, custom_type: str, renderer: MessageRenderer) -> None:
        """Draw custom messages of ``custom_type`` in the terminal: ``renderer(message, options, theme)``
        returns a component (:mod:`pi_core.tui`), lines, or ``None`` for the default row
        (``options["expanded"]`` follows Ctrl+O). Other modes ignore it."""
        self._renderers.register_message(custom_type, renderer)

    def register_tool_renderer(self, resolver: ToolRendererResolver) -> None:
        """Choose how calls to any tool are drawn in the terminal, built-in tools and tools not registered
        (yet) included, without replacing the tool (pi's ``registerToolRenderer``): ``resolver(tool_name,
        next)`` returns a :class:`pi_core.ToolRenderers` (or a tool) or ``None``; ``next()`` is what the
        resolvers registered after it, then the tool's own renderers, would use — ``next() or mine`` only
        fills in. Other modes ignore it."""
        self._renderers.register_tool(resolver)

    def register_entry_renderer(self, custom_type: str, renderer: EntryRenderer) -> None:
        """Draw this plugin's ``custom`` session entries (``append_entry(custom_type, data)``) in the
        terminal's conversation, when appended and when the session is shown again:
        ``renderer(entry, options, theme)`` returns a component, lines, or ``None`` (nothing drawn).
        ``options["expanded"]`` follows Ctrl+O. The model never sees them; other modes ignore it."""
        self._renderers.register_entry(custom_type, renderer)

    def get_shortcuts(self) -> list[Shortcut]:
        """The shortcuts plugins registered, in order (``/hotkeys`` lists them)."""
        return self._shortcuts.all()

    # -- what a front end draws with (the terminal; any other UI built on the SDK) ------------------

    @property
    def shortcuts_version(self) -> int:
        """Grows with every shortcut registered: a front end binds :meth:`get_shortcuts` again when it changed."""
        return self._shortcuts.version

    def take_shortcut_problems(self) -> list[str]:
        """The shortcut registrations that could not be taken since the last call (to report them once)."""
        problems = list(self._shortcuts.problems)
        self._shortcuts.problems.clear()
        return problems

    def get_message_renderer(self, custom_type: str) -> MessageRenderer | None:
        """The renderer registered for custom messages of ``custom_type`` (pi's ``getMessageRenderer``)."""
        return self._renderers.messages.get(custom_type)

    def get_entry_renderer(self, custom_type: str) -> EntryRenderer | None:
        """The renderer registered for ``custom`` session entries of ``custom_type``."""
        return self._renderers.entries.get(custom_type)

    def get_entry_renderer_types(self) -> frozenset[str]:
        """The ``customType`` of every entry kind a plugin draws (empty: no entry is drawn)."""
        return frozenset(self._renderers.entries)

    def resolve_tool_renderers(self, tool_name: str, base: Callable[[], Any]) -> Any:
        """How calls to ``tool_name`` are drawn: the resolvers of :meth:`register_tool_renderer` in order,
        each able to defer to the next, then ``base()`` (the tool's own renderers)."""
        return self._renderers.resolve_tool(tool_name, base)

    # -- MCP servers -------------------------------------------------------------------------------

    def register_mcp_server(self, name: str, config: dict[str, Any]) -> None:
        """Connect an MCP server for this session, next to those of ``mcp.json`` (pi's
        ``registerMcpServer``). ``config`` has the shape of an ``mcpServers`` entry; registering a
        name again replaces the registration. Not saved: register again in every session. A server
        of the same name in ``mcp.json`` wins. Raises :class:`ValueError` for a config without
        ``command`` or ``url`` or a bad name; the MCP plugin reports other problems as for ``mcp.json``."""
        self._mcp_servers.register(name, config)
        self._mcp_servers_changed()

    def unregister_mcp_server(self, name: str) -> bool:
        """Remove a registered server (its connection closes); ``False`` if none was registered."""
        removed = self._mcp_servers.unregister(name)
        if removed:
            self._mcp_servers_changed()
        return removed

    def get_mcp_servers(self) -> list[RegisteredMcpServer]:
        """The servers plugins registered, in order (copies): for plugins that connect MCP servers."""
        return self._mcp_servers.list()

    def _mcp_servers_changed(self) -> None:
        if self._runtime is not None:
            self._runtime.mcp_servers_changed(self._mcp_servers.list())

    # -- messages and entries --------------------------------------------------------------------

    def send_message(self, message: Message | CustomMessage | str, *, deliver_as: DeliverAs = "steer",
                     trigger_turn: bool | None = None) -> None:
        """Add a message (a plugin's :class:`pi_core.CustomMessage`, or text), as pi's ``sendMessage``:
        held for the next prompt (``nextTurn``); while the agent runs, queued as steering or a follow-up,
        or with ``trigger_turn=False`` added once the running turn ends; while idle, a run of its own
        (``trigger_turn=True``) or just added. Added messages are announced with ``message_start`` and
        ``message_end``."""
        self._require().send_message(message, deliver_as=deliver_as, trigger_turn=trigger_turn)

    def send_user_message(self, content: str | Sequence[TextContent | ImageContent], *,
                          deliver_as: QueueAs | None = None, expand_prompt_templates: bool = False) -> None:
        """Send a message as if the user typed it: it always starts (or, with ``deliver_as`` while the
        agent runs, joins) a run, through the ``input`` and ``before_agent_start`` hooks with source
        ``extension``. With ``expand_prompt_templates``, ``/commands`` and templates are handled too."""
        self._require().send_user_message(content, deliver_as=deliver_as,
                                          expand_prompt_templates=expand_prompt_templates)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Persist plugin state in the session (a ``custom`` entry, never sent to the model); subscribers
        get ``entry_appended``."""
        return self._require().append_entry(custom_type, data)

    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str:
        """Add a ``custom_message`` entry: the model sees it as user input."""
        return self._require().append_custom_message(custom_type, content, display=display, details=details)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        """Replace (or with ``None`` omit) an entry's contribution to the model's context."""
        return self._require().append_context_edit(target_id, replacement)

    def set_session_name(self, name: str) -> None:
        self._require().set_session_name(name)

    def set_label(self, entry_id: str, label: str | None) -> str:
        """Bookmark an entry (shown in the session tree); ``None`` removes the label."""
        return self._require().set_label(entry_id, label)

    # -- model, thinking, providers ----------------------------------------------------------------

    def set_model(self, model: Model | str) -> bool:
        """Use ``model`` (or ``provider/id``) from now on; False when it is unknown or has no
        credentials. The change is made before this returns; ``model_select`` hooks follow."""
        return self._require().set_model(model)

    def set_thinking_level(self, level: str) -> str:
        """Change the thinking level (clamped to what the model supports); returns the level set."""
        return self._require().set_thinking_level(level)

    def set_scoped_models(self, models: Sequence[Model]) -> None:
        """The models model cycling (Ctrl+P) goes through in this session, in order (``[]``: the
        ``enabledModels`` setting, else every available model) — what ``/scoped-models`` changes."""
        self._require().set_scoped_models(models)

    def set_setting(self, key: str, value: Any, *, scope: Literal["global", "project"] = "global") -> Settings:
        """Write one key (pi's camelCase, dotted for nested ones: ``"compaction.enabled"``; ``None`` removes
        it) to the global ``settings.json`` or the project's ``.pi/settings.json``, and use the settings
        from now on in this session (auto-compaction, queue modes, images, ...). Returns the new effective
        settings; raises :class:`pi_core.SettingsError` for a malformed file, a wrong value or an untrusted
        project."""
        return self._require().set_setting(key, value, scope)

    def register_provider(self, item: ApiProvider | ProviderConfig) -> None:
        """Add a provider (or an API implementation) to this session's model registry now."""
        self._require().register_provider(item)

    def unregister_provider(self, name: str) -> bool:
        """Remove a provider added with :meth:`register_provider`; what it replaced comes back."""
        return self._require().unregister_provider(name)

    # -- processes -------------------------------------------------------------------------------

    async def exec(self, command: str, args: Sequence[str] = (), *, timeout: float | None = None,
                   cwd: Path | None = None, signal: AbortSignal | None = None,
                   max_buffer: int | None = None) -> ProcessResult:
        """Run a program without a shell (timeout, abort ``signal``, process-group kill; each stream
        keeps at most ``max_buffer`` bytes); returns a :class:`pi_core.ProcessResult` (``stdout``,
        ``stderr``, ``exit_code``, ``killed``)."""
        return await self._require().exec(command, list(args), timeout=timeout, cwd=cwd, signal=signal,
                                          max_buffer=max_buffer)

    # -- plumbing ------------------------------------------------------------------------------

    def _require(self) -> SessionRuntime:
        if self._runtime is None:
            raise RuntimeError("no session is running; this action is available from session_start on")
        return self._runtime


class CommandContext(ExtensionContext):
    """Passed to slash-command handlers: :class:`ExtensionContext` plus what only a command may do.

    These wait for the agent or move the session, so calling them from a hook that runs inside a run
    would wait forever; commands run outside of runs. It shares the hook context's ``ui``.
    """

    def __init__(self, base: ExtensionContext) -> None:
        self._base = base
        self.cwd = base.cwd
        self.mode = base.mode
        self.events = base.events
        self._runtime = base._runtime
        self._flags = base._flags
        self._mcp_servers = base._mcp_servers
        self._shortcuts = base._shortcuts
        self._renderers = base._renderers

    @property  # type: ignore[override]
    def ui(self) -> UI:
        return self._base.ui

    @ui.setter
    def ui(self, value: UI) -> None:
        self._base.ui = value

    async def wait_for_idle(self) -> None:
        """Wait until the agent has settled (retries, compaction and queued messages included)."""
        await self._require().wait_for_idle()

    async def new_session(self, *, parent_session: str | Path | None = None,
                          setup: SetupFn | None = None) -> SessionResult:
        """Continue in a fresh session file; ``setup(manager)`` may add entries first. ``cancelled``
        when a plugin said no. This ``ctx`` keeps working in the new session."""
        return await self._require().new_session(parent_session, setup)

    async def fork(self, entry_id: str, *, position: Literal["before", "at"] = "before") -> ForkResult:
        """A new session file with the conversation before the user message ``entry_id`` (``at``: up to
        and including the entry)."""
        return await self._require().fork(entry_id, position)

    async def switch_session(self, path: str | Path) -> SessionResult:
        """Continue another session file."""
        return await self._require().switch_session(path)

    async def navigate_tree(self, target_id: str, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> NavigateResult:
        """Continue from another entry of the session tree, optionally summarising the branch left."""
        return await self._require().navigate_tree(target_id, summarize=summarize,
                                                   custom_instructions=custom_instructions,
                                                   replace_instructions=replace_instructions, label=label)

    async def reload(self) -> None:
        """Reload plugins from extension files, skills, prompt templates and context files
        (``session_shutdown`` and ``session_start`` with reason ``reload``). Code after it still runs
        from the old module: return right after."""
        await self._require().reload()

    def get_system_prompt_options(self) -> SystemPromptOptions:
        """What the system prompt is built from now (tools, context files, skills, ...)."""
        return self._require().get_system_prompt_options()


__all__ = ["UI", "CommandContext", "ExtensionContext", "SessionRuntime"]
