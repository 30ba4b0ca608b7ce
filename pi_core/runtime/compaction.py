"""Compaction and tree navigation for a running ``AgentSession``: triggers, hooks, the model call.

Three triggers compact: the user (``/compact``, RPC ``compact``, the SDK), the threshold (the context
is larger than the model's window minus ``compaction.reserveTokens``: checked after a run, and before
each request inside a run so a long tool loop is compacted before it overflows) and an overflow (the
provider refused the request as too long, or cut the answer short for lack of room: the failed answer
is hidden with a ``context_edit``, the session compacts and the turn is retried once). Plugins may
cancel a compaction or supply its summary (``session_before_compact``). Nothing is written unless the
whole compaction succeeds.

:class:`Compactor` owns the state (the switch, whether a compaction runs, its abort controller, the
once-per-prompt overflow recovery); what it needs of the session is declared by :class:`CompactionHost`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..ai.abort import AbortController, AbortSignal
from ..ai.overflow import is_context_overflow
from ..ai.types import AssistantMessage, Context
from ..events import (
    Cancel,
    CompactionOverride,
    SessionBeforeCompactEvent,
    SessionBeforeTreeEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionTreeEvent,
    TreeOverride,
)
from ..session.branch_summary import (
    EMPTY_BRANCH,
    BranchPreparation,
    abandoned_entries,
    branch_summary_request,
    select_messages,
    stored_branch_summary,
)
from ..session.compaction import (
    NO_HISTORY,
    SPLIT_JOIN,
    CompactionPreparation,
    CompactionSettings,
    FileOps,
    conversation_chunks,
    estimate_context_tokens,
    estimate_projected_tokens,
    estimate_tokens,
    fit_conversation,
    js_len,
    last_usage_index,
    prepare_compaction,
    should_compact,
    summary_request,
    turn_prefix_request,
    window_entries,
    with_file_lists,
)
from ..session.ids import iso_to_ms
from ..session.raw import raw_text
from .events import (
    CompactionEndEvent,
    CompactionStartEvent,
    SummarizationRetryAttemptStartEvent,
    SummarizationRetryFinishedEvent,
    SummarizationRetryScheduledEvent,
)

if TYPE_CHECKING:
    from ..ai.retry import RetryPolicy
    from ..ai.types import Model
    from ..session.manager import SessionManager
    from .settings import Settings

Reason = Literal["manual", "threshold", "overflow"]
RECOVERY_FAILED = ("Context overflow recovery failed after one compact-and-retry attempt. Reduce the context or "
                   "switch to a model with a larger context window.")


class CompactionError(Exception):
    """A compaction (or branch summary) could not be made; the session is unchanged."""

    def __init__(self, message: str, *, aborted: bool = False) -> None:
        super().__init__(message)
        self.aborted = aborted


@dataclass
class CompactionResult:
    """What a compaction produced (``compaction_end``'s ``result`` and the RPC ``compact`` answer)."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    estimated_tokens_after: int | None
    usage: dict[str, Any] | None
    details: Any
    entry_id: str
    from_plugin: bool = False

    def to_json(self) -> dict[str, Any]:
        data = {"summary": self.summary, "firstKeptEntryId": self.first_kept_entry_id,
                "tokensBefore": self.tokens_before, "estimatedTokensAfter": self.estimated_tokens_after,
                "usage": self.usage, "details": self.details}
        return {k: v for k, v in data.items() if v is not None}


class CompactionHost(Protocol):
    """What compaction and tree navigation use of the session."""

    session: SessionManager
    settings: Settings

    @property
    def model(self) -> Model: ...
    @property
    def thinking_level(self) -> str: ...
    @property
    def messages(self) -> list[Any]: ...
    @property
    def retry(self) -> RetryPolicy: ...
    @property
    def last_run_aborted(self) -> bool: ...

    async def emit(self, event: Any) -> None:
        """Send a session event to subscribers."""

    async def call_hook(self, hook: str, event: Any) -> Any:
        """Dispatch a plugin hook with the session's ``ctx``; returns the event."""

    def reload_transcript(self) -> None:
        """Rebuild the model's view after the session file changed (a compaction, a tree move)."""

    def entry_id_of(self, message: Any) -> str | None:
        """The session entry a message was stored as (``None``: not stored by this session)."""

    async def hide_failed(self, message: Any) -> None:
        """Keep a failed answer in the file but out of the model's context."""

    def stream_model(self, model: Model, context: Context, **options: Any) -> AsyncIterator[Any]:
        """Stream a request with the session's provider access."""

    def require_idle(self, what: str) -> None:
        """Raise :class:`~pi_core.SessionBusyError` while a run is in progress."""


def compaction_settings(host: CompactionHost) -> CompactionSettings:
    """The session's ``compaction`` settings for its current model (``modelOverrides`` applied)."""
    configured = host.settings.compaction
    reserve, keep = configured.for_model(host.model.provider, host.model.id)
    return CompactionSettings(configured.enabled, reserve, keep)


class Compactor:
    """One session's compactions and tree moves, and the state they keep between runs.

    :ivar enabled: the session's switch for automatic compaction (RPC ``set_auto_compaction``); automatic
        triggers also need the ``compaction.enabled`` setting.
    :ivar is_compacting: a compaction or a branch summary is running.
    """

    def __init__(self, host: CompactionHost) -> None:
        self._host = host
        self.enabled = True
        self.is_compacting = False
        self._controller: AbortController | None = None
        self._overflow_recovered = False
        self._blocked = False  # a failed pre-request compaction is not retried in the same run

    @property
    def auto(self) -> bool:
        return self.enabled and compaction_settings(self._host).enabled

    def start_run(self) -> None:
        self._overflow_recovered = False
        self._blocked = False

    def answer_succeeded(self) -> None:
        """A good answer allows another overflow recovery."""
        self._overflow_recovered = False

    def abort(self, reason: str = "aborted by the user") -> None:
        if self._controller is not None:
            self._controller.abort(reason)

    # -- compaction ------------------------------------------------------------------------------

    async def compact(self, reason: Reason = "manual", custom_instructions: str | None = None, *,
                      will_retry: bool = False) -> CompactionResult | None:
        """Compact the current branch.

        Returns ``None`` when a plugin cancelled, or (automatic triggers only, without any event) when
        nothing can be compacted. Raises :class:`CompactionError` when the compaction failed or was aborted.
        """
        host = self._host
        path = host.session.get_raw_branch()
        settings = compaction_settings(host)
        preparation = prepare_compaction(path, settings) if reason != "manual" else None
        if reason != "manual" and preparation is None:
            return None
        controller = self._begin()
        await host.emit(CompactionStartEvent(reason))
        try:
            if preparation is None:
                preparation = _prepare_manual(path, settings)
            result = await _compact(host, preparation, path, reason, custom_instructions, will_retry, controller)
        except Exception as exc:
            aborted = controller.signal.aborted or getattr(exc, "aborted", False)
            self._end(controller)
            message = None if aborted else _failure(reason, exc)
            await host.call_hook("session_compact_failed", SessionCompactFailedEvent(
                reason, message, aborted, will_retry, bool(getattr(exc, "from_plugin", False))))
            await host.emit(CompactionEndEvent(reason, None, aborted, False, message))
            if isinstance(exc, CompactionError) and exc.aborted == aborted:
                raise
            raise CompactionError(str(exc), aborted=aborted) from exc
        self._end(controller)
        await host.emit(CompactionEndEvent(reason, result, result is None, will_retry and result is not None))
        return result

    def _begin(self) -> AbortController:
        controller = self._controller = AbortController()
        self.is_compacting = True
        return controller

    def _end(self, controller: AbortController) -> None:
        # Listeners of compaction_end may start the next prompt: the session is idle before they hear of it.
        if self._controller is controller:
            self._controller = None
        self.is_compacting = False

    # -- automatic triggers ------------------------------------------------------------------------

    def will_recover_overflow(self, message: Any) -> bool:
        """Will the run compact and retry after ``message`` (``agent_end``'s ``willRetry``)?"""
        return self.auto and not self._overflow_recovered and overflow_action(self._host, message) == "retry"

    async def recover_overflow(self) -> bool:
        """After a run ending in an overflow: hide the failed answer, compact and say whether to retry.

        Only once per prompt (a successful answer allows it again); a second overflow ends the run with the
        provider's error and a ``compaction_end`` saying that recovery failed.
        """
        host = self._host
        last = host.messages[-1] if host.messages else None
        if not self.auto or overflow_action(host, last) != "retry":
            return False
        if self._overflow_recovered:
            await host.emit(CompactionEndEvent("overflow", None, False, False, RECOVERY_FAILED))
            return False
        self._overflow_recovered = True
        await host.hide_failed(last)
        try:
            result = await self.compact("overflow", will_retry=True)
        except CompactionError:
            result = None
        if result is None:
            if last not in host.messages:
                host.messages.append(last)  # the run ends with the provider's error, as without recovery
            return False
        messages = host.messages
        return bool(messages) and not isinstance(messages[-1], AssistantMessage)

    async def compact_after_run(self) -> None:
        """The check after a run: a successful answer over the window compacts (no retry); otherwise the
        threshold decides. Failures are reported by ``compaction_end`` and leave the session as it was."""
        host = self._host
        if not self.auto or host.last_run_aborted or not host.messages:
            return
        action = overflow_action(host, host.messages[-1])
        reason: Reason | None = "overflow" if action == "compact" else None
        if action is None and over_threshold(host):
            reason = "threshold"
        if reason is None:
            return
        try:
            await self.compact(reason)
        except CompactionError:
            pass

    async def compact_before_request(self, conversation: list[Any]) -> list[Any]:
        """Before each model request: compact first when the context is already over the threshold, so a
        long run is not cut off by an overflow; returns the conversation to send."""
        host = self._host
        if not self.auto or self.is_compacting or self._blocked:
            return conversation
        context = host.session.build_session_context()
        tokens = estimate_projected_tokens(context.raw_messages, context.source_ids, host.session.get_raw_branch())
        if not should_compact(tokens, host.model.context_window, compaction_settings(host)):
            return conversation
        try:
            result = await self.compact("threshold")
        except CompactionError:
            result = None
        if result is None:
            self._blocked = True  # not again in this run: one failed summary request is enough
            return conversation
        return [m for m in host.messages if getattr(m, "role", None) != "system"]

    # -- tree navigation -----------------------------------------------------------------------------

    async def navigate_tree(self, target_id: str, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> dict[str, Any]:
        """Continue from another entry of the session tree; optionally summarise the branch left.

        A user message (or plugin message) as target moves to just before it and returns its text as
        ``editor_text``, to edit and send again. Returns ``{cancelled, aborted?, editor_text?, summary_entry?}``.
        Files on disk are never touched: only where the conversation continues from changes.
        """
        from .agent_session import SessionBusyError

        host = self._host
        manager = host.session
        host.require_idle("move in the session tree")
        if self.is_compacting:
            raise SessionBusyError("cannot move in the session tree while a compaction is running")
        old_leaf = manager.get_leaf_id()
        if target_id == old_leaf:
            return {"cancelled": False}
        target = manager.get_raw_entry(target_id)
        if target is None:
            raise ValueError(f"no entry {target_id!r} in this session")
        preparation = _branch_preparation(host, target_id, old_leaf, summarize, custom_instructions,
                                          replace_instructions, label)
        controller = self._begin()
        try:
            outcome = await _navigate(host, target, preparation, controller)
        finally:
            self._end(controller)
        if outcome.get("cancelled"):
            return outcome
        summary_entry = outcome.get("summary_entry")
        await host.call_hook("session_tree", SessionTreeEvent(
            manager.get_leaf_id(), old_leaf, summary_entry, outcome.pop("from_plugin")))
        return outcome


def _prepare_manual(path: list[dict[str, Any]], settings: CompactionSettings) -> CompactionPreparation:
    if path and path[-1].get("type") == "compaction":
        raise CompactionError("Already compacted")
    preparation = prepare_compaction(path, settings)
    if preparation is None:
        raise CompactionError("Nothing to compact (session too small)")
    return preparation


def _failure(reason: Reason, exc: Exception) -> str:
    prefix = {"manual": "Compaction failed", "threshold": "Auto-compaction failed",
              "overflow": "Context overflow recovery failed"}[reason]
    return f"{prefix}: {exc}"


async def _compact(host: CompactionHost, preparation: CompactionPreparation, path: list[dict[str, Any]],
                   reason: Reason, custom_instructions: str | None, will_retry: bool,
                   controller: AbortController) -> CompactionResult | None:
    event = SessionBeforeCompactEvent(preparation, path, custom_instructions, reason, will_retry, controller.signal)
    event = await host.call_hook("session_before_compact", event)
    decision = event.decision
    controller.signal.throw_if_aborted()
    if isinstance(decision, Cancel):
        return None
    tokens_before = preparation.tokens_before
    if isinstance(decision, CompactionOverride):
        summary, usage, details = decision.summary, _usage_json(getattr(decision, "usage", None)), decision.details
        first_kept = decision.first_kept_entry_id or preparation.first_kept_entry_id
        tokens_before = getattr(decision, "tokens_before", None) or tokens_before
    else:
        source = SummarySource("compaction", reason)
        summary, usage = await _summarize(host, preparation, custom_instructions, controller, source)
        summary = with_file_lists(summary, preparation.file_ops)
        first_kept, details = preparation.first_kept_entry_id, preparation.file_ops.details()
    controller.signal.throw_if_aborted()
    from_plugin = isinstance(decision, CompactionOverride)
    entry_id = host.session.append_compaction(summary, first_kept, tokens_before, details, from_plugin, usage)
    host.reload_transcript()
    after = sum(estimate_tokens(m) for m in host.session.build_session_context().raw_messages)
    result = CompactionResult(summary, first_kept, tokens_before, after, usage, details, entry_id, from_plugin)
    await host.call_hook("session_compact", SessionCompactEvent(
        host.session.get_raw_entry(entry_id), from_plugin, reason, will_retry))
    return result


def _usage_json(usage: Any) -> dict[str, Any] | None:
    return usage.to_json() if hasattr(usage, "to_json") else usage


async def _summarize(host: CompactionHost, preparation: CompactionPreparation, instructions: str | None,
                     controller: AbortController, source: SummarySource) -> tuple[str, dict[str, Any] | None]:
    history, usage = preparation.previous_summary or NO_HISTORY, None
    if preparation.messages_to_summarize:
        history, usage = await _summarize_history(host, preparation, instructions, controller, source)
    if not preparation.is_split_turn or not preparation.turn_prefix_messages:
        return history, usage
    conversation = fit_conversation(preparation.turn_prefix_messages, _request_budget(host, None))
    request = turn_prefix_request(conversation=conversation, custom_instructions=instructions)
    prefix, prefix_usage = await ask_model(host, request, controller, "Turn prefix summarization", source)
    return history + SPLIT_JOIN + prefix, _add_usage(usage, prefix_usage)


async def _summarize_history(host: CompactionHost, preparation: CompactionPreparation, instructions: str | None,
                             controller: AbortController, source: SummarySource) -> tuple[str, dict[str, Any] | None]:
    """One request when the history fits the model; otherwise one per piece, each updating the summary."""
    running, usage = preparation.previous_summary, None
    for chunk in conversation_chunks(preparation.messages_to_summarize, _request_budget(host, running)):
        request = summary_request(conversation=chunk, previous_summary=running, custom_instructions=instructions)
        running, chunk_usage = await ask_model(host, request, controller, "Summarization", source)
        usage = _add_usage(usage, chunk_usage)
    return running or NO_HISTORY, usage


def _request_budget(host: CompactionHost, previous_summary: str | None) -> int:
    """Tokens of conversation one summarization request may carry: the window less the output reserve,
    the previous summary (or room for a summary that grows) and the instructions."""
    window = host.model.context_window or 128_000
    summary_room = max(4000, js_len(previous_summary or "") // 4)
    return max(1000, window - compaction_settings(host).reserve_tokens - summary_room - 1500)


@dataclass(frozen=True)
class SummarySource:
    """What a summarization request is for, as its retry events report it."""

    source: Literal["compaction", "branchSummary"]
    reason: str | None = None


async def ask_model(host: CompactionHost, context: Context, controller: AbortController,
                    label: str = "Summarization",
                    source: SummarySource = SummarySource("compaction")) -> tuple[str, dict[str, Any]]:
    """One summarization request with the session's model (transient failures retried as the session's
    retry settings say, each retry reported with pi's ``summarization_retry_*`` events); the answer's
    text and usage."""
    model = host.model
    options: dict[str, Any] = {"signal": controller.signal, "cache_retention": "none",
                               "session_id": host.session.session_id}
    if model.reasoning and host.thinking_level != "off":
        options["reasoning"] = host.thinking_level
    attempt = 0
    while True:
        final = await _request(host, context, options)
        if controller.signal.aborted or final.stop_reason == "aborted":
            await _retries_over(host, attempt)
            raise CompactionError(f"{label} was aborted", aborted=True)
        delay = _retry_delay(host, final, attempt + 1)
        if delay is None:
            break
        attempt += 1
        await host.emit(SummarizationRetryScheduledEvent(attempt, host.retry.max_retries, delay,
                                                         final.error_message or "Unknown error"))
        if await _sleep(delay / 1000, controller.signal):
            await _retries_over(host, attempt)
            raise CompactionError(f"{label} was aborted", aborted=True)
        await host.emit(SummarizationRetryAttemptStartEvent(source.source, source.reason))
    await _retries_over(host, attempt)
    if final.stop_reason == "error":
        raise CompactionError(f"{label} failed: {final.error_message or 'unknown error'}")
    if final.stop_reason == "length":
        raise CompactionError(f"{label} failed: the answer hit the output token limit, so the summary is incomplete")
    if final.tool_calls():
        raise CompactionError(f"{label} failed: the model tried to call a tool")
    return "\n".join(b.text for b in final.content if b.type == "text"), final.usage.to_json()


async def _retries_over(host: CompactionHost, attempts: int) -> None:
    if attempts:
        await host.emit(SummarizationRetryFinishedEvent())


async def _request(host: CompactionHost, context: Context, options: dict[str, Any]) -> AssistantMessage:
    final: AssistantMessage | None = None
    async for event in host.stream_model(host.model, context, **options):
        if event.type in ("done", "error"):
            final = event.message
    if final is None:
        return AssistantMessage(stop_reason="error", error_message="the model stream ended without an answer")
    return final


def _retry_delay(host: CompactionHost, message: AssistantMessage, attempt: int) -> int | None:
    policy = host.retry
    if not policy.should_retry(message, attempt):
        return None
    return policy.delay_ms(attempt)


async def _sleep(seconds: float, signal: AbortSignal) -> bool:
    """Wait; True when the signal fired first."""
    try:
        await asyncio.wait_for(signal.wait(), seconds)
        return True
    except TimeoutError:
        return False


def _add_usage(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    if a is None:
        return b
    keys = ("input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens")
    total = {k: a.get(k, 0) + b.get(k, 0) for k in keys if k in a or k in b}
    ca, cb = a.get("cost") or {}, b.get("cost") or {}
    cost: dict[str, Any] = {k: ca.get(k, 0) + cb.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite",
                                                                      "total")}
    # the sum is the provider's own figure only when both parts were (pi's rule)
    cost["totalFromProvider"] = ca.get("totalFromProvider") is True and cb.get("totalFromProvider") is True
    return {**total, "cost": cost}


# -------------------------------------------------------------------------------------------------
# automatic triggers


def _before_latest_compaction(host: CompactionHost, entry_id: str | None, timestamp: int) -> bool:
    """Is a message from before the branch's latest compaction (so that its usage, or its failure,
    describes the context as it was before)? Judged by its entry's place when known, else by time."""
    path = host.session.get_raw_branch()
    latest = next((n for n in range(len(path) - 1, -1, -1) if path[n].get("type") == "compaction"), None)
    if latest is None:
        return False
    if entry_id is not None:
        position = next((n for n in range(len(path) - 1, -1, -1) if path[n].get("id") == entry_id), None)
        if position is not None:
            return position < latest
    at = iso_to_ms(path[latest].get("timestamp"))
    return at is not None and timestamp <= at


def _entry_of(host: CompactionHost, message: Any) -> str | None:
    return host.entry_id_of(message)


def overflow_action(host: CompactionHost, message: Any) -> Literal["retry", "compact"] | None:
    """What an answer's failure calls for: ``retry`` (compact, then run the turn again: the provider
    refused the request as too long, or stopped short for lack of room), ``compact`` (a successful answer
    whose input already exceeded the window) or ``None``."""
    if not isinstance(message, AssistantMessage):
        return None
    model = host.model
    if (message.provider, message.model) != (model.provider, model.id) or \
            _before_latest_compaction(host, _entry_of(host, message), message.timestamp):
        return None  # another model's limits, or a failure the latest compaction already dealt with
    if message.stop_reason == "error":
        return "retry" if is_context_overflow(message) else None
    if message.stop_reason == "length" and not message.tool_calls() and 0 < model.max_tokens and \
            message.usage.output < model.max_tokens:
        return "retry"
    if message.stop_reason == "stop" and is_context_overflow(message, model.context_window):
        return "compact"
    return None


def over_threshold(host: CompactionHost) -> bool:
    """Does the context exceed the window minus the reserve, judged after the last answer as pi 1.6 does?

    A failed answer (or one without usage) is judged by the last successful usage plus estimates — one
    oversized turn that failed must still be compacted; edits since the usage force an estimate.
    """
    last = host.messages[-1] if host.messages else None
    if not isinstance(last, AssistantMessage) or last.stop_reason == "aborted" or \
            _before_latest_compaction(host, _entry_of(host, last), last.timestamp):
        return False
    context = host.session.build_session_context()
    path = host.session.get_raw_branch()
    raw = context.raw_messages
    if any(e.get("type") == "context_edit" for e in window_entries(path)[0]):
        tokens = estimate_projected_tokens(raw, context.source_ids, path)
    elif last.stop_reason == "error" or _usage_of(last) == 0:
        index = last_usage_index(raw)
        if index is not None and _before_latest_compaction(host, context.source_ids[index],
                                                           raw[index].get("timestamp") or 0):
            return False  # the only usage there is describes the context before the compaction
        tokens = estimate_context_tokens(raw)
    else:
        tokens = _usage_of(last)
    return should_compact(tokens, host.model.context_window, compaction_settings(host))


def _usage_of(message: AssistantMessage) -> int:
    usage = message.usage
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _branch_preparation(host: CompactionHost, target_id: str, old_leaf: str | None, summarize: bool,
                        custom_instructions: str | None, replace_instructions: bool,
                        label: str | None) -> BranchPreparation:
    manager = host.session
    entries, ancestor = abandoned_entries(manager.get_raw_branch(), manager.get_raw_branch(target_id)) \
        if old_leaf is not None else ([], None)
    budget = (host.model.context_window or 128_000) - _branch_reserve(host)
    messages, ops = select_messages(entries, max(1, budget))
    return BranchPreparation(target_id, old_leaf, ancestor, entries, messages, ops, summarize,
                             custom_instructions, replace_instructions, label)


async def _navigate(host: CompactionHost, target: dict[str, Any], preparation: BranchPreparation,
                    controller: AbortController) -> dict[str, Any]:
    event = await host.call_hook("session_before_tree",
                                             SessionBeforeTreeEvent(preparation, controller.signal))
    if isinstance(event.decision, Cancel):
        return {"cancelled": True}
    override = event.decision if isinstance(event.decision, TreeOverride) else None
    _apply_override(preparation, override)
    try:
        summary, details, usage, from_plugin = await _branch_summary(host, preparation, override, controller)
    except CompactionError as exc:
        if exc.aborted:
            return {"cancelled": True, "aborted": True}
        raise
    if controller.signal.aborted:
        return {"cancelled": True, "aborted": True}
    manager = host.session
    new_leaf, editor_text = _new_position(target)
    summary_entry = None
    if summary:
        summary_id = manager.branch_with_summary(new_leaf, summary, details, from_plugin, usage)
        summary_entry = manager.get_raw_entry(summary_id)
    elif new_leaf is None:
        manager.reset_leaf()
    else:
        manager.branch(new_leaf)
    if preparation.label:
        manager.append_label_change(summary_entry["id"] if summary_entry else preparation.target_id,
                                    preparation.label)
    host.reload_transcript()
    outcome: dict[str, Any] = {"cancelled": False, "from_plugin": from_plugin}
    if editor_text is not None:
        outcome["editor_text"] = editor_text
    if summary_entry is not None:
        outcome["summary_entry"] = summary_entry
    return outcome


def _apply_override(preparation: BranchPreparation, override: TreeOverride | None) -> None:
    if override is None:
        return
    if override.custom_instructions is not None:
        preparation.custom_instructions = override.custom_instructions
    if override.replace_instructions is not None:
        preparation.replace_instructions = override.replace_instructions
    if override.label is not None:
        preparation.label = override.label


async def _branch_summary(host: CompactionHost, preparation: BranchPreparation, override: TreeOverride | None,
                          controller: AbortController) -> tuple[str | None, Any, Any, bool]:
    """The summary to attach (``None``: none): its text, details, usage and whether a plugin wrote it."""
    if not preparation.user_wants_summary:
        return None, None, None, False
    if override is not None and override.summary:
        return override.summary, override.details, None, True
    if not preparation.entries_to_summarize:
        return None, None, None, False
    ops: FileOps = preparation.file_ops
    if not preparation.messages:
        return EMPTY_BRANCH, ops.details(), None, False
    text, usage = await ask_model(host, branch_summary_request(preparation), controller, "Branch summarization",
                                  SummarySource("branchSummary"))
    return stored_branch_summary(text, ops), ops.details(), usage, False


def _new_position(target: dict[str, Any]) -> tuple[str | None, str | None]:
    """Where the conversation continues: before a user or plugin message (whose text is handed back to
    be edited), else at the target itself."""
    message = target.get("message") if target.get("type") == "message" else None
    if isinstance(message, dict) and message.get("role") == "user":
        return target.get("parentId"), _text(message.get("content"))
    if target.get("type") == "custom_message":
        return target.get("parentId"), _text(target.get("content"))
    return target["id"], None


def _text(content: Any) -> str:
    return raw_text(content)


def _branch_reserve(host: CompactionHost) -> int:
    return host.settings.branch_summary.reserve_tokens


__all__ = [
    "RECOVERY_FAILED",
    "CompactionError",
    "CompactionHost",
    "CompactionResult",
    "Compactor",
    "ask_model",
    "over_threshold",
    "overflow_action",
]
