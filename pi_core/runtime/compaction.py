"""Compaction and tree navigation for a running ``AgentSession``: triggers, hooks, the model call.

Three triggers compact: the user (``/compact``, RPC ``compact``, the SDK), the threshold (the context
is larger than the model's window minus ``compaction.reserveTokens``: checked after a run, and before
each request inside a run so a long tool loop is compacted before it overflows) and an overflow (the
provider refused the request as too long, or cut the answer short for lack of room: the failed answer
is hidden with a ``context_edit``, the session compacts and the turn is retried once). Plugins may
cancel a compaction or supply its summary (``session_before_compact``). Nothing is written unless the
whole compaction succeeds.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..ai.abort import AbortController, AbortSignal
from ..ai.overflow import is_context_overflow
from ..ai.types import AssistantMessage, Context
from ..events import (
    Cancel,
    CompactionOverride,
    SessionBeforeCompactEvent,
    SessionBeforeTreeEvent,
    SessionCompactEvent,
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
from .events import CompactionEndEvent, CompactionStartEvent

if TYPE_CHECKING:
    from .session import AgentSession

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


def compaction_settings(session: AgentSession) -> CompactionSettings:
    """The session's ``compaction`` settings (pi's defaults without a settings object)."""
    configured = getattr(getattr(session, "settings", None), "compaction", None)
    if configured is None:
        return CompactionSettings()
    return CompactionSettings(configured.enabled, configured.reserve_tokens, configured.keep_recent_tokens)


def auto_compaction_on(session: AgentSession) -> bool:
    """Automatic triggers need both the setting and the session's switch (RPC ``set_auto_compaction``)."""
    return session.auto_compaction_enabled and compaction_settings(session).enabled


# -------------------------------------------------------------------------------------------------
# compaction


async def compact(session: AgentSession, reason: Reason = "manual", custom_instructions: str | None = None, *,
                  will_retry: bool = False) -> CompactionResult | None:
    """Compact the current branch.

    Returns ``None`` when a plugin cancelled, or (automatic triggers only, without any event) when
    nothing can be compacted. Raises :class:`CompactionError` when the compaction failed or was aborted.
    """
    path = session.session.get_raw_branch()
    settings = compaction_settings(session)
    preparation = prepare_compaction(path, settings) if reason != "manual" else None
    if reason != "manual" and preparation is None:
        return None
    controller = session._compaction = AbortController()
    session.is_compacting = True
    await session._emit(CompactionStartEvent(reason))
    try:
        if preparation is None:
            preparation = _prepare_manual(path, settings)
        result = await _compact(session, preparation, path, reason, custom_instructions, will_retry, controller)
    except Exception as exc:
        aborted = controller.signal.aborted or getattr(exc, "aborted", False)
        _done_compacting(session, controller)
        await session._emit(CompactionEndEvent(reason, None, aborted, False,
                                               None if aborted else _failure(reason, exc)))
        if isinstance(exc, CompactionError) and exc.aborted == aborted:
            raise
        raise CompactionError(str(exc), aborted=aborted) from exc
    _done_compacting(session, controller)
    await session._emit(CompactionEndEvent(reason, result, result is None, will_retry and result is not None))
    return result


def _done_compacting(session: AgentSession, controller: AbortController) -> None:
    # Listeners of compaction_end may start the next prompt: the session is idle before they hear of it.
    if session._compaction is controller:
        session._compaction = None
    session.is_compacting = False


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


async def _compact(session: AgentSession, preparation: CompactionPreparation, path: list[dict[str, Any]],
                   reason: Reason, custom_instructions: str | None, will_retry: bool,
                   controller: AbortController) -> CompactionResult | None:
    event = SessionBeforeCompactEvent(preparation, path, custom_instructions, reason, will_retry, controller.signal)
    event = await session.host.dispatch.call("session_before_compact", event, session.ctx)
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
        summary, usage = await _summarize(session, preparation, custom_instructions, controller)
        summary = with_file_lists(summary, preparation.file_ops)
        first_kept, details = preparation.first_kept_entry_id, preparation.file_ops.details()
    controller.signal.throw_if_aborted()
    from_plugin = isinstance(decision, CompactionOverride)
    entry_id = session.session.append_compaction(summary, first_kept, tokens_before, details, from_plugin, usage)
    session._load_transcript()
    after = sum(estimate_tokens(m) for m in session.session.build_session_context().raw_messages)
    result = CompactionResult(summary, first_kept, tokens_before, after, usage, details, entry_id, from_plugin)
    await session.host.dispatch.call("session_compact", SessionCompactEvent(
        session.session.get_raw_entry(entry_id), from_plugin, reason, will_retry), session.ctx)
    return result


def _usage_json(usage: Any) -> dict[str, Any] | None:
    return usage.to_json() if hasattr(usage, "to_json") else usage


async def _summarize(session: AgentSession, preparation: CompactionPreparation, instructions: str | None,
                     controller: AbortController) -> tuple[str, dict[str, Any] | None]:
    history, usage = preparation.previous_summary or NO_HISTORY, None
    if preparation.messages_to_summarize:
        history, usage = await _summarize_history(session, preparation, instructions, controller)
    if not preparation.is_split_turn or not preparation.turn_prefix_messages:
        return history, usage
    conversation = fit_conversation(preparation.turn_prefix_messages, _request_budget(session, None))
    request = turn_prefix_request(conversation=conversation, custom_instructions=instructions)
    prefix, prefix_usage = await ask_model(session, request, controller, "Turn prefix summarization")
    return history + SPLIT_JOIN + prefix, _add_usage(usage, prefix_usage)


async def _summarize_history(session: AgentSession, preparation: CompactionPreparation, instructions: str | None,
                             controller: AbortController) -> tuple[str, dict[str, Any] | None]:
    """One request when the history fits the model; otherwise one per piece, each updating the summary."""
    running, usage = preparation.previous_summary, None
    for chunk in conversation_chunks(preparation.messages_to_summarize, _request_budget(session, running)):
        request = summary_request(conversation=chunk, previous_summary=running, custom_instructions=instructions)
        running, chunk_usage = await ask_model(session, request, controller, "Summarization")
        usage = _add_usage(usage, chunk_usage)
    return running or NO_HISTORY, usage


def _request_budget(session: AgentSession, previous_summary: str | None) -> int:
    """Tokens of conversation one summarization request may carry: the window less the output reserve,
    the previous summary (or room for a summary that grows) and the instructions."""
    window = session.model.context_window or 128_000
    summary_room = max(4000, js_len(previous_summary or "") // 4)
    return max(1000, window - compaction_settings(session).reserve_tokens - summary_room - 1500)


async def ask_model(session: AgentSession, context: Context, controller: AbortController,
                    label: str = "Summarization") -> tuple[str, dict[str, Any]]:
    """One summarization request with the session's model (transient failures retried as the session's
    retry settings say); the answer's text and usage."""
    model = session.model
    options: dict[str, Any] = {"signal": controller.signal, "cache_retention": "none",
                               "session_id": session.session.session_id}
    if model.reasoning and session.thinking_level != "off":
        options["reasoning"] = session.thinking_level
    attempt = 0
    while True:
        final = await _request(session, context, options)
        if controller.signal.aborted or final.stop_reason == "aborted":
            raise CompactionError(f"{label} was aborted", aborted=True)
        delay = _retry_delay(session, final, attempt + 1)
        if delay is None:
            break
        attempt += 1
        if await _sleep(delay / 1000, controller.signal):
            raise CompactionError(f"{label} was aborted", aborted=True)
    if final.stop_reason == "error":
        raise CompactionError(f"{label} failed: {final.error_message or 'unknown error'}")
    if final.stop_reason == "length":
        raise CompactionError(f"{label} failed: the answer hit the output token limit, so the summary is incomplete")
    if final.tool_calls():
        raise CompactionError(f"{label} failed: the model tried to call a tool")
    return "\n".join(b.text for b in final.content if b.type == "text"), final.usage.to_json()


async def _request(session: AgentSession, context: Context, options: dict[str, Any]) -> AssistantMessage:
    final: AssistantMessage | None = None
    async for event in session._stream(session.model, context, **options):
        if event.type in ("done", "error"):
            final = event.message
    if final is None:
        return AssistantMessage(stop_reason="error", error_message="the model stream ended without an answer")
    return final


def _retry_delay(session: AgentSession, message: AssistantMessage, attempt: int) -> int | None:
    from ..ai.retry import RetryPolicy

    retry = session.retry
    policy = RetryPolicy(retry.max_retries, retry.base_delay_ms, retry.max_delay_ms, retry.enabled)
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
    cost = {k: ca.get(k, 0) + cb.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite", "total")}
    return {**total, "cost": cost}


# -------------------------------------------------------------------------------------------------
# automatic triggers


def _before_latest_compaction(session: AgentSession, entry_id: str | None, timestamp: int) -> bool:
    """Is a message from before the branch's latest compaction (so that its usage, or its failure,
    describes the context as it was before)? Judged by its entry's place when known, else by time."""
    path = session.session.get_raw_branch()
    latest = next((n for n in range(len(path) - 1, -1, -1) if path[n].get("type") == "compaction"), None)
    if latest is None:
        return False
    if entry_id is not None:
        position = next((n for n in range(len(path) - 1, -1, -1) if path[n].get("id") == entry_id), None)
        if position is not None:
            return position < latest
    at = iso_to_ms(path[latest].get("timestamp"))
    return at is not None and timestamp <= at


def _entry_of(session: AgentSession, message: Any) -> str | None:
    return session._entry_ids.get(id(message))


def overflow_action(session: AgentSession, message: Any) -> Literal["retry", "compact"] | None:
    """What an answer's failure calls for: ``retry`` (compact, then run the turn again: the provider
    refused the request as too long, or stopped short for lack of room), ``compact`` (a successful answer
    whose input already exceeded the window) or ``None``."""
    if not isinstance(message, AssistantMessage):
        return None
    model = session.model
    if (message.provider, message.model) != (model.provider, model.id) or \
            _before_latest_compaction(session, _entry_of(session, message), message.timestamp):
        return None  # another model's limits, or a failure the latest compaction already dealt with
    if message.stop_reason == "error":
        return "retry" if is_context_overflow(message) else None
    if message.stop_reason == "length" and not message.tool_calls() and 0 < model.max_tokens and \
            message.usage.output < model.max_tokens:
        return "retry"
    if message.stop_reason == "stop" and is_context_overflow(message, model.context_window):
        return "compact"
    return None


def will_recover_overflow(session: AgentSession, message: Any) -> bool:
    """Will the run compact and retry after ``message`` (``agent_end``'s ``willRetry``)?"""
    return (auto_compaction_on(session) and not session._overflow_recovered
            and overflow_action(session, message) == "retry")


async def recover_overflow(session: AgentSession) -> bool:
    """After a run ending in an overflow: hide the failed answer, compact and say whether to retry.

    Only once per prompt (a successful answer allows it again); a second overflow ends the run with the
    provider's error and a ``compaction_end`` saying that recovery failed.
    """
    last = session.agent.messages[-1] if session.agent.messages else None
    if not auto_compaction_on(session) or overflow_action(session, last) != "retry":
        return False
    if session._overflow_recovered:
        await session._emit(CompactionEndEvent("overflow", None, False, False, RECOVERY_FAILED))
        return False
    session._overflow_recovered = True
    await session._hide_failed(last)
    try:
        result = await compact(session, "overflow", will_retry=True)
    except CompactionError:
        result = None
    if result is None:
        if last not in session.agent.messages:
            session.agent.messages.append(last)  # the run ends with the provider's error, as without recovery
        return False
    messages = session.agent.messages
    return bool(messages) and not isinstance(messages[-1], AssistantMessage)


async def compact_after_run(session: AgentSession) -> None:
    """The check after a run: a successful answer over the window compacts (no retry); otherwise the
    threshold decides. Failures are reported by ``compaction_end`` and leave the session as it was."""
    if not auto_compaction_on(session) or session.agent.last_run_aborted or not session.agent.messages:
        return
    last = session.agent.messages[-1]
    action = overflow_action(session, last)
    reason: Reason | None = "overflow" if action == "compact" else None
    if action is None and over_threshold(session):
        reason = "threshold"
    if reason is None:
        return
    try:
        await compact(session, reason)
    except CompactionError:
        pass


def over_threshold(session: AgentSession) -> bool:
    """Does the context exceed the window minus the reserve, judged after the last answer as pi 1.6 does?

    A failed answer (or one without usage) is judged by the last successful usage plus estimates — one
    oversized turn that failed must still be compacted; edits since the usage force an estimate.
    """
    last = session.messages[-1] if session.messages else None
    if not isinstance(last, AssistantMessage) or last.stop_reason == "aborted" or \
            _before_latest_compaction(session, _entry_of(session, last), last.timestamp):
        return False
    context = session.session.build_session_context()
    path = session.session.get_raw_branch()
    raw = context.raw_messages
    if any(e.get("type") == "context_edit" for e in window_entries(path)[0]):
        tokens = estimate_projected_tokens(raw, context.source_ids, path)
    elif last.stop_reason == "error" or _usage_of(last) == 0:
        index = last_usage_index(raw)
        if index is not None and _before_latest_compaction(session, context.source_ids[index],
                                                           raw[index].get("timestamp") or 0):
            return False  # the only usage there is describes the context before the compaction
        tokens = estimate_context_tokens(raw)
    else:
        tokens = _usage_of(last)
    return should_compact(tokens, session.model.context_window, compaction_settings(session))


def _usage_of(message: AssistantMessage) -> int:
    usage = message.usage
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


async def compact_before_request(session: AgentSession, conversation: list[Any]) -> list[Any]:
    """Before each model request: compact first when the context is already over the threshold, so a
    long run is not cut off by an overflow; returns the conversation to send."""
    if not auto_compaction_on(session) or session.is_compacting or session._compaction_blocked:
        return conversation
    context = session.session.build_session_context()
    tokens = estimate_projected_tokens(context.raw_messages, context.source_ids, session.session.get_raw_branch())
    if not should_compact(tokens, session.model.context_window, compaction_settings(session)):
        return conversation
    try:
        result = await compact(session, "threshold")
    except CompactionError:
        result = None
    if result is None:
        session._compaction_blocked = True  # not again in this run: one failed summary request is enough
        return conversation
    return [m for m in session.agent.messages if getattr(m, "role", None) != "system"]


# -------------------------------------------------------------------------------------------------
# tree navigation


async def navigate_tree(session: AgentSession, target_id: str, *, summarize: bool = False,
                        custom_instructions: str | None = None, replace_instructions: bool = False,
                        label: str | None = None) -> dict[str, Any]:
    """Continue from another entry of the session tree; optionally summarise the branch left.

    A user message (or plugin message) as target moves to just before it and returns its text as
    ``editor_text``, to edit and send again. Returns ``{cancelled, aborted?, editor_text?, summary_entry?}``.
    Files on disk are never touched: only where the conversation continues from changes.
    """
    from .session import SessionBusyError

    manager = session.session
    session._require_idle("move in the session tree")
    if session.is_compacting:
        raise SessionBusyError("cannot move in the session tree while a compaction is running")
    old_leaf = manager.get_leaf_id()
    if target_id == old_leaf:
        return {"cancelled": False}
    target = manager.get_raw_entry(target_id)
    if target is None:
        raise ValueError(f"no entry {target_id!r} in this session")
    preparation = _branch_preparation(session, target_id, old_leaf, summarize, custom_instructions,
                                      replace_instructions, label)
    controller = session._compaction = AbortController()
    session.is_compacting = True
    try:
        outcome = await _navigate(session, target, preparation, controller)
    finally:
        _done_compacting(session, controller)
    if outcome.get("cancelled"):
        return outcome
    summary_entry = outcome.get("summary_entry")
    await session.host.dispatch.call("session_tree", SessionTreeEvent(
        manager.get_leaf_id(), old_leaf, summary_entry, outcome.pop("from_plugin")), session.ctx)
    return outcome


def _branch_preparation(session: AgentSession, target_id: str, old_leaf: str | None, summarize: bool,
                        custom_instructions: str | None, replace_instructions: bool,
                        label: str | None) -> BranchPreparation:
    manager = session.session
    entries, ancestor = abandoned_entries(manager.get_raw_branch(), manager.get_raw_branch(target_id)) \
        if old_leaf is not None else ([], None)
    budget = (session.model.context_window or 128_000) - _branch_reserve(session)
    messages, ops = select_messages(entries, max(1, budget))
    return BranchPreparation(target_id, old_leaf, ancestor, entries, messages, ops, summarize,
                             custom_instructions, replace_instructions, label)


async def _navigate(session: AgentSession, target: dict[str, Any], preparation: BranchPreparation,
                    controller: AbortController) -> dict[str, Any]:
    event = await session.host.dispatch.call("session_before_tree",
                                             SessionBeforeTreeEvent(preparation, controller.signal), session.ctx)
    if isinstance(event.decision, Cancel):
        return {"cancelled": True}
    override = event.decision if isinstance(event.decision, TreeOverride) else None
    _apply_override(preparation, override)
    try:
        summary, details, usage, from_plugin = await _branch_summary(session, preparation, override, controller)
    except CompactionError as exc:
        if exc.aborted:
            return {"cancelled": True, "aborted": True}
        raise
    if controller.signal.aborted:
        return {"cancelled": True, "aborted": True}
    manager = session.session
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
    session._load_transcript()
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


async def _branch_summary(session: AgentSession, preparation: BranchPreparation, override: TreeOverride | None,
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
    text, usage = await ask_model(session, branch_summary_request(preparation), controller, "Branch summarization")
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
    if isinstance(content, str):
        return content
    return "".join(b.get("text") or "" for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _branch_reserve(session: AgentSession) -> int:
    configured = getattr(getattr(session, "settings", None), "branch_summary", None)
    return getattr(configured, "reserve_tokens", 16384)


__all__ = [
    "CompactionError",
    "CompactionResult",
    "ask_model",
    "compact",
    "compact_after_run",
    "compact_before_request",
    "navigate_tree",
    "over_threshold",
    "overflow_action",
    "recover_overflow",
    "will_recover_overflow",
]
