"""Session-level events: what the runtime adds to the agent's event stream (not hooks).

Subscribers (JSON mode, RPC mode, SDK hosts) receive these alongside the agent events of
``pi_core.events``; the shapes follow pi 1.6's event stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentSettledEvent:
    """pi will not continue on its own: retries, compaction and follow-ups are done."""

    aborted: bool = False
    type: str = "agent_settled"


@dataclass
class QueueUpdateEvent:
    """The queued input changed: the texts of the ``steering`` messages (delivered after the current tool
    batch) and of the ``follow_up`` messages (delivered when the run would end), in order."""

    steering: list[str] = field(default_factory=list)
    follow_up: list[str] = field(default_factory=list)
    type: str = "queue_update"


@dataclass
class AutoRetryStartEvent:
    """A request failed transiently and is retried automatically: this is ``attempt`` of at most
    ``max_attempts``, sent after ``delay_ms``; ``error_message`` is the failure being retried."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: str = "auto_retry_start"


@dataclass
class AutoRetryEndEvent:
    """Automatic retries are over: ``success`` after ``attempt`` attempts, else ``final_error`` (also
    ``Retry cancelled`` when the wait was cancelled, as in pi)."""

    success: bool
    attempt: int
    final_error: str | None = None
    type: str = "auto_retry_end"


@dataclass
class SummarizationRetryScheduledEvent:
    """A compaction or branch-summary request failed transiently; another attempt follows ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: str = "summarization_retry_scheduled"


@dataclass
class SummarizationRetryAttemptStartEvent:
    """The retried summarization request starts. ``source``: ``compaction`` (with its ``reason``) or
    ``branchSummary``."""

    source: str
    reason: str | None = None
    type: str = "summarization_retry_attempt_start"


@dataclass
class SummarizationRetryFinishedEvent:
    """The retries of one summarization request are over (succeeded, exhausted or aborted)."""

    type: str = "summarization_retry_finished"


@dataclass
class CompactionStartEvent:
    """A compaction started; ``reason`` is ``manual``, ``threshold`` or ``overflow``."""

    reason: str = "manual"
    type: str = "compaction_start"


@dataclass
class CompactionEndEvent:
    """A compaction ended: ``result`` (a :class:`CompactionResult`) on success, else ``aborted`` or
    ``error_message``; ``will_retry`` is true when the request that overflowed is sent again now."""

    reason: str = "manual"
    result: Any = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: str = "compaction_end"


@dataclass
class EntryAppendedEvent:
    """An entry that is not a message (a ``context_edit``, a label...) was appended to the session."""

    entry: dict[str, Any]
    type: str = "entry_appended"


@dataclass
class ThinkingLevelChangedEvent:
    """The session's thinking level changed (the level in effect, after clamping to the model)."""

    level: str
    type: str = "thinking_level_changed"


@dataclass
class SessionInfoChangedEvent:
    """The session's display name changed; ``name`` is the stored (normalised) name."""

    name: str | None = None
    type: str = "session_info_changed"


@dataclass
class BashExecutionUpdateEvent:
    id: str
    delta: str
    type: str = "bash_execution_update"


__all__ = [
    "AgentSettledEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "BashExecutionUpdateEvent",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "EntryAppendedEvent",
    "QueueUpdateEvent",
    "SessionInfoChangedEvent",
    "SummarizationRetryAttemptStartEvent",
    "SummarizationRetryFinishedEvent",
    "SummarizationRetryScheduledEvent",
    "ThinkingLevelChangedEvent",
]
