"""``AgentSession``: one conversation, bound to its session file, its plugins and its settings.

It owns the agent (loop state and queues), persists every message as pi 1.6 does, forwards every
event to the plugins' hooks and then to subscribers, and adds what pi does around a run: slash
commands, input hooks, the system message, automatic retries of transient provider errors.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..agent.agent import Agent
from ..agent.loop import LoopConfig
from ..agent.tools import Tool, ToolContext, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import AssistantMessage, ImageContent, Model, SystemMessage, TextContent, UserMessage
from ..events import (
    AgentEndEvent,
    BeforeAgentStartEvent,
    InputEvent,
    MessageEndEvent,
    ModelSelectEvent,
    SessionShutdownEvent,
    SessionStartEvent,
)
from ..extensions.context import UI, ExtensionContext
from .info import SessionInfoMixin
from .lifecycle import SessionLifecycle
from .events import AgentSettledEvent, AutoRetryEndEvent, AutoRetryStartEvent, EntryAppendedEvent, QueueUpdateEvent
from .wiring import HookWiring, stamp_thinking_level

if TYPE_CHECKING:
    from ..extensions.manager import PluginHost

Listener = Callable[[Any], "Awaitable[None] | None"]
Disposition = Literal["started", "queued", "handled"]
PERSISTED_ROLES = ("user", "assistant", "toolResult", "system", "bashExecution")


class SessionBusyError(RuntimeError):
    pass


@dataclass
class RetrySettings:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000


class AgentSession(SessionLifecycle, SessionInfoMixin):
    """A running conversation. Build one with :func:`pi_core.create_agent_session`."""

    skills: list[Any]
    templates: list[Any]

    def __init__(self, *, host: PluginHost, session: Any, model: Model, stream: Callable[..., Any],
                 tools: list[str], system_prompt: Callable[[list[Tool]], Any], thinking_level: str = "off",
                 mode: str = "sdk", ui: UI | None = None, retry: RetrySettings | None = None,
                 flags: dict[str, Any] | None = None, queue_modes: tuple[str, str] = ("one-at-a-time",) * 2) -> None:
        self.host = host
        self.session = session
        self.cwd = Path(session.cwd)
        self.mode = mode
        self.retry = retry or RetrySettings()
        self._model = model
        self._thinking_level = thinking_level
        self._stream = stream
        self._system_prompt_factory = system_prompt
        self._active_tools = [n for n in tools if n in host.tools]
        self._listeners: list[Listener] = []
        self._retry_attempt = 0
        self._retrying = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._entry_ids: dict[int, str] = {}
        self._queue_state: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._pending_bash: list[Any] = []
        self._closed = False
        self._retry_wait: asyncio.Event | None = None
        self._retry_aborted = False
        self.auto_compaction_enabled = True
        self.is_compacting = False
        self._compaction: Any = None
        self._overflow_recovered = False
        self._compaction_blocked = False  # compaction: a failed pre-request compaction is not retried this run
        self._next_turn: list[Any] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        self.skills, self.templates = [], []
        self.ctx = ExtensionContext(self.cwd, ui=ui, mode=mode, runtime=_Bridge(self), flags=flags)
        self.wiring = HookWiring(host, self.ctx, lambda: self._model)
        self.system_message, self._system_text = _system(system_prompt, self.tools())
        restored = session.build_session_context()
        self.agent = Agent(self._loop_config(), messages=list(restored.messages))
        self.agent.steering_mode, self.agent.follow_up_mode = queue_modes  # type: ignore[assignment]
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

    def tools(self) -> list[Tool]:
        return [t for t in (self.host.tools.get(n) for n in self._active_tools) if t is not None]

    def active_tool_names(self) -> list[str]:
        return list(self._active_tools)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event (agent and session events) in order; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- prompting -----------------------------------------------------------------------------

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: Literal["steer", "followUp"] | None = None, source: str = "sdk",
                     on_disposition: Callable[[Disposition], object] | None = None) -> Disposition:
        """Handle user input: a slash command, a queued message while running, or a new run.

        Returns once the run (with retries) is over. ``on_disposition`` is called before any event of
        the run is emitted (RPC answers the request there).
        """
        images = list(images or [])
        if self.is_streaming:
            if streaming_behavior is None:
                raise SessionBusyError("Agent is already processing. Specify streamingBehavior ('steer' or "
                                       "'followUp') to queue the message.")
            (self.steer if streaming_behavior == "steer" else self.follow_up)(text, images)
            return _announce(on_disposition, "queued")
        if await self._run_command(text):
            return _announce(on_disposition, "handled")
        event = await self.host.dispatch.call("input", InputEvent(text, images, source=source), self.ctx)  # type: ignore[arg-type]
        if event.handled:
            return _announce(on_disposition, "handled")
        prompts = await self._prompt_messages(self._expand(event.text), event.images)
        _announce(on_disposition, "started")
        await self._run(lambda: self.agent.prompt(prompts))
        return "started"

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.steer(_user(text, images))
        self._queue_changed()

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.follow_up(_user(text, images))
        self._queue_changed()

    def clear_queue(self) -> tuple[list[str], list[str]]:
        steering, follow_ups = self.agent.clear_queues()
        self._queue_changed()
        return [_text_of(m) for m in steering], [_text_of(m) for m in follow_ups]

    async def abort(self) -> None:
        """Stop the run (model stream, running tools, a pending retry) and wait until the session is idle."""
        self._retry_aborted = self.abort_retry() or self._retry_aborted
        if self._compaction is not None:
            self._compaction.abort("aborted by the user")
        self.agent.abort()
        await self.wait_for_idle()

    def abort_retry(self) -> bool:
        """Cancel a pending automatic retry (its delay); returns whether one was pending."""
        if self._retry_wait is None or self._retry_wait.is_set():
            return False
        self._retry_wait.set()
        return True

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    # -- model, thinking, tools ----------------------------------------------------------------

    async def set_model(self, model: Model, *, source: Literal["set", "cycle", "restore"] = "set") -> None:
        """Use ``model`` from the next request on (a ``model_change`` entry; ``model_select`` hooks)."""
        previous, self._model = self._model, model
        self.session.append_model_change(model.provider, model.id)
        self.agent.config.model = model
        await self.host.dispatch.call("model_select", ModelSelectEvent(model, previous, source), self.ctx)

    def _background(self, work: Awaitable[Any]) -> None:
        """Run ``work`` after the current handler returns (plugins call the API from inside hooks)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def set_thinking_level(self, level: str) -> None:
        self._thinking_level = level
        self.session.append_thinking_level_change(level)
        self.agent.config.stream_options["reasoning"] = None if level == "off" else level

    # -- compaction and the tree (pi_core.runtime.compaction) ----------------------------------

    async def compact(self, custom_instructions: str | None = None) -> Any:
        """Compact now (``/compact``); stops a running turn first. ``None`` when a plugin cancelled."""
        from .compaction import compact

        if self.is_streaming:
            await self.abort()
        return await compact(self, "manual", custom_instructions)

    def set_auto_compaction(self, enabled: bool) -> None:
        self.auto_compaction_enabled = enabled

    async def navigate_tree(self, entry_id: str, *, summarize: bool = False, custom_instructions: str | None = None,
                            replace_instructions: bool = False, label: str | None = None) -> dict[str, Any]:
        """Continue from another point of the session tree, optionally summarising the branch left."""
        from .compaction import navigate_tree

        return await navigate_tree(self, entry_id, summarize=summarize, custom_instructions=custom_instructions,
                                   replace_instructions=replace_instructions, label=label)

    def set_active_tools(self, names: list[str]) -> None:
        """Change what the model is told about from the next request on. Not a sandbox."""
        self._active_tools = [n for n in dict.fromkeys(names) if n in self.host.tools]
        self.agent.config.tools = self.tools()
        self._refresh_system_message()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self, reason: Literal["startup", "reload", "new", "resume", "fork"] = "startup") -> None:
        await self.host.dispatch.call("session_start", SessionStartEvent(reason), self.ctx)

    async def close(self, reason: Literal["quit", "reload", "new", "resume", "fork"] = "quit") -> None:
        """Shut down (``session_shutdown`` hooks) and release the session file; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        if self.is_streaming:
            await self.abort()
        await self.host.dispatch.call("session_shutdown", SessionShutdownEvent(reason), self.ctx)
        self.session.close()

    # -- internals -----------------------------------------------------------------------------

    def _loop_config(self) -> LoopConfig:
        from ..session import convert_to_llm

        options: dict[str, Any] = {"reasoning": None if self._thinking_level == "off" else self._thinking_level,
                                   "on_payload": self.wiring.on_payload, "session_id": self.session.session_id}
        return LoopConfig(
            model=self._model, stream=stamp_thinking_level(self._stream, lambda: self._thinking_level),
            system_prompt=self._system_text, tools=self.tools(), convert_to_llm=convert_to_llm,
            transform_context=self._before_request, transform_request=self.wiring.transform_request,
            before_tool_call=self.wiring.before_tool_call, after_tool_call=self.wiring.after_tool_call,
            tool_context=self._tool_context, stream_options=options,
        )

    def _tool_context(self, call_id: str, signal: AbortSignal, on_update: Callable[[ToolResult], object]) -> ToolContext:
        return ToolContext(call_id, self.cwd, signal, on_update, env=self._process_env(), session=self.ctx)

    def _process_env(self) -> dict[str, str]:
        session_file = self.session.session_file
        return {"PI_SESSION_ID": self.session.session_id, "PI_SESSION_FILE": str(session_file or ""),
                "PI_PROVIDER": self._model.provider, "PI_MODEL": self._model.id,
                "PI_REASONING_LEVEL": self._thinking_level}

    async def _prompt_messages(self, text: str, images: list[ImageContent]) -> list[Any]:
        start = BeforeAgentStartEvent(text, images, self._system_text)
        start = await self.host.dispatch.call("before_agent_start", start, self.ctx)
        self.agent.config.system_prompt = start.system_prompt
        prompts: list[Any] = []
        if not any(getattr(m, "role", None) == "system" for m in self.agent.messages):
            prompts.append(self.system_message)
        prompts.append(_user(text, images))
        prompts.extend(start.messages)
        prompts.extend(self._next_turn)
        self._next_turn = []
        return prompts

    def _expand(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` become their text (plain input stays as it is)."""
        if not text.startswith("/"):
            return text
        from .resources import expand_prompt_template, expand_skill_command

        return expand_skill_command(text, self.skills) or expand_prompt_template(text, self.templates) or text

    async def _run_command(self, text: str) -> bool:
        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        command = self.host.commands.get(name)
        if command is None:
            return False
        result = command.handler(args.strip(), self.ctx)
        if inspect.isawaitable(result):
            await result
        return True

    async def _run(self, start: Callable[[], Awaitable[Any]]) -> None:
        self._idle.clear()
        self._retry_attempt = 0
        self._retry_aborted = False
        self._overflow_recovered = False
        self._compaction_blocked = False
        try:
            await start()
            while await self._recover_overflow() or await self._maybe_retry():
                await self.agent.continue_()
            await self._compact_if_over_threshold()
        finally:
            self._idle.set()
            self._flush_pending_bash()
            await self._emit(AgentSettledEvent(aborted=self.agent.last_run_aborted or self._retry_aborted))

    # -- compaction call sites (logic in pi_core.runtime.compaction) ----------------------------

    async def _before_request(self, messages: list[Any], signal: AbortSignal) -> list[Any]:
        """Before each model request: compact if the context is over the threshold, then ``context`` hooks."""
        from .compaction import compact_before_request

        messages = await compact_before_request(self, messages)
        return await self.wiring.transform_context(messages, signal)

    def _is_overflow(self, message: Any) -> bool:
        from .compaction import will_recover_overflow

        return will_recover_overflow(self, message)

    async def _recover_overflow(self) -> bool:
        """The request was too long: hide the failed answer, compact, and retry the turn once."""
        from .compaction import recover_overflow

        return await recover_overflow(self)

    async def _compact_if_over_threshold(self) -> None:
        from .compaction import compact_after_run

        await compact_after_run(self)

    # -- retry (pi 1.6: the failed answer stays in the file, hidden from the model by a context_edit)

    async def _hide_failed(self, message: Any) -> None:
        """pi 1.6: a failed answer stays in the file; a context_edit keeps it away from the model."""
        target = self._entry_ids.get(id(message))
        if target is not None:
            edit_id = self.session.append_context_edit(target, None)
            await self._emit(EntryAppendedEvent(self.session.get_raw_entry(edit_id) or {"id": edit_id}))
        if self.agent.messages and self.agent.messages[-1] is message:
            self.agent.messages.pop()

    def _should_retry(self, message: Any) -> bool:
        if not (self.retry.enabled and isinstance(message, AssistantMessage) and message.stop_reason == "error"):
            return False
        if self._retry_attempt >= self.retry.max_retries:
            return False
        from ..ai import classify_error

        return classify_error(message) == "transient"

    async def _maybe_retry(self) -> bool:
        last = self.agent.messages[-1] if self.agent.messages else None
        if not self._should_retry(last):
            if self._retry_attempt:
                await self._emit(AutoRetryEndEvent(success=not _is_error(last), attempt=self._retry_attempt,
                                                   final_error=getattr(last, "error_message", None)))
            return False
        self._retry_attempt += 1
        delay = min(self.retry.base_delay_ms * 2 ** (self._retry_attempt - 1), self.retry.max_delay_ms)
        await self._emit(AutoRetryStartEvent(self._retry_attempt, self.retry.max_retries, delay,
                                             last.error_message or ""))
        await self._hide_failed(last)
        if await self._retry_delay(delay / 1000):
            await self._emit(AutoRetryEndEvent(success=False, attempt=self._retry_attempt,
                                               final_error="retry cancelled"))
            return False
        return True

    async def _retry_delay(self, seconds: float) -> bool:
        """Wait before a retry; True when the wait was cancelled (``abort`` / ``abort_retry``)."""
        self._retry_wait = asyncio.Event()
        try:
            await asyncio.wait_for(self._retry_wait.wait(), seconds)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            self._retry_wait = None

    # -- events --------------------------------------------------------------------------------

    async def _on_agent_event(self, event: Any) -> None:
        if isinstance(event, AgentEndEvent):
            last = self.agent.messages[-1] if self.agent.messages else None
            event.will_retry = self._should_retry(last) or self._is_overflow(last)
        if self.host.dispatch.has(event.type):
            await self.host.dispatch.call(event.type, event, self.ctx)
        await self._emit(event)
        if isinstance(event, MessageEndEvent):
            self._persist(event.message)
            if getattr(event.message, "stop_reason", "error") not in ("error", "length"):
                self._overflow_recovered = False  # compaction: a good answer allows another overflow recovery

    def _persist(self, message: Any) -> None:
        role = getattr(message, "role", None)
        if role in PERSISTED_ROLES:
            self._entry_ids[id(message)] = self.session.append_message(message)
        elif role == "custom":
            self._entry_ids[id(message)] = self.session.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details)
        if role == "user":
            self._queue_changed()

    async def _emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                await result

    def _queue_changed(self) -> None:
        event = QueueUpdateEvent([_text_of(m) for m in self.agent.steering], [_text_of(m) for m in self.agent.follow_ups])
        state = (tuple(event.steering), tuple(event.follow_up))
        if state == self._queue_state:
            return
        self._queue_state = state
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result)

    def _refresh_system_message(self) -> None:
        self.system_message, self._system_text = _system(self._system_prompt_factory, self.tools())
        self.agent.config.system_prompt = self._system_text


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


def _is_error(message: Any) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")


class _Bridge:
    """What ``ctx`` delegates to: the session's actions, by name."""

    def __init__(self, session: AgentSession) -> None:
        self._s = session

    def ctx_model(self) -> Model | None:
        return self._s.model

    def ctx_session_view(self) -> Any:
        return self._s.session

    def ctx_abort(self) -> None:
        self._s.agent.abort()

    def ctx_is_idle(self) -> bool:
        return not self._s.is_streaming

    def ctx_call(self, action: str, *args: Any, **kwargs: Any) -> Any:
        handler = getattr(self, f"_do_{action}", None)
        if handler is None:
            raise NotImplementedError(f"ctx.{action} is not available in this session")
        return handler(*args, **kwargs)

    def _do_set_active_tools(self, names: list[str]) -> None:
        self._s.set_active_tools(names)

    def _do_get_active_tools(self) -> list[str]:
        return self._s.active_tool_names()

    def _do_get_all_tools(self) -> list[Tool]:
        return list(self._s.host.tools)

    def _do_register_tool(self, tool: Tool, replaces: str | None = None) -> None:
        if self._s.host.tools.add(tool, "runtime", replaces=replaces):
            self._s.set_active_tools([*self._s.active_tool_names(), tool.name])

    def _do_send_message(self, message: Any, deliver_as: str = "steer", trigger_turn: bool = False) -> None:
        """pi's ``sendMessage``: queued while running; for the next prompt; a run of its own; or just stored."""
        s = self._s
        message = _user(message, None) if isinstance(message, str) else message
        if deliver_as == "nextTurn":
            s._next_turn.append(message)
        elif s.is_streaming:
            (s.agent.follow_up if deliver_as == "followUp" else s.agent.steer)(message)
            s._queue_changed()
        elif trigger_turn:
            s._background(s._run(lambda: s.agent.prompt([message])))
        else:
            s.agent.messages.append(message)
            s._persist(message)

    def _do_set_model(self, model: Any) -> bool:
        s = self._s
        if isinstance(model, str):
            registry = getattr(s, "models", None)
            try:
                model = registry.resolve(model=model) if registry is not None else None
            except LookupError:
                return False
        if model is None:
            return False
        s._background(s.set_model(model))
        return True

    def _do_append_entry(self, custom_type: str, data: Any = None) -> str:
        return self._s.session.append_custom_entry(custom_type, data)

    def _do_append_custom_message(self, custom_type: str, content: Any, display: bool = True,
                                  details: Any = None) -> str:
        return self._s.session.append_custom_message_entry(custom_type, content, display, details)

    def _do_append_context_edit(self, target_id: str, replacement: Any) -> str:
        return self._s.session.append_context_edit(target_id, replacement)

    def _do_set_session_name(self, name: str) -> None:
        self._s.session.append_session_info(name)

    async def _do_exec(self, command: str, args: list[str], timeout: float | None = None,
                       cwd: Path | None = None) -> Any:
        from ..toolkit.process import run_process

        return await run_process([command, *args], cwd=cwd or self._s.cwd, timeout=timeout,
                                 env={**os.environ, **self._s._process_env()})


__all__ = ["AgentSession", "RetrySettings", "SessionBusyError"]
