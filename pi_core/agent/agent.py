"""A stateful agent: the transcript, the model, the tools, the steering and follow-up queues, abort.

``Agent`` runs :func:`run_agent_loop` one prompt at a time and fans its events out to listeners.
It knows nothing about sessions or plugins; ``pi_core.runtime`` wires those in through
:class:`~pi_core.agent.loop.LoopConfig` callables.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal

from ..ai.abort import AbortController, AbortSignal
from ..ai.message_list import MessageList
from ..ai.types import AssistantMessage, Message
from .loop import LoopConfig, run_agent_loop

Listener = Callable[[Any], "Awaitable[None] | None"]
QueueMode = Literal["one-at-a-time", "all"]


class AgentBusyError(RuntimeError):
    """``prompt()`` while a run is active."""


class Agent:
    def __init__(self, config: LoopConfig, messages: list[Any] | None = None) -> None:
        self.config = config
        # A MessageList: a resumed session's stored messages are typed only when somebody reads them.
        self.messages: list[Any] = MessageList(messages or [])
        self.steering: list[Message] = []
        self.follow_ups: list[Message] = []
        self.steering_mode: QueueMode = "one-at-a-time"
        self.follow_up_mode: QueueMode = "one-at-a-time"
        self._listeners: list[Listener] = []
        self._controller: AbortController | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.last_run_aborted = False

    # -- state ---------------------------------------------------------------------------------

    @property
    def is_streaming(self) -> bool:
        return not self._idle.is_set()

    @property
    def signal(self) -> AbortSignal | None:
        """The running run's abort signal (``None`` while idle)."""
        return self._controller.signal if self._controller is not None and self.is_streaming else None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            result = listener(event)
            if result is not None and inspect.isawaitable(result):
                await result

    # -- queues --------------------------------------------------------------------------------

    def steer(self, message: Message) -> None:
        """Deliver ``message`` after the current turn's tool calls finish."""
        self.steering.append(message)

    def follow_up(self, message: Message) -> None:
        """Deliver ``message`` when the run would otherwise end."""
        self.follow_ups.append(message)

    def clear_queues(self) -> tuple[list[Message], list[Message]]:
        steering, follow_ups = self.steering, self.follow_ups
        self.steering, self.follow_ups = [], []
        return steering, follow_ups

    def take_queued(self) -> list[Message]:
        """What a new run should start with: queued steering, else follow-ups (as their modes say).
        Messages queued after a run ended (from its ``agent_end`` handlers) are taken here."""
        return self._drain(self.steering, self.steering_mode) or self._drain(self.follow_ups, self.follow_up_mode)

    def _drain(self, queue: list[Message], mode: QueueMode) -> list[Message]:
        if not queue:
            return []
        taken = list(queue) if mode == "all" else [queue[0]]
        del queue[: len(taken)]
        return taken

    # -- running -------------------------------------------------------------------------------

    async def prompt(self, messages: list[Any]) -> list[Any]:
        """Run one prompt (its messages first) to the end; returns the messages the run added."""
        if self.is_streaming:
            raise AgentBusyError("the agent is already running; steer or queue a follow-up instead")
        return await self._run(messages)

    async def continue_(self, *, force: bool = False) -> list[Any]:
        """Run again from the current transcript (after a retry or a compaction). ``force``: also after
        an answer (a plugin asked for one more request)."""
        if self.is_streaming:
            raise AgentBusyError("the agent is already running")
        if not self.messages or (isinstance(self.messages[-1], AssistantMessage) and not force):
            raise ValueError("nothing to continue: the transcript is empty or ends with an answer")
        return await self._run([])

    def abort(self, reason: str | None = None) -> None:
        if self._controller is not None:
            self._controller.abort(reason or "aborted")

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    async def _run(self, prompts: list[Any]) -> list[Any]:
        self._controller = AbortController()
        self._idle.clear()
        config = replace(self.config, get_steering=lambda: self._drain(self.steering, self.steering_mode),
                         get_follow_up=lambda: self._drain(self.follow_ups, self.follow_up_mode))
        signal = self._controller.signal
        try:
            return await run_agent_loop(prompts, self.messages, config, self.emit, signal)
        except Exception as exc:  # a bug below must still end the run with a visible, stored message
            return await self._fail(exc, aborted=signal.aborted)
        finally:
            self.last_run_aborted = signal.aborted
            self._idle.set()

    async def _fail(self, exc: Exception, *, aborted: bool) -> list[Any]:
        from ..events import AgentEndEvent, MessageEndEvent, MessageStartEvent

        model = self.config.model
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                   stop_reason="aborted" if aborted else "error",
                                   error_message=f"{type(exc).__name__}: {exc}")
        self.messages.append(message)
        await self.emit(MessageStartEvent(message))
        await self.emit(MessageEndEvent(message))
        await self.emit(AgentEndEvent([message]))
        return [message]


__all__ = ["Agent", "AgentBusyError", "QueueMode"]
