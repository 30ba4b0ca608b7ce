"""``AgentSession``: one conversation, bound to its session file, its plugins and its settings.

It owns the agent (loop state and queues), persists every message as pi 1.6 does, forwards every
event to the plugins' hooks and then to subscribers, and adds what pi does around a run: slash
commands, input hooks, the system message, automatic retries (:class:`~.retry.AutoRetry`) and
compaction (:class:`~.compaction.Compactor`). It moves between session files (new, resume, fork,
clone), asking the plugins first, and runs the user's own shell commands.

Plugins reach it through their ``ctx`` (:class:`pi_core.ExtensionContext`), whose actions go to a
:class:`~.bridge.PluginBridge`: a typed :class:`pi_core.extensions.context.SessionRuntime`.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agent.agent import Agent
from ..agent.loop import LoopConfig
from ..agent.tools import Tool, ToolContext, ToolResult
from ..ai.abort import AbortController, AbortSignal
from ..ai.message_list import message_items
from ..ai.retry import RetryPolicy
from ..ai.types import AssistantMessage, Context, ImageContent, Model, SystemMessage, TextContent, UserMessage
from ..events import (
    AfterToolCallEvent,
    AgentEndEvent,
    TurnEndEvent,
    BeforeAgentStartEvent,
    InputEvent,
    MessageEndEvent,
    MessageStartEvent,
    ModelSelectEvent,
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionShutdownEvent,
    SessionStartEvent,
)
from ..extensions.context import UI, CommandContext, ExtensionContext
from ..extensions.results import ContextUsage
from ..session.raw import raw_message, raw_text
from .bridge import PluginBridge
from .compaction import CompactionResult, Compactor
from .loader import ResourceLoader
from .images import block_images, normalize_images
from .events import (
    AgentSettledEvent,
    EntryAppendedEvent,
    QueueUpdateEvent,
    SessionInfoChangedEvent,
    ThinkingLevelChangedEvent,
)
from .retry import AutoRetry
from .routing import VirtualRouting
from .settings import Settings, SettingsError
from .tool_changes import DeclaredTools
from .wiring import HookWiring, stamp_thinking_level

if TYPE_CHECKING:
    from ..ai.registry import ModelRegistry
    from ..extensions.results import SlashCommandInfo
    from .system_prompt import SystemPromptOptions
    from ..extensions.manager import PluginHost
    from ..session.manager import SessionManager
    from ..toolkit.process import ShellConfig, ShellResult
    from .nested_calls import NestedCalls

Listener = Callable[[Any], "Awaitable[None] | None"]
Disposition = Literal["started", "queued", "handled"]
StartReason = Literal["startup", "reload", "new", "resume", "fork"]
MoveReason = Literal["new", "resume", "fork"]
PERSISTED_ROLES = ("user", "assistant", "toolResult", "system", "bashExecution")


class SessionBusyError(RuntimeError):
    pass


class UnknownCommandError(ValueError):
    """``/word`` names no command, prompt template or skill; it is not sent to the model."""

    def __init__(self, name: str, close: Sequence[str]) -> None:
        hint = f"; did you mean {', '.join('/' + c for c in close)}?" if close else " (/help lists the commands)"
        super().__init__(f"Unknown command /{name}{hint}")
        self.name = name
        self.close = list(close)


COMMAND_WORD = re.compile(r"[A-Za-z0-9][\w:-]*")  # "/README.md" or "/usr/bin" is text, not a command
BACKGROUND_HOOKS_AT_CLOSE_S = 5.0
"""How long closing waits for hooks still running in the background (each has its own time limit too)."""
BREATHE_S = 0.005
"""While a stream's updates arrive back to back (a fast provider, a buffered response), the event loop gets a
turn at least this often: awaiting data that is already there never suspends, so keys typed meanwhile would
wait for the whole answer."""


@dataclass(frozen=True)
class ForkPoint:
    """A user message of the active branch that :meth:`AgentSession.fork` accepts."""

    entry_id: str
    text: str


class AgentSession:
    """A running conversation. Build one with :func:`pi_core.create_agent_session`.

    :param host: the session's plugins.
    :param session: the session file (a :class:`pi_core.SessionManager`).
    :param model: the model to start with.
    :param stream: the provider call, ``stream(model, context, **options)``.
    :param tools: the names of the active tools.
    :param system_prompt: builds the system prompt for the active tools (default: from ``resources``).
    :param resources: loads skills, templates, context files and the prompt (again on ``reload``).
    :param settings: the effective settings (default: pi's defaults).
    :param models: the session's model registry (default: one of the host's providers).
    :param scoped_models: the models cycling goes through (``--models``; default: all available).
    :param admits_tool: whether a tool registered at run time (an MCP server's) may be activated:
        ``--tools``/``--exclude-tools`` apply to those too (default: any tool may).
    :param explicit: what the host chose itself (``"model"``, ``"thinking"``, ``"tools"``: command-line
        flags); :meth:`switch_session` keeps those and restores the rest from the session it opens.
    :param resume_tools: ``(session, restored_context) -> names``: the tools a session switched to starts
        with (default: the active tools stay).
    """

    skills: list[Any]
    templates: list[Any]

    def __init__(self, *, host: PluginHost, session: SessionManager, model: Model, stream: Callable[..., Any],
                 tools: list[str], system_prompt: Callable[[list[Tool]], Any] | None = None,
                 resources: ResourceLoader | None = None, thinking_level: str = "off",
                 mode: str = "sdk", ui: UI | None = None, settings: Settings | None = None,
                 models: ModelRegistry | None = None, scoped_models: Sequence[Model] = (),
                 flags: dict[str, Any] | None = None, admits_tool: Callable[[str], bool] | None = None,
                 explicit: frozenset[str] = frozenset(),
                 resume_tools: Callable[[AgentSession, Any], list[str]] | None = None) -> None:
        self.host = host
        self.explicit = explicit
        self._resume_tools = resume_tools
        self.admits_tool: Callable[[str], bool] = admits_tool or (lambda name: True)
        self.session = session
        self.cwd = Path(session.cwd)
        self.mode = mode
        self.settings = settings or Settings()
        self.models = models or _host_registry(host)
        self.scoped_models: list[Model] = list(scoped_models)
        """The models ``--models`` limits cycling to (empty: every available model)."""
        self._model = model
        self._thinking_level = thinking_level
        self._stream = stream
        self._loader = resources
        self.resources = resources.load() if resources is not None else None
        if system_prompt is None:
            if self.resources is None:
                raise TypeError("AgentSession needs system_prompt or resources")
            system_prompt = self.resources.system_prompt
        self._system_prompt_factory = system_prompt
        self.theme_paths: list[Path] = []
        """Theme locations plugins contributed (``resources_discover``), for the terminal."""
        self._active_tools = [n for n in tools if n in host.tools]
        self._listeners: list[Listener] = []
        self._idle = asyncio.Event()
        self._idle.set()
        # set once a run's agent_settled handlers are done too: what wait_for_idle waits for, as in pi
        self._settled = asyncio.Event()
        self._settled.set()
        self._entry_ids: dict[int, str] = {}
        self._queue_state: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._pending_bash: list[Any] = []
        self._held_messages: list[Any] = []
        """Plugin messages sent mid-run without a turn of their own: added when the turn ends (pi's rule)."""
        self._bash: AbortController | None = None
        self._closed = False
        self._next_turn: list[Any] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        self._last_notice: asyncio.Future[Any] | None = None
        self._breathed = 0.0
        self._inputs: set[asyncio.Future[Any]] = set()
        self._nested: NestedCalls | None = None
        self._declared = DeclaredTools()
        retry = self.settings.retry
        self.auto_retry = AutoRetry(self, RetryPolicy(retry.max_retries, retry.base_delay_ms,
                                                      retry.max_agent_delay_ms, retry.enabled))
        self._retry_after: tuple[Any, int] | None = None
        """The last failed answer and the Retry-After (ms) its server sent."""
        self.compactor = Compactor(self)
        self.routing = VirtualRouting(self)
        """What a virtual model's router is told about each request (reason, state, a failed answer)."""
        self.skills = list(self.resources.skills) if self.resources else []
        self.templates = list(self.resources.templates) if self.resources else []
        self._starting: BeforeAgentStartEvent | None = None
        self._shutdown_listeners: list[Callable[[], Any]] = []
        self._moved_listeners: list[Callable[[], Any]] = []
        self._reload_listeners: list[Callable[[], Any]] = []
        self.shutdown_requested = False
        self.ctx = ExtensionContext(self.cwd, ui=ui, mode=mode, runtime=PluginBridge(self), flags=flags,
                                    events=host.events)
        self.command_ctx = CommandContext(self.ctx)
        self.wiring = HookWiring(host, self.ctx, lambda: self._model)
        self.system_message, self._system_text = _system(system_prompt, self.tools())
        restored = session.build_session_context()
        self.agent = Agent(self._loop_config(), messages=restored.message_list())
        self.agent.steering_mode = self.settings.steering_mode
        self.agent.follow_up_mode = self.settings.follow_up_mode
        self.agent.subscribe(self._on_agent_event)

    # -- state ---------------------------------------------------------------------------------

    @property
    def model(self) -> Model:
        return self._model

    @property
    def thinking_level(self) -> str:
        return self._thinking_level

    @property
    def messages(self) -> list[Any]:
        return self.agent.messages

    @property
    def is_streaming(self) -> bool:
        return not self._idle.is_set()

    @property
    def is_compacting(self) -> bool:
        return self.compactor.is_compacting

    @property
    def auto_compaction_enabled(self) -> bool:
        return self.compactor.enabled

    @property
    def retry(self) -> RetryPolicy:
        """The automatic retry policy (``enabled`` is RPC's ``set_auto_retry``)."""
        return self.auto_retry.policy

    @property
    def last_run_aborted(self) -> bool:
        return self.agent.last_run_aborted

    @property
    def signal(self) -> AbortSignal | None:
        """The running turn's abort signal; ``None`` while idle."""
        return self.agent.signal

    @property
    def system_prompt(self) -> str:
        """The system prompt text (inside ``before_agent_start``: as the handlers changed it so far)."""
        if self._starting is not None:
            return self._starting.system_prompt
        return self.agent.config.system_prompt

    def has_pending_messages(self) -> bool:
        return bool(self.agent.steering or self.agent.follow_ups)

    def system_prompt_options(self) -> SystemPromptOptions:
        """What the system prompt is built from now."""
        from .system_prompt import SystemPromptOptions

        if self.resources is not None:
            return self.resources.prompt_options(self.tools())
        return SystemPromptOptions(cwd=self.cwd, tools=self.tools(), skills=self.skills)

    def get_commands(self, *, include_builtin: bool = False) -> list[SlashCommandInfo]:
        """The ``/`` commands: plugin commands, then prompt templates, then skills (``skill:<name>``).
        pi's own commands (``/model``, ``/tree``, ...) are left out unless ``include_builtin``."""
        from .commands import command_infos

        return command_infos(self, include_builtin=include_builtin)

    def tools(self) -> list[Tool]:
        return [t for t in (self.host.tools.get(n) for n in self._active_tools) if t is not None]

    def active_tool_names(self) -> list[str]:
        return list(self._active_tools)

    def declared_tool_names(self) -> list[str]:
        """The tools the branch's transcript declares to the model (its system messages replayed)."""
        return self._declared.names(self.agent.messages)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event (agent and session events) in order; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on_shutdown_requested(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Hear of ``ctx.shutdown()`` (modes end the process when the agent is idle); returns a remover."""
        self._shutdown_listeners.append(listener)
        return lambda: self._shutdown_listeners.remove(listener) if listener in self._shutdown_listeners else None

    def on_session_changed(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Hear that the session now continues in another file (``/new``, ``/resume``, ``/fork``,
        ``/clone``, reload): hosts redraw. Returns a remover."""
        self._moved_listeners.append(listener)
        return lambda: self._moved_listeners.remove(listener) if listener in self._moved_listeners else None

    def on_reloaded(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Hear that :meth:`reload` has finished: hosts re-read what they own (the terminal: keybindings and
        themes). Returns a remover."""
        self._reload_listeners.append(listener)
        return lambda: self._reload_listeners.remove(listener) if listener in self._reload_listeners else None

    def _session_changed(self) -> None:
        for listener in list(self._moved_listeners):
            listener()

    def request_shutdown(self) -> None:
        self.shutdown_requested = True
        for listener in list(self._shutdown_listeners):
            listener()

    def get_context_usage(self) -> ContextUsage:
        """Tokens the context used in the last answer (``None`` right after a compaction, as in pi)."""
        window = self.model.context_window
        # summaries are held typed: looking for them among the items types none of a resumed session's messages
        compacted_at = max((getattr(m, "timestamp", 0) or 0 for m in message_items(self.agent.messages)
                            if getattr(m, "role", None) == "compactionSummary"), default=None)
        used: int | None = None
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
                if compacted_at is None or message.timestamp > compacted_at:  # older usage predates the summary
                    u = message.usage
                    used = u.total_tokens or (u.input + u.output + u.cache_read + u.cache_write)
                break
        return ContextUsage(used, window, used / window * 100 if used is not None and window else None)

    def last_assistant_text(self) -> str | None:
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error",):
                text = message.text()
                if text:
                    return text
        return None

    def set_session_name(self, name: str) -> None:
        if not name.strip():
            raise ValueError("session name must not be empty")
        self.session.append_session_info(name)  # normalised as pi does (line breaks, outer spaces)
        event = SessionInfoChangedEvent(self.session.get_session_name())
        self._emit_soon(event)
        if self.host.dispatch.has("session_info_changed"):
            self.notify("session_info_changed", event)

    # -- prompting -----------------------------------------------------------------------------

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: Literal["steer", "followUp"] | None = None, source: str = "sdk",
                     on_disposition: Callable[[Disposition], object] | None = None,
                     expand: bool = True) -> Disposition:
        """Handle user input: a slash command, a queued message while running, or a new run.

        Returns once the run (with retries) is over. ``on_disposition`` is called before any event of
        the run is emitted (RPC answers the request there). Without ``expand`` (plugins' plain
        ``send_user_message``) slash commands, skills and templates are not looked at.
        """
        images = list(images or [])
        if expand and await self._run_command(text):  # also while the agent runs: a command is never queued
            return _announce(on_disposition, "handled")
        streaming = self.is_streaming
        if streaming and streaming_behavior is None:
            raise SessionBusyError("Agent is already processing. Specify streamingBehavior ('steer' or "
                                   "'followUp') to queue the message.")
        event = await self.call_hook("input", InputEvent(text, images, source=source,  # type: ignore[arg-type]
                                                         streaming_behavior=streaming_behavior if streaming else None))
        if event.handled:
            return _announce(on_disposition, "handled")
        if streaming and self.is_streaming:
            queued = self._expand(event.text) if expand else event.text
            (self.steer if streaming_behavior == "steer" else self.follow_up)(queued, event.images)
            return _announce(on_disposition, "queued")
        prompts = await self._prompt_messages(self._expand(event.text) if expand else event.text, event.images)
        _announce(on_disposition, "started")
        await self._run(lambda: self.agent.prompt(prompts))
        return "started"

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.steer(self._user(text, images))
        self._queue_changed()

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.follow_up(self._user(text, images))
        self._queue_changed()

    def clear_queue(self) -> tuple[list[str], list[str]]:
        steering, follow_ups = self.agent.clear_queues()
        self._queue_changed()
        return [_text_of(m) for m in steering], [_text_of(m) for m in follow_ups]

    async def abort(self) -> None:
        """Stop the run (model stream, running tools, a pending retry) and wait until the session is idle."""
        self.auto_retry.cancel(abort=True)
        self.compactor.abort()
        self.agent.abort()
        await self.wait_for_idle()

    def abort_retry(self) -> bool:
        """Cancel a pending automatic retry (its delay); returns whether one was pending."""
        return self.auto_retry.cancel()

    async def wait_for_idle(self) -> None:
        """Return once no run is going on and the last run's ``agent_settled`` handlers are done (at once
        when idle already, so a handler of ``agent_settled`` itself may call it, as in pi)."""
        if self._idle.is_set():
            return
        await self._settled.wait()

    # -- model, thinking, tools ----------------------------------------------------------------

    async def set_model(self, model: Model, *, source: Literal["set", "cycle", "restore"] = "set") -> None:
        """Use ``model`` from the next request on (a ``model_change`` entry; ``model_select`` hooks)."""
        previous = self.apply_model(model)
        await self.call_hook("model_select", ModelSelectEvent(model, previous, source))

    def level_for_model(self, model: Model) -> str:
        """The thinking level to use after switching to ``model`` (pi's rule): its ``modelThinkingLevels``
        entry, else ``defaultThinkingLevel``, else the current level; clamped to what it supports."""
        from ..ai.request import clamp_thinking_level

        level = self.settings.model_thinking_levels.get(f"{model.provider}/{model.id}") \
            or self.settings.default_thinking_level or self._thinking_level
        return clamp_thinking_level(model, level)

    def apply_model(self, model: Model) -> Model:
        """Switch to ``model`` now, without the hooks (they follow from :meth:`set_model`); returns
        the previous model."""
        previous, self._model = self._model, model
        self.session.append_model_change(model.provider, model.id)
        self.agent.config.model = model
        return previous

    def set_thinking_level(self, level: str) -> None:
        """Use ``level`` from the next request on (a ``thinking_level_change`` entry;
        ``thinking_level_select`` hooks run right after)."""
        previous, self._thinking_level = self._thinking_level, level
        self.session.append_thinking_level_change(level)
        self.agent.config.stream_options["reasoning"] = None if level == "off" else level
        self._emit_soon(ThinkingLevelChangedEvent(level))
        if self.host.dispatch.has("thinking_level_select"):
            from ..events import ThinkingLevelSelectEvent

            self.notify("thinking_level_select", ThinkingLevelSelectEvent(level, previous))

    def set_active_tools(self, names: list[str]) -> None:
        """Change what the model is told about from the next request on. Not a sandbox."""
        self._active_tools = [n for n in dict.fromkeys(names) if n in self.host.tools]
        # in place: a running loop holds this list, and the next request of the run must see the change
        self.agent.config.tools[:] = self.tools()
        self._refresh_system_message()

    def notify(self, hook: str, event: Any) -> None:
        """Dispatch a notification hook in the background, after the notifications before it: plugins
        hear changes in the order they happened even though each `def` handler runs in a worker thread."""
        previous = self._last_notice

        async def in_order() -> None:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})
            await self.call_hook(hook, event)

        self._last_notice = asyncio.ensure_future(in_order())
        self._tasks.add(self._last_notice)
        self._last_notice.add_done_callback(self._tasks.discard)

    def background(self, work: Awaitable[Any]) -> None:
        """Run ``work`` after the current handler returns (plugins call the API from inside hooks)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def queue_input(self, work: Awaitable[Any]) -> None:
        """Like :meth:`background`, for input sent while the agent runs (``send_user_message`` from a
        hook): the run waits for it before deciding whether it is over, so a follow-up queued from an
        ``agent_end`` handler starts the next run instead of a run after the session settled."""
        task = asyncio.ensure_future(work)
        for pending in (self._tasks, self._inputs):
            pending.add(task)
            task.add_done_callback(pending.discard)

    async def _queued_inputs(self) -> None:
        while self._inputs:
            await asyncio.gather(*list(self._inputs), return_exceptions=True)

    # -- compaction and the tree (pi_core.runtime.compaction) ----------------------------------

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult | None:
        """Compact now (``/compact``); stops a running turn first. ``None`` when a plugin cancelled."""
        if self.is_streaming:
            await self.abort()
        return await self.compactor.compact("manual", custom_instructions)

    def set_auto_compaction(self, enabled: bool) -> None:
        self.compactor.enabled = enabled

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` from now on (after a plugin wrote a key): what is read per use follows at once,
        the queue modes are handed to the loop here."""
        self.settings = settings
        self.agent.steering_mode = settings.steering_mode
        self.agent.follow_up_mode = settings.follow_up_mode

    async def navigate_tree(self, entry_id: str, *, summarize: bool = False, custom_instructions: str | None = None,
                            replace_instructions: bool = False, label: str | None = None) -> dict[str, Any]:
        """Continue from another point of the session tree, optionally summarising the branch left."""
        return await self.compactor.navigate_tree(entry_id, summarize=summarize,
                                                  custom_instructions=custom_instructions,
                                                  replace_instructions=replace_instructions, label=label)

    # -- moving between session files ------------------------------------------------------------

    async def new_session(self, parent_session: str | Path | None = None, *,
                          setup: Callable[[SessionManager], Any] | None = None) -> bool:
        """Start a fresh session file in the same project; False if a plugin cancelled.

        ``setup(manager)`` (sync or async) may add entries to the new file before it is used.
        """
        from ..session import SessionManager

        self.require_idle("start a new session")
        if await self._vetoed_switch("new", None):
            return False
        manager = SessionManager.create(self.cwd, session_dir=self.session.session_dir, parent_session=parent_session)
        manager.append_model_change(self.model.provider, self.model.id)
        manager.append_thinking_level_change(self.thinking_level)
        if setup is not None:
            result = setup(manager)
            if inspect.isawaitable(result):
                await result
        await self._rebind(manager, "new")
        return True

    async def switch_session(self, path: str | Path, *, cwd_override: str | Path | None = None) -> bool:
        """Continue another session file in the directory it was made in (``cwd_override``: in that one
        instead), with its model, thinking level and tools unless the host chose them (``explicit``).
        False if a plugin cancelled; :class:`~.session_cwd.MissingSessionCwdError` if its directory is gone."""
        from ..session import SessionManager
        from .session_cwd import MissingSessionCwdError, missing_session_cwd

        self.require_idle("switch sessions")
        target = Path(path).expanduser()
        if await self._vetoed_switch("resume", target):
            return False
        manager = SessionManager.open(target, cwd_override=cwd_override)
        issue = missing_session_cwd(manager, self.cwd)
        if issue is not None:
            manager.close()
            raise MissingSessionCwdError(issue)
        before = (self.session, self.cwd, self._model, self._thinking_level, list(self._active_tools))
        try:
            await self._rebind(manager, "resume", restore=True)
        except Exception:  # the file could not be read after all (changed on disk meanwhile, ...)
            await self._undo_switch(manager, before)
            raise
        return True

    async def _undo_switch(self, manager: SessionManager, before: tuple[Any, ...]) -> None:
        """Back to the session a failed switch left, as it was: bound, locked, with its model, thinking
        level and tools, so the next prompt goes where it would have gone without the switch. Plugins,
        told ``session_shutdown`` already, hear ``session_start`` (``resume``) for it again."""
        session, cwd, model, level, tools = before
        manager.close()
        if self.session is manager:
            session.reopen()
            self.session = session
            self._move_to(cwd)
            self.reload_transcript()
            await self.call_hook("session_start", SessionStartEvent("resume", manager.session_file))
        self._model = self.agent.config.model = model
        self._thinking_level = level
        self.agent.config.stream_options["reasoning"] = None if level == "off" else level
        self.set_active_tools(tools)
        self._session_changed()

    async def switch_session_asking(self, path: str | Path) -> tuple[bool, str | None]:
        """:meth:`switch_session`, and in the terminal pi's question when the session's directory is gone:
        continue in this directory, fork the session into it, or cancel. Returns ``(switched, what was
        done)`` (``None`` unless the user chose to continue or fork)."""
        from ..session import SessionManager
        from .session_cwd import MissingSessionCwdError, ask_missing_cwd

        try:
            return await self.switch_session(path), None
        except MissingSessionCwdError as exc:
            if self.mode != "tui" or not self.ctx.ui.has_ui:
                raise
            issue = exc.issue
        choice = await ask_missing_cwd(self.ctx.ui, issue)
        if choice == "continue":
            switched = await self.switch_session(path, cwd_override=issue.fallback_cwd)
            return switched, f"Resumed session in {issue.fallback_cwd}" if switched else None
        if choice is None:
            return False, None
        fork = SessionManager.fork_from(issue.session_file, issue.fallback_cwd, self.session.session_dir)
        fork_file, fork_id = Path(fork.session_file or ""), fork.session_id
        fork.close()
        if not await self.switch_session(fork_file):
            fork_file.unlink(missing_ok=True)  # vetoed: no copy is left behind
            return False, None
        return True, f"Forked into new session {fork_id} in {issue.fallback_cwd}"

    async def import_from_jsonl(self, path: str | Path, *, cwd_override: str | Path | None = None) -> bool:
        """pi's ``importFromJsonl``: copy a session file from elsewhere into this session's folder (next to it
        under a free name; a file already there is used as it is) and continue it, keeping its id, as
        :meth:`switch_session` does. False if a plugin cancelled; then, and when the switch fails, the copy is
        removed. :class:`FileNotFoundError` when there is no such file."""
        import shutil

        from ..session.locations import default_session_dir

        source = Path(path).expanduser().resolve()
        if not source.is_file():
            raise FileNotFoundError(f"Session file not found: {source}")
        folder = Path(self.session.session_dir or default_session_dir(self.cwd))
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / source.name
        stored = target.resolve() == source
        counter = 1
        while not stored and target.exists():
            target = folder / f"{source.stem}-{counter}{source.suffix}"
            counter += 1
        if not stored:
            shutil.copyfile(source, target)
        try:
            switched = await self.switch_session(target, cwd_override=cwd_override)
        except BaseException:
            if not stored:
                target.unlink(missing_ok=True)
            raise
        if not switched and not stored:
            target.unlink(missing_ok=True)  # the import did not happen: no stray copy
        return switched

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> tuple[bool, str]:
        """A new session file holding the conversation *before* the user message ``entry_id`` (with
        ``position="at"``: the active path up to and including any entry ``entry_id``).

        Returns ``(cancelled, text)``: ``text`` is the forked message, for the host to offer for editing.
        """
        entry = self.session.get_raw_entry(entry_id)
        if position == "at":
            if entry is None:
                raise ValueError(f"no entry {entry_id!r} in this session")
            self.require_idle("fork")
            if await self._vetoed_fork(entry_id, "at"):
                return True, ""
            await self._branch_into_new_file(entry_id, "fork")
            return False, ""
        message = raw_message(entry)
        if entry is None or message.get("role") != "user":
            raise ValueError(f"entry {entry_id!r} is not a user message of this session")
        self.require_idle("fork")
        if await self._vetoed_fork(entry_id, "before"):
            return True, ""
        text = raw_text(message.get("content"))
        path = self.session.get_raw_branch(entry_id)  # its parent as the tree links it (not a raw parentId)
        await self._branch_into_new_file(path[-2]["id"] if len(path) > 1 else None, "fork")
        return False, text

    async def clone(self) -> bool:
        """Copy the active branch into a new session file and continue there; False if cancelled."""
        self.require_idle("clone")
        leaf = self.session.get_leaf_id()
        if await self._vetoed_fork(leaf, "at"):
            return False
        await self._branch_into_new_file(leaf, "fork")
        return True

    def get_fork_messages(self) -> list[ForkPoint]:
        """The user messages :meth:`fork` accepts, of every branch in file order (pi's rule: one without
        text, an image alone, is left out)."""
        points = [ForkPoint(e["id"], raw_text(raw_message(e).get("content"))) for e in self.session.raw_entries()
                  if raw_message(e).get("role") == "user" and isinstance(e.get("id"), str)]
        return [point for point in points if point.text]

    # -- user shell commands (RPC `bash`, interactive `!cmd`) -----------------------------------

    async def run_bash(self, command: str, *, exclude_from_context: bool = False,
                       on_output: Callable[[str], Any] | None = None) -> ShellResult:
        """Run a command for the user; its output reaches the model with the next prompt."""
        from ..agent.operations import run_bash_operations
        from ..events import UserBashEvent
        from ..toolkit.process import build_env

        operations = None
        if self.host.dispatch.has("user_bash"):
            decision = (await self.call_hook("user_bash", UserBashEvent(command, exclude_from_context,
                                                                        self.cwd))).decision
            operations = decision.operations if decision is not None else None
            if decision is not None and decision.result is not None:
                return self._record_user_bash(command, _shell_result(command, decision.result), exclude_from_context)
        self._bash = AbortController()
        try:
            result = await run_bash_operations(command, cwd=self.cwd, env=build_env(self.process_env()),
                                               signal=self._bash.signal, operations=operations, on_output=on_output,
                                               shell=self.shell_config())
        finally:
            self._bash = None
        return self._record_user_bash(command, result, exclude_from_context)

    def _record_user_bash(self, command: str, result: ShellResult, exclude_from_context: bool) -> ShellResult:
        from ..session import BashExecutionMessage

        message = BashExecutionMessage(
            command=command, output=result.output, exit_code=result.exit_code,
            cancelled=result.cancelled or result.timed_out, truncated=result.truncated,
            full_output_path=str(result.full_output_path) if result.full_output_path is not None else None,
            exclude_from_context=True if exclude_from_context else None)
        if self.is_streaming:
            self._pending_bash.append(message)  # pi adds it once the run is over
        else:
            self._record_bash(message)
        return result

    def abort_bash(self) -> bool:
        if self._bash is None:
            return False
        self._bash.abort("aborted by the user")
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self, reason: StartReason = "startup") -> None:
        """``session_start``, then ``resources_discover``: paths plugins add are loaded at once."""
        await self.call_hook("session_start", SessionStartEvent(reason))
        await self._discover_resources("reload" if reason == "reload" else "startup")

    async def reload(self) -> None:
        """pi's ``/reload``: ``session_shutdown`` (reason ``reload``), the plugins rebuilt (extension
        files imported again), resources reloaded, ``session_start`` and ``resources_discover``."""
        from ..extensions.manager import rebuild_plugin_host

        self.require_idle("reload")
        await self.call_hook("session_shutdown", SessionShutdownEvent("reload"))
        try:  # settings.json edited since the start (by hand or by /settings in another pi) apply now
            self.apply_settings(self.settings.reload())
        except SettingsError:  # not bound to files (an SDK session given Settings()): keep them
            pass
        known = set(self.host.tools.names())
        self.host = rebuild_plugin_host(self.host)
        self.wiring.host = self.host
        self.ctx.events = self.command_ctx.events = self.host.events
        fresh = [n for n in self.host.tools.names() if n not in known and _default_active(self.host.tools.get(n))]
        self.set_active_tools([*self._active_tools, *fresh])
        if self._loader is not None:
            self.resources = self._loader.load()
            self.skills, self.templates = list(self.resources.skills), list(self.resources.templates)
            self._system_prompt_factory = self.resources.system_prompt
        self._refresh_system_message()
        await self.start("reload")
        for listener in list(self._reload_listeners):
            listener()

    async def close(self, reason: Literal["quit", "reload", "new", "resume", "fork"] = "quit") -> None:
        """Shut down (``session_shutdown`` hooks) and release the session file; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        if self.is_streaming:
            await self.abort()
        # hooks dispatched in the background (session_info_changed, ...) finish first: a `def` handler
        # runs in a worker thread, and leaving now would cut it off mid-write
        notices = {task for task in self._tasks if not task.done() and task not in self._inputs}
        if notices:
            await asyncio.wait(notices, timeout=BACKGROUND_HOOKS_AT_CLOSE_S)
        await self.call_hook("session_shutdown", SessionShutdownEvent(reason))
        self.session.close()

    # -- what the collaborators (Compactor, AutoRetry, PluginBridge) use -------------------------

    async def call_hook(self, hook: str, event: Any) -> Any:
        """Dispatch an event hook with this session's ``ctx``; returns the (possibly changed) event."""
        return await self.host.dispatch.call(hook, event, self.ctx)

    async def emit(self, event: Any) -> None:
        """Send an event to every subscriber, in order."""
        for listener in list(self._listeners):
            result = listener(event)
            if result is not None and inspect.isawaitable(result):
                await result

    def stream_model(self, model: Model, context: Context, **options: Any) -> AsyncIterator[Any]:
        return self._stream(model, context, **self.routing.direct(model, options))  # type: ignore[no-any-return]

    def entry_id_of(self, message: Any) -> str | None:
        return self._entry_ids.get(id(message))

    def reload_transcript(self) -> None:
        restored = self.session.build_session_context()
        self.agent.messages[:] = restored.message_list()
        self._declared.reset()
        self._entry_ids.clear()
        self.agent.config.stream_options["session_id"] = self.session.session_id

    def _note_failure(self, event: Any) -> None:
        """A failed answer, before it is recorded: remember the server's Retry-After for the retry; one
        longer than the agent's retries may wait says so, and when to try again, instead of retrying."""
        retry_after = getattr(event, "retry_after_ms", None)
        self._retry_after = (event.message, retry_after) if isinstance(retry_after, int) else None
        if self._retry_after is not None:
            event.message.error_message = self.auto_retry.explain_wait(event.message, retry_after)

    def retry_after_ms(self, message: Any) -> int | None:
        """The Retry-After (ms) the server sent with this failed answer, if any."""
        noted = self._retry_after
        return noted[1] if noted is not None and noted[0] is message else None

    async def hide_failed(self, message: Any) -> None:
        """pi 1.6: a failed answer stays in the file; a context_edit keeps it away from the model."""
        if isinstance(message, AssistantMessage):
            self.routing.failed = message  # the next request is a retry (the router sees what failed)
        target = self._entry_ids.get(id(message))
        if target is not None:
            edit_id = self.session.append_context_edit(target, None)
            await self.emit(EntryAppendedEvent(self.session.get_raw_entry(edit_id) or {"id": edit_id}))
        if self.agent.messages and self.agent.messages[-1] is message:
            self.agent.messages.pop()

    def require_idle(self, what: str) -> None:
        if self.is_streaming:
            raise SessionBusyError(f"cannot {what} while the agent is running; abort it first")

    def process_env(self) -> dict[str, str]:
        """What processes started for this session see (``PI_SESSION_ID``, ``PI_MODEL``, ...)."""
        session_file = self.session.session_file
        return {"PI_SESSION_ID": self.session.session_id, "PI_SESSION_FILE": str(session_file or ""),
                "PI_PROVIDER": self._model.provider, "PI_MODEL": self._model.id,
                "PI_REASONING_LEVEL": self._thinking_level}

    def persist(self, message: Any) -> None:
        """Store a message of the conversation as its session entry."""
        role = getattr(message, "role", None)
        if role in PERSISTED_ROLES:
            self._entry_ids[id(message)] = self.session.append_message(message)
        elif role == "custom":
            self._entry_ids[id(message)] = self.session.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details)
        if role == "user":
            self._queue_changed()

    def queue_next_turn(self, message: Any) -> None:
        """Hold ``message`` until the next prompt, then send it after the user's message."""
        self._next_turn.append(message)

    def queue_changed(self) -> None:
        self._queue_changed()

    async def run_message(self, message: Any) -> None:
        """Start a run with a plugin's message (``send_message(trigger_turn=True)``), through
        ``before_agent_start`` with ``message_type`` ``custom``."""
        self._idle.clear()  # busy from here: messages sent meanwhile join this run, as in pi
        self._settled.clear()
        try:
            event = BeforeAgentStartEvent(_text_of(message), [], self._system_text, message_type="custom",
                                          message=message)
            prompts = self._starting_messages(message, await self._before_agent_start(event))
        except BaseException:
            self._idle.set()
            self._settled.set()
            raise
        await self._run(lambda: self.agent.prompt(prompts))

    # -- internals -----------------------------------------------------------------------------

    def _loop_config(self) -> LoopConfig:
        from ..session import convert_to_llm

        options: dict[str, Any] = {"reasoning": None if self._thinking_level == "off" else self._thinking_level,
                                   "on_payload": self.wiring.on_payload, "session_id": self.session.session_id,
                                   "observer": self.wiring}

        def to_llm(messages: list[Any]) -> list[Any]:
            converted = convert_to_llm(messages)
            return block_images(converted) if self.settings.images.block_images else converted

        return LoopConfig(
            model=self._model,
            stream=stamp_thinking_level(self.routing.wrap(self._stream), lambda: self._thinking_level,
                                        self._note_failure),
            system_prompt=self._system_text, tools=self.tools(), convert_to_llm=to_llm,
            transform_context=self._before_request, transform_request=self.wiring.transform_request,
            before_tool_call=self.wiring.before_tool_call, after_tool_call=self._after_tool_call,
            tool_context=self._tool_context, stream_options=options, declare_tools=self._declare_tools,
        )

    def _declare_tools(self, transcript: list[Any], pending: list[Any]) -> list[Any]:
        from .system_prompt import _declaration

        return self._declared.declare(transcript, pending, [_declaration(tool) for tool in self.tools()])

    async def _after_tool_call(self, event: AfterToolCallEvent) -> AfterToolCallEvent:
        event = await self.wiring.after_tool_call(event)
        # after the hooks, so images a plugin added are scaled too (pi's order)
        event.content = normalize_images(event.content, auto_resize=self.settings.images.auto_resize,
                                         model=self._model)
        return event

    def _user(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        return _user(text, normalize_images(images or [], auto_resize=self.settings.images.auto_resize,
                                            model=self._model))

    def _tool_context(self, call_id: str, signal: AbortSignal, on_update: Callable[[ToolResult], object]) -> ToolContext:
        return ToolContext(call_id, self.cwd, signal, on_update, env=self.process_env(), session=self.ctx,
                           nested=self.nested_calls, shell=self.shell_config())

    @property
    def nested_calls(self) -> NestedCalls:
        """Calls tools make to other tools (``ToolContext.execute_tool``); made on first use."""
        if self._nested is None:
            from .nested_calls import NestedCalls

            self._nested = NestedCalls(self)
        return self._nested

    def shell_config(self) -> ShellConfig:
        """The ``shellPath`` and ``shellCommandPrefix`` settings for shell commands (tools and ``!``)."""
        from ..toolkit.process import ShellConfig

        return ShellConfig(self.settings.shell_path or None, self.settings.shell_command_prefix or None)

    async def _prompt_messages(self, text: str, images: list[ImageContent]) -> list[Any]:
        start = await self._before_agent_start(BeforeAgentStartEvent(text, images, self._system_text))
        return self._starting_messages(self._user(text, images), start)

    def _starting_messages(self, first: Any, start: BeforeAgentStartEvent) -> list[Any]:
        prompts: list[Any] = []
        # the items' roles, not the messages: reading a resumed session's messages would type every one
        if not any(getattr(m, "role", None) == "system" for m in message_items(self.agent.messages)):
            prompts.append(self.system_message)
        prompts.append(first)
        prompts.extend(start.messages)
        prompts.extend(self._next_turn)
        self._next_turn = []
        return prompts

    async def _before_agent_start(self, event: BeforeAgentStartEvent) -> BeforeAgentStartEvent:
        import dataclasses

        from .system_prompt import build_system_prompt

        options = self.system_prompt_options()
        event.system_prompt_options = dataclasses.replace(options, sections=dict(options.sections))
        event._rebuild = lambda edited: build_system_prompt(edited).text
        event._after_handler()  # the starting point each handler's edits are measured against
        self._starting = event
        try:
            event = await self.call_hook("before_agent_start", event)
        finally:
            self._starting = None
        self.agent.config.system_prompt = event.system_prompt
        return event

    async def _discover_resources(self, reason: Literal["startup", "reload"]) -> None:
        if not self.host.dispatch.has("resources_discover"):
            return
        from ..events import ResourcePaths, ResourcesDiscoverEvent

        found = await self.host.dispatch.collect("resources_discover", event=ResourcesDiscoverEvent(self.cwd, reason),
                                                 ctx=self.ctx)
        paths = [p for p in found if isinstance(p, ResourcePaths)]
        if not paths:
            return
        self.theme_paths = [self.cwd / p for found_paths in paths for p in found_paths.theme_paths]
        if self._loader is not None:
            self.resources = self._loader.load(paths)
            self.skills, self.templates = list(self.resources.skills), list(self.resources.templates)
            self._system_prompt_factory = self.resources.system_prompt
            self._refresh_system_message()

    def _is_resource_command(self, name: str) -> bool:
        if name.startswith("skill:"):
            return any(s.name == name[6:] for s in self.skills)
        return any(t.name == name for t in self.templates)

    def _expand(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` become their text (plain input stays as it is)."""
        if not text.startswith("/"):
            return text
        from .resources import expand_prompt_template, expand_skill_command

        return expand_skill_command(text, self.skills) or expand_prompt_template(text, self.templates) or text

    async def _run_command(self, text: str) -> bool:
        """Run ``/name args`` if ``name`` is a command; an unknown ``/word`` (no command, template or skill)
        raises :class:`UnknownCommandError`. Other text (``/usr/bin is gone``) is no command."""
        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        name = name.split("\n", 1)[0]
        command = self.host.commands.get(name)
        if command is None:
            if COMMAND_WORD.fullmatch(name) and not self._is_resource_command(name):
                known = [*self.host.commands.names(), *(t.name for t in self.templates),
                         *(f"skill:{s.name}" for s in self.skills)]
                raise UnknownCommandError(name, difflib.get_close_matches(name, known, n=3, cutoff=0.5))
            return False
        if command.idle_only and self.is_streaming:
            await self.ctx.ui.notify(f"/{name} can run when the agent is idle (Esc interrupts)", "warning")
            return True
        result = command.handler(args.strip(), self.command_ctx)
        if inspect.isawaitable(result):
            await result
        return True

    async def _run(self, start: Callable[[], Awaitable[Any]]) -> None:
        self._idle.clear()
        self._settled.clear()
        self.routing.failed = None
        self.auto_retry.start_run()
        self.compactor.start_run()
        try:
            await start()
            while True:
                while await self.compactor.recover_overflow() or await self.auto_retry.maybe_retry():
                    await self.agent.continue_()
                await self.compactor.compact_after_run()
                if self.agent.last_run_aborted or self.auto_retry.aborted:
                    break
                await self._queued_inputs()
                queued = self.agent.take_queued()  # queued by agent_end handlers: one more run, as in pi
                if queued:
                    self._queue_changed()
                    self.auto_retry.start_run()
                    self.compactor.start_run()
                    await self.agent.prompt(queued)
                    continue
                if not await self._before_settle():
                    break
                self.auto_retry.start_run()
                await self.agent.continue_(force=True)
        finally:
            self._idle.set()
            self._flush_pending_bash()
            await self._add_held_messages()
            settled = AgentSettledEvent(aborted=self.agent.last_run_aborted or self.auto_retry.aborted)
            try:
                if self.host.dispatch.has("agent_settled"):
                    await self.call_hook("agent_settled", settled)
                await self.emit(settled)
            finally:
                if self._idle.is_set():  # not when a handler's work already started the next run
                    self._settled.set()

    async def _before_settle(self) -> bool:
        """``agent_before_settle``: append what the handlers proposed; True when one asked to continue."""
        if not self.host.dispatch.has("agent_before_settle"):
            return False
        from ..events import AgentBeforeSettleEvent

        event = await self.call_hook("agent_before_settle", AgentBeforeSettleEvent(list(self.agent.messages)))
        if event.entries and not await self.apply_drafts(event.entries, "agent_before_settle"):
            return False  # a proposal that could not be written asks for nothing
        return bool(event.continue_) and not self.agent.last_run_aborted

    async def apply_drafts(self, drafts: list[dict[str, Any]], hook: str) -> bool:
        """Append the entries a boundary hook proposed (``custom``, ``custom_message``, ``context_edit``,
        ``compaction``), all checked first: a bad proposal is reported and nothing of it is written."""
        from .drafts import DraftError, append_drafts, check_drafts

        try:
            checked = check_drafts(drafts)
        except DraftError as exc:
            from ..extensions.dispatch import HookError

            self.host._on_hook_error(HookError("boundary", hook, exc, str(exc)))
            return False
        if append_drafts(self, checked):
            self.reload_transcript()
        return True

    async def _before_request(self, messages: list[Any], signal: AbortSignal) -> list[Any]:
        """Before each model request: compact if the context is over the threshold, then ``context`` hooks."""
        messages = await self.compactor.compact_before_request(messages)
        return await self.wiring.transform_context(messages, signal)

    async def _on_agent_event(self, event: Any) -> None:
        if event.type == "message_update":  # one per delta of an answer: none of the cases below is one
            if self.host.dispatch.has("message_update"):
                await self.host.dispatch.call("message_update", event, self.ctx)
            await self.emit(event)
            if time.monotonic() - self._breathed >= BREATHE_S:  # checked here: a call per delta shows
                await self._breathe()
            return
        if self._nested is not None:
            self._record_nested(event)
        if isinstance(event, MessageStartEvent) and getattr(event.message, "role", None) == "user":
            self._queue_changed()  # a queued message is being delivered: the queue shrank (pi tells before)
        if isinstance(event, AgentEndEvent):
            last = self.agent.messages[-1] if self.agent.messages else None
            event.will_retry = self.auto_retry.will_retry(last) or self.compactor.will_recover_overflow(last)
        if isinstance(event, TurnEndEvent):
            event.message_entry_id = self._entry_ids.get(id(event.message))
            event.tool_result_entry_ids = [i for i in (self._entry_ids.get(id(r)) for r in event.tool_results) if i]
        if self.host.dispatch.has(event.type):
            await self.host.dispatch.call(event.type, event, self.ctx)
        if isinstance(event, TurnEndEvent) and event.entries and not await self.apply_drafts(event.entries, "turn_end"):
            event.continue_ = False
        await self.emit(event)
        if event.type == "message_update":
            await self._breathe()
        if isinstance(event, MessageEndEvent):
            self.persist(event.message)
            if getattr(event.message, "stop_reason", "error") not in ("error", "length"):
                self.compactor.answer_succeeded()
            if isinstance(event.message, AssistantMessage):
                await self.auto_retry.answer_arrived(event.message)
        if isinstance(event, TurnEndEvent) and event.message.stop_reason not in ("error", "aborted"):
            # after the tool results, never between a call and its result; a failed turn keeps them for
            # the retry's turn (or the end of the run), so the failed answer stays the last message
            await self._add_held_messages()

    def _record_nested(self, event: Any) -> None:
        """The calls a tool made through ``execute_tool`` go on its result message, as pi records them."""
        assert self._nested is not None
        message = getattr(event, "message", None)
        if isinstance(event, MessageStartEvent) and getattr(message, "role", None) == "toolResult" \
                and getattr(event, "parent_tool_call_id", None) is None:
            record = self._nested.take_record(message.tool_call_id)
            if record is not None:
                message.nested_calls = record
        elif isinstance(event, AgentEndEvent):
            self._nested.clear()

    def _queue_changed(self) -> None:
        event = QueueUpdateEvent([_text_of(m) for m in self.agent.steering],
                                 [_text_of(m) for m in self.agent.follow_ups])
        state = (tuple(event.steering), tuple(event.follow_up))
        if state == self._queue_state:
            return
        self._queue_state = state
        self._emit_soon(event)

    def _emit_soon(self, event: Any) -> None:
        """Send an event from synchronous code: listeners run now, awaitable ones finish on the loop."""
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result)

    async def _breathe(self) -> None:
        now = time.monotonic()
        if now - self._breathed >= BREATHE_S:
            await asyncio.sleep(0)
            self._breathed = time.monotonic()

    def _refresh_system_message(self) -> None:
        self.system_message, self._system_text = _system(self._system_prompt_factory, self.tools())
        self.agent.config.system_prompt = self._system_text

    def _restore_model(self) -> None:
        """Continue with the model and thinking level the resumed session last used, when available."""
        restored = self.session.build_session_context()
        ref = None if "model" in self.explicit else restored.model
        if ref is not None and (ref.provider, ref.model_id) != (self.model.provider, self.model.id):
            model = self.models.get_model(ref.provider, ref.model_id)
            if model is not None and self.models.has_auth(model.provider):
                self._model = model
                self.agent.config.model = model
        if restored.thinking_level and "thinking" not in self.explicit:
            self._thinking_level = restored.thinking_level
            self.agent.config.stream_options["reasoning"] = None if restored.thinking_level == "off" \
                else restored.thinking_level

    def _record_bash(self, message: Any) -> None:
        self.agent.messages.append(message)
        self.persist(message)

    def add_message(self, message: Any) -> None:
        """Add a plugin's message to the conversation now (the agent is idle): stored, and announced with
        ``message_start``/``message_end`` as pi does."""
        self.agent.messages.append(message)
        self.persist(message)
        self._emit_soon(MessageStartEvent(message))
        self._emit_soon(MessageEndEvent(message))

    def entry_appended(self, entry_id: str) -> None:
        """Tell subscribers about an entry a plugin wrote (``entry_appended``, as pi does)."""
        entry = self.session.get_raw_entry(entry_id)
        if entry is not None:
            self._emit_soon(EntryAppendedEvent(entry))

    def hold_message(self, message: Any) -> None:
        """Add a plugin's message when the running turn ends (no events until it is in the session)."""
        self._held_messages.append(message)

    async def _add_held_messages(self) -> None:
        held, self._held_messages = self._held_messages, []
        for message in held:
            self.agent.messages.append(message)
            self.persist(message)
            await self.emit(MessageStartEvent(message))
            await self.emit(MessageEndEvent(message))

    def _flush_pending_bash(self) -> None:
        pending, self._pending_bash = self._pending_bash, []
        for message in pending:
            self._record_bash(message)

    async def _vetoed_switch(self, reason: Literal["new", "resume"], target: Path | None) -> bool:
        event = await self.call_hook("session_before_switch", SessionBeforeSwitchEvent(reason, target))
        return event.decision is not None

    async def _vetoed_fork(self, entry_id: str | None, position: Literal["before", "at"]) -> bool:
        event = await self.call_hook("session_before_fork", SessionBeforeForkEvent(entry_id, position))
        return event.decision is not None

    async def _branch_into_new_file(self, leaf_id: str | None, reason: MoveReason) -> None:
        previous = self.session.session_file
        await self.call_hook("session_shutdown", SessionShutdownEvent(reason))
        if leaf_id is None:
            self.session.new_session(parent_session=previous)
        else:
            self.session.create_branched_session(leaf_id)
        self.reload_transcript()
        await self.call_hook("session_start", SessionStartEvent(reason, previous))
        self._session_changed()

    async def _rebind(self, manager: SessionManager, reason: MoveReason, *, restore: bool = False) -> None:
        previous = self.session.session_file
        await self.call_hook("session_shutdown", SessionShutdownEvent(reason, manager.session_file))
        self.session.close()
        self.session = manager
        moved = self._move_to(Path(manager.cwd))
        self.reload_transcript()
        if restore:
            self._restore_model()
            self._restore_tools()
        await self.call_hook("session_start", SessionStartEvent(reason, previous))
        if moved:
            await self._discover_resources("startup")
        self._session_changed()

    def _move_to(self, cwd: Path) -> bool:
        """Work in ``cwd`` (a session from another project): tools, ``ctx.cwd``, the project's settings
        (when it is trusted), context files, skills and prompt templates. Plugins stay those loaded at the
        start. False when ``cwd`` is where the session already is."""
        from dataclasses import replace

        from .session_cwd import stored_trust

        if cwd == self.cwd:
            return False
        self.cwd = self.ctx.cwd = self.command_ctx.cwd = cwd
        agent_dir = self.settings.global_path.parent if self.settings.global_path is not None else None
        if agent_dir is not None:
            self.apply_settings(Settings.load(cwd, agent_dir, trusted=stored_trust(self.host, cwd)))
        if self._loader is not None:
            self._loader = replace(self._loader, cwd=cwd, settings=self.settings)
            self.resources = self._loader.load()
            self.skills, self.templates = list(self.resources.skills), list(self.resources.templates)
            self._system_prompt_factory = self.resources.system_prompt
        self.theme_paths = []
        self._refresh_system_message()
        return True

    def _restore_tools(self) -> None:
        if self._resume_tools is None or "tools" in self.explicit:
            return
        restored = self.session.build_session_context()
        self.set_active_tools(self._resume_tools(self, restored))


def _shell_result(command: str, result: Any) -> ShellResult:
    """A ``user_bash`` handler's result (a ``ShellResult``, or pi's ``{output, exitCode, cancelled}``)."""
    from ..toolkit.process import ShellResult

    if isinstance(result, ShellResult):
        return result
    if not isinstance(result, dict):
        raise TypeError(f"user_bash result must be a ShellResult or a dict, not {type(result).__name__}")
    return ShellResult(command, str(result.get("output", "")), result.get("exitCode", result.get("exit_code")),
                       cancelled=bool(result.get("cancelled", False)))


def _default_active(tool: Tool | None) -> bool:
    return tool is not None and tool.default_active and tool.exposure in ("direct", "model-only")


def _host_registry(host: PluginHost) -> ModelRegistry:
    from ..ai import ModelRegistry

    return ModelRegistry(apis=list(host.apis), providers=list(host.providers), agent_dir=host.agent_dir)


def _system(factory: Callable[[list[Tool]], Any], tools: list[Tool]) -> tuple[SystemMessage, str]:
    """The system message to store and the prompt text to send (a factory may return either a
    ``SystemMessage`` or a built prompt with ``text`` and ``to_system_message(tools)``)."""
    built = factory(tools)
    if isinstance(built, SystemMessage):
        return built, built.text()
    return built.to_system_message(tools), built.text


def _announce(callback: Callable[[Disposition], object] | None, disposition: Disposition) -> Disposition:
    if callback is not None:
        callback(disposition)
    return disposition


def _user(text: str, images: list[ImageContent] | None) -> UserMessage:
    return UserMessage(content=[TextContent(text=text), *(images or [])])


def _text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(getattr(b, "text", "") for b in content)


__all__ = ["AgentSession", "ForkPoint", "SessionBusyError", "UnknownCommandError"]
