"""Compaction and tree navigation for a running ``AgentSession``: triggers, hooks, the model call.

Three triggers compact: the user (``/compact``, RPC ``compact``, the SDK), the threshold (after a run,
when the context is larger than the window minus the reserve) and an overflow (the provider refused
the request as too long: the failed answer is hidden with a ``context_edit``, the session compacts and
the turn is retried once). Plugins may cancel a compaction or supply its summary
(``session_before_compact``). Nothing is written unless the whole compaction succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..ai.abort import AbortController
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
    estimate_context_tokens,
    estimate_tokens,
    message_dicts,
    prepare_compaction,
    should_compact,
    summary_request,
    turn_prefix_request,
    with_file_lists,
)
from .events import CompactionEndEvent, CompactionStartEvent

if TYPE_CHECKING:
    from .session import AgentSession

Reason = Literal["manual", "threshold", "overflow"]


class CompactionError(Exception):
    """A compaction could not be made; the session is unchanged."""


@dataclass
class CompactionResult:
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    estimated_tokens_after: int | None
    usage: dict[str, Any] | None
    details: dict[str, Any] | None
    entry_id: str
    from_plugin: bool = False

    def to_json(self) -> dict[str, Any]:
        data = {"summary": self.summary, "firstKeptEntryId": self.first_kept_entry_id,
                "tokensBefore": self.tokens_before, "estimatedTokensAfter": self.estimated_tokens_after,
                "usage": self.usage, "details": self.details}
        return {k: v for k, v in data.items() if v is not None}


def compaction_settings(session: AgentSession) -> CompactionSettings:
    configured = getattr(getattr(session, "settings", None), "compaction", None)
    if configured is None:
        return CompactionSettings(enabled=session.auto_compaction_enabled)
    return CompactionSettings(configured.enabled and session.auto_compaction_enabled, configured.reserve_tokens,
                              configured.keep_recent_tokens)


# -------------------------------------------------------------------------------------------------
# compaction


async def compact(session: AgentSession, reason: Reason = "manual", custom_instructions: str | None = None, *,
                  will_retry: bool = False) -> CompactionResult | None:
    """Compact the current branch; ``None`` when a plugin cancelled. Raises :class:`CompactionError`."""
    await session._emit(CompactionStartEvent(reason))
    session.is_compacting = True
    controller = session._compaction = AbortController()
    try:
        result = await _compact(session, reason, custom_instructions, will_retry, controller)
    except Exception as exc:
        aborted = controller.signal.aborted
        await session._emit(CompactionEndEvent(reason, None, aborted, False, None if aborted else str(exc)))
        if isinstance(exc, CompactionError):
            raise
        raise CompactionError(f"compaction failed: {exc}") from exc
    finally:
        session.is_compacting = False
        session._compaction = None
    await session._emit(CompactionEndEvent(reason, result, result is None, will_retry and result is not None))
    return result


async def _compact(session: AgentSession, reason: Reason, custom_instructions: str | None, will_retry: bool,
                   controller: AbortController) -> CompactionResult | None:
    path = session.session.get_raw_branch()
    settings = compaction_settings(session)
    if path and path[-1].get("type") == "compaction":
        raise CompactionError("Already compacted")
    context = message_dicts(session.messages)
    preparation = prepare_compaction(path, settings, context_messages=context)
    if preparation is None:
        raise CompactionError("Nothing to compact")
    event = SessionBeforeCompactEvent(preparation, path, custom_instructions, reason, will_retry, controller.signal)
    event = await session.host.dispatch.call("session_before_compact", event, session.ctx)
    if isinstance(event.decision, Cancel):
        return None
    if isinstance(event.decision, CompactionOverride):
        summary, usage = event.decision.summary, None
        first_kept = event.decision.first_kept_entry_id or preparation.first_kept_entry_id
        details, from_plugin = event.decision.details, True
    else:
        summary, usage = await _summarize(session, preparation, custom_instructions, controller)
        summary = with_file_lists(summary, preparation.file_ops)
        first_kept, details, from_plugin = preparation.first_kept_entry_id, preparation.file_ops.details(), False
    controller.signal.throw_if_aborted()
    entry_id = session.session.append_compaction(summary, first_kept, preparation.tokens_before, details,
                                                 from_plugin, usage)
    session._load_transcript()
    after = sum(estimate_tokens(m) for m in message_dicts(session.messages))
    result = CompactionResult(summary, first_kept, preparation.tokens_before, after, usage, details, entry_id,
                              from_plugin)
    await session.host.dispatch.call("session_compact", SessionCompactEvent(
        session.session.get_raw_entry(entry_id), from_plugin, reason, will_retry), session.ctx)
    return result


async def _summarize(session: AgentSession, preparation: CompactionPreparation, instructions: str | None,
                     controller: AbortController) -> tuple[str, dict[str, Any] | None]:
    reserve = preparation.settings.reserve_tokens
    history, usage = NO_HISTORY, None
    if preparation.messages_to_summarize:
        request = summary_request(preparation.messages_to_summarize, previous_summary=preparation.previous_summary,
                                  custom_instructions=instructions)
        history, usage = await ask_model(session, request, int(0.8 * reserve), controller)
    elif preparation.previous_summary:
        history = preparation.previous_summary
    if not preparation.is_split_turn or not preparation.turn_prefix_messages:
        return history, usage
    prefix, prefix_usage = await ask_model(session, turn_prefix_request(preparation.turn_prefix_messages),
                                           int(0.5 * reserve), controller)
    return history + SPLIT_JOIN + prefix, _add_usage(usage, prefix_usage)


async def ask_model(session: AgentSession, context: Context, max_tokens: int,
                    controller: AbortController) -> tuple[str, dict[str, Any]]:
    """One summarization request with the session's model; the text and the usage of the answer."""
    model = session.model
    options: dict[str, Any] = {"signal": controller.signal, "max_tokens": min(max_tokens, model.max_tokens) or None}
    if model.reasoning and session.thinking_level != "off":
        options["reasoning"] = session.thinking_level
    final: AssistantMessage | None = None
    async for event in session._stream(model, context, **options):
        if event.type in ("done", "error"):
            final = event.message
    if final is None or final.stop_reason in ("error", "aborted", "length") or final.tool_calls():
        problem = final.error_message if final is not None and final.error_message else (
            final.stop_reason if final is not None else "no answer")
        raise CompactionError(f"the summary request failed: {problem}")
    return "\n".join(b.text for b in final.content if b.type == "text"), final.usage.to_json()


def _add_usage(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    if a is None:
        return b
    total = {k: a.get(k, 0) + b.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")}
    cost = {k: (a.get("cost") or {}).get(k, 0) + (b.get("cost") or {}).get(k, 0)
            for k in ("input", "output", "cacheRead", "cacheWrite", "total")}
    return {**total, "cost": cost}


def over_threshold(session: AgentSession) -> bool:
    """Does the context (last usage plus estimates) exceed the window minus the reserve?"""
    settings = compaction_settings(session)
    last = session.messages[-1] if session.messages else None
    if not isinstance(last, AssistantMessage) or last.stop_reason in ("aborted", "error"):
        return False
    tokens = estimate_context_tokens(message_dicts(session.messages))
    return should_compact(tokens, session.model.context_window, settings)


# -------------------------------------------------------------------------------------------------
# tree navigation


async def navigate_tree(session: AgentSession, target_id: str, *, summarize: bool = False,
                        custom_instructions: str | None = None, replace_instructions: bool = False,
                        label: str | None = None) -> dict[str, Any]:
    """Move the session to ``target_id``; optionally summarise the branch left. Returns ``{cancelled}``.

    Files on disk are never touched: only where the conversation continues from changes.
    """
    manager = session.session
    if manager.get_raw_entry(target_id) is None:
        raise ValueError(f"no entry {target_id!r} in this session")
    session._require_idle("move in the session tree")
    old_leaf = manager.get_leaf_id()
    old_path, target_path = manager.get_raw_branch(), manager.get_raw_branch(target_id)
    entries, ancestor = abandoned_entries(old_path, target_path)
    budget = (session.model.context_window or 128000) - _branch_reserve(session)
    messages, ops = select_messages(entries, budget)
    preparation = BranchPreparation(target_id, old_leaf, ancestor, entries, messages, ops, summarize,
                                    custom_instructions, replace_instructions, label)
    controller = AbortController()
    event = await session.host.dispatch.call("session_before_tree",
                                             SessionBeforeTreeEvent(preparation, controller.signal), session.ctx)
    if isinstance(event.decision, Cancel):
        return {"cancelled": True}
    override = event.decision if isinstance(event.decision, TreeOverride) else None
    summary_entry, from_plugin = await _branch_summary(session, preparation, override, controller)
    if summary_entry is None:
        manager.branch(target_id)
    final_label = override.label if override and override.label is not None else label
    if final_label:
        manager.append_label_change(target_id, final_label)
    session._load_transcript()
    await session.host.dispatch.call("session_tree", SessionTreeEvent(
        manager.get_leaf_id(), old_leaf, manager.get_raw_entry(summary_entry) if summary_entry else None,
        from_plugin), session.ctx)
    return {"cancelled": False}


async def _branch_summary(session: AgentSession, preparation: BranchPreparation, override: TreeOverride | None,
                          controller: AbortController) -> tuple[str | None, bool]:
    """Append the branch summary at the target (when one is wanted); its entry id and whether a plugin wrote it."""
    if override is not None and override.summary is not None:
        entry = session.session.branch_with_summary(preparation.target_id, override.summary, override.details, True)
        return entry, True
    if not preparation.user_wants_summary:
        return None, False
    if override is not None:
        preparation.custom_instructions = override.custom_instructions or preparation.custom_instructions
        preparation.replace_instructions = bool(override.replace_instructions) or preparation.replace_instructions
    if preparation.messages:
        text, usage = await ask_model(session, branch_summary_request(preparation),
                                      min(4096, session.model.max_tokens), controller)
    else:
        text, usage = EMPTY_BRANCH, None
    summary = stored_branch_summary(text, preparation.file_ops)
    entry = session.session.branch_with_summary(preparation.target_id, summary, preparation.file_ops.details(),
                                                False, usage)
    return entry, False


def _branch_reserve(session: AgentSession) -> int:
    configured = getattr(getattr(session, "settings", None), "branch_summary", None)
    return getattr(configured, "reserve_tokens", 16384)


__all__ = ["CompactionError", "CompactionResult", "compact", "navigate_tree", "over_threshold"]
