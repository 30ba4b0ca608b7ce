"""Compaction: replace the older part of a conversation by a summary, keeping the recent part.

This module is the pure part (no model call, no session writes): token estimation, where to cut,
what to summarise, the summarization request, and the summary text as stored. The runtime
(``pi_core.runtime.compaction``) asks the model and appends the entry.

Rules, as pi's: the cut never separates a tool call from its result (a tool result is never a cut
point); when the kept part starts inside a turn, the turn's beginning is summarised separately (a split
turn); an earlier summary is updated rather than summarised again; files read and changed are tracked in
``details`` and carried from one compaction to the next.
"""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..ai.types import Context, UserMessage
from .messages import convert_to_llm
from .projection import apply_edit, entry_messages

Raw = dict[str, Any]

IMAGE_TOKENS = 1200
"""What an image counts for: pi counts 4800 characters, i.e. 1200 tokens."""
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
CUT_POINT_ROLES = TURN_START_ROLES | {"assistant"}
_PLAIN_ROLES = CUT_POINT_ROLES | {"toolResult"}
TOOL_RESULT_LIMIT = 2000


@dataclass(frozen=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def modified(self) -> list[str]:
        return sorted(self.written | self.edited)

    def read_only(self) -> list[str]:
        return sorted(self.read - self.written - self.edited)

    def details(self) -> dict[str, list[str]]:
        return {"readFiles": self.read_only(), "modifiedFiles": self.modified()}


@dataclass
class CompactionPreparation:
    """What a compaction would do; plugins see it in ``session_before_compact``."""

    first_kept_entry_id: str
    messages_to_summarize: list[Raw]
    turn_prefix_messages: list[Raw]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings


# -------------------------------------------------------------------------------------------------
# tokens


def estimate_tokens(message: Raw) -> int:
    """A message's size in tokens, estimated as characters / 4 (images count 1200 tokens)."""
    role = message.get("role")
    chars, images = 0, 0
    if role in ("user", "custom", "toolResult", "system"):
        chars, images = _content_size(message.get("content"))
        if role == "system":
            chars += sum(len(v) for v in (message.get("sections") or {}).values() if isinstance(v, str))
            chars += len(json.dumps(message.get("toolsAdded") or [])) if message.get("toolsAdded") else 0
    elif role == "assistant":
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text") or "")
            elif kind == "thinking":
                chars += len(block.get("thinking") or "")
            elif kind == "toolCall":
                chars += len(block.get("name") or "") + len(json.dumps(block.get("arguments") or {}))
    elif role == "bashExecution":
        chars = len(message.get("command") or "") + len(message.get("output") or "")
    elif role in ("branchSummary", "compactionSummary"):
        chars = len(message.get("summary") or "")
    return math.ceil(chars / 4) + images * IMAGE_TOKENS


def _content_size(content: Any) -> tuple[int, int]:
    if isinstance(content, str):
        return len(content), 0
    chars = images = 0
    for block in content or []:
        if block.get("type") == "text":
            chars += len(block.get("text") or "")
        elif block.get("type") == "image":
            images += 1
    return chars, images


def usage_tokens(message: Raw) -> int:
    """Context tokens a successful answer reports (``totalTokens``, else the sum of the parts)."""
    usage = message.get("usage") or {}
    return int(usage.get("totalTokens") or sum(int(usage.get(k) or 0) for k in
                                               ("input", "output", "cacheRead", "cacheWrite")))


def estimate_context_tokens(messages: list[Raw]) -> int:
    """The last real usage plus estimates of what came after it; estimates only without one."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and message.get("stopReason") not in ("error", "aborted"):
            tokens = usage_tokens(message)
            if tokens > 0:
                return tokens + sum(estimate_tokens(m) for m in messages[index + 1:])
    return sum(estimate_tokens(m) for m in messages)


def should_compact(tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    return settings.enabled and tokens > context_window - settings.reserve_tokens


# -------------------------------------------------------------------------------------------------
# preparation


@dataclass
class _Item:
    """One entry of the compaction window and the messages it contributes (after context edits)."""

    entry: Raw
    messages: list[Raw]

    @property
    def roles(self) -> set[str]:
        return {m.get("role") for m in self.messages}


def _window(path: list[Raw]) -> tuple[list[_Item], Raw | None]:
    """The entries that make up today's context, oldest first, and the latest compaction on the path."""
    edits: dict[str, Raw] = {e["targetId"]: e for e in path if e.get("type") == "context_edit" and "targetId" in e}
    last = max((n for n, e in enumerate(path) if e.get("type") == "compaction"), default=-1)
    compaction = path[last] if last >= 0 else None
    if compaction is None:
        entries = path
    else:
        kept_from = next((n for n in range(last) if path[n].get("id") == compaction.get("firstKeptEntryId")), last)
        entries = path[kept_from:last] + path[last + 1:]
    items = []
    for entry in entries:
        kind = entry.get("type")
        if kind == "compaction":
            continue
        message = entry.get("message") if kind == "message" else None
        if message.__class__ is dict and message.get("role") in _PLAIN_ROLES \
                and message.get("content") is not None:
            messages = [message]  # the common case, without the general conversion
        else:
            messages = [m for m in entry_messages(entry) if m.get("role") != "system"]
        if entry.get("id") in edits:
            messages = apply_edit(messages, edits[entry["id"]])
        items.append(_Item(entry, messages))
    return items, compaction


def prepare_compaction(path: list[Raw], settings: CompactionSettings,
                       context_messages: list[Raw] | None = None) -> CompactionPreparation | None:
    """Plan a compaction of the branch ``path`` (root → leaf, raw entries); ``None`` if nothing can go.

    :param context_messages: the projected context (for ``tokens_before``); estimated from ``path`` if absent.
    """
    if not path or path[-1].get("type") == "compaction":
        return None
    # One small object per entry: with a large session in memory, the cyclic collector would rescan the
    # whole heap many times over (the session store pauses it for the same reason).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _prepare(path, settings, context_messages)
    finally:
        if collecting:
            gc.enable()


def _prepare(path: list[Raw], settings: CompactionSettings,
             context_messages: list[Raw] | None) -> CompactionPreparation | None:
    items, previous = _window(path)
    cut = _find_cut(items, settings.keep_recent_tokens)
    if cut is None or cut == 0:
        return None
    turn_start = _turn_start(items, cut)
    history_end = turn_start if turn_start is not None else cut
    to_summarize = [m for item in items[:history_end] for m in item.messages]
    prefix = [m for item in items[turn_start:cut] for m in item.messages] if turn_start is not None else []
    if not to_summarize and not prefix:
        return None
    ops = _seed_file_ops(previous)
    for message in (*to_summarize, *prefix):
        _collect_file_ops(message, ops)
    context = context_messages if context_messages is not None else [m for item in items for m in item.messages]
    return CompactionPreparation(
        first_kept_entry_id=items[cut].entry["id"], messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix, is_split_turn=turn_start is not None,
        tokens_before=estimate_context_tokens(context),
        previous_summary=previous.get("summary") if previous is not None else None,
        file_ops=ops, settings=settings,
    )


def _find_cut(items: list[_Item], keep_recent: int) -> int | None:
    """Index of the first kept item: the nearest cut point at or after where the recent budget runs out."""
    cut_points = [n for n, item in enumerate(items) if item.roles & CUT_POINT_ROLES]
    if not cut_points:
        return None
    total = 0
    for n in range(len(items) - 1, -1, -1):
        total += sum(estimate_tokens(m) for m in items[n].messages)
        if total >= keep_recent:
            cut = next((c for c in cut_points if c >= n), cut_points[-1])
            break
    else:
        return None  # everything fits in the recent budget
    while cut > 0 and not items[cut - 1].messages:
        cut -= 1  # model changes, labels and other silent entries stay with what follows them
    return cut


def _turn_start(items: list[_Item], cut: int) -> int | None:
    """Where the turn containing ``cut`` starts, if ``cut`` is inside a turn (a split turn)."""
    if items[cut].roles & TURN_START_ROLES or not items[cut].messages:
        return None
    for n in range(cut - 1, -1, -1):
        if items[n].roles & TURN_START_ROLES:
            return n
    return None


# -------------------------------------------------------------------------------------------------
# file operations


def _seed_file_ops(previous: Raw | None) -> FileOps:
    ops = FileOps()
    if previous is not None and not previous.get("fromHook"):
        details = previous.get("details") or {}
        ops.read.update(p for p in details.get("readFiles") or [] if isinstance(p, str))
        ops.edited.update(p for p in details.get("modifiedFiles") or [] if isinstance(p, str))
    return ops


def _collect_file_ops(message: Raw, ops: FileOps) -> None:
    if message.get("role") != "assistant":
        return
    for block in message.get("content") or []:
        if block.get("type") != "toolCall":
            continue
        path = (block.get("arguments") or {}).get("path")
        if not isinstance(path, str):
            continue
        target = {"read": ops.read, "write": ops.written, "edit": ops.edited}.get(block.get("name"))
        if target is not None:
            target.add(path)


def file_ops_of(messages: list[Raw], seed: FileOps | None = None) -> FileOps:
    ops = seed or FileOps()
    for message in messages:
        _collect_file_ops(message, ops)
    return ops


def with_file_lists(summary: str, ops: FileOps) -> str:
    """The stored summary: the model's text, then the files read and the files changed."""
    blocks = []
    if ops.read_only():
        blocks.append("<read-files>\n" + "\n".join(ops.read_only()) + "\n</read-files>")
    if ops.modified():
        blocks.append("<modified-files>\n" + "\n".join(ops.modified()) + "\n</modified-files>")
    return summary + ("\n\n" + "\n\n".join(blocks) if blocks else "")


# -------------------------------------------------------------------------------------------------
# the summarization request (our own prompt; the section structure is pi's)

SYSTEM_PROMPT = (
    "You condense conversations between a user and an AI coding assistant into structured checkpoints. "
    "Read the conversation you are given and write only the summary in the requested format. Do not answer "
    "questions from the conversation and do not continue it."
)

SECTIONS = """## Goal
[What the user wants to achieve; several items if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, conventions or preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [What stops progress, if anything]

## Key Decisions
- **[Decision]**: [Why, in a few words]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to continue, or "(none)"]"""

FIRST_SUMMARY = ("Summarize the conversation above as a structured checkpoint. Another model will continue the "
                 "work from it, without the conversation.\n\nFollow this format exactly:\n\n" + SECTIONS +
                 "\n\nBe brief in every section. Keep file paths, function names and error messages exactly as "
                 "they appear.")

UPDATE_SUMMARY = ("The conversation above is NEW: it happened after the summary in <previous-summary>. Update "
                  "that summary with it: keep everything from it that still holds, add the new progress and "
                  "decisions, move finished work from In Progress to Done, rewrite Next Steps, and drop only what "
                  "is obsolete.\n\nFollow this format exactly:\n\n" + SECTIONS +
                  "\n\nBe brief in every section. Keep file paths, function names and error messages exactly as "
                  "they appear.")

TURN_PREFIX = ("The conversation above is the beginning of a turn that is still going on; its later part is kept "
               "word for word. Summarize only what is shown, so that the rest makes sense:\n\n"
               "## Original Request\n[What the user asked for in this turn]\n\n"
               "## Progress So Far\n[What was done in the part above]\n\n"
               "## Context Needed to Continue\n[What the later part relies on]\n\n"
               "Do not invent what happened after the part shown.")

SPLIT_JOIN = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_HISTORY = "No prior history."


def serialize_conversation(messages: list[Raw]) -> str:
    """The conversation as plain text blocks: ``[User]: ...``, ``[Assistant tool calls]: ...``."""
    blocks: list[str] = []
    for message in convert_to_llm(messages):
        role = message.role
        if role == "user":
            text = message.content if isinstance(message.content, str) else "".join(
                getattr(b, "text", "") for b in message.content)
            if text:
                blocks.append(f"[User]: {text}")
        elif role == "assistant":
            blocks.extend(_assistant_blocks(message))
        elif role == "toolResult":
            text = "".join(getattr(b, "text", "") for b in message.content)
            if len(text) > TOOL_RESULT_LIMIT:
                text = text[:TOOL_RESULT_LIMIT] + f"\n\n[... {len(text) - TOOL_RESULT_LIMIT} more characters truncated]"
            blocks.append(f"[Tool result]: {text}")
    return "\n\n".join(blocks)


def _assistant_blocks(message: Any) -> list[str]:
    out = []
    thinking = [b.thinking for b in message.content if b.type == "thinking" and b.thinking]
    if thinking:
        out.append("[Assistant thinking]: " + "\n".join(thinking))
    texts = [b.text for b in message.content if b.type == "text"]
    if texts:
        out.append("[Assistant]: " + "\n".join(texts))
    calls = [f"{b.name}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False)}' for k, v in b.arguments.items())})"
             for b in message.content if b.type == "toolCall"]
    if calls:
        out.append("[Assistant tool calls]: " + "; ".join(calls))
    return out


def summary_request(messages: list[Raw], *, previous_summary: str | None = None,
                    custom_instructions: str | None = None, instructions: str | None = None) -> Context:
    """The request asking for a summary of ``messages`` (updating ``previous_summary`` if given)."""
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += instructions or (UPDATE_SUMMARY if previous_summary else FIRST_SUMMARY)
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return Context(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=[{"type": "text", "text": text}])])


def turn_prefix_request(messages: list[Raw]) -> Context:
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n{TURN_PREFIX}"
    return Context(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=[{"type": "text", "text": text}])])


def message_dicts(messages: list[Any]) -> list[Raw]:
    """Session messages (pydantic or dict) as pi-JSON dicts, the form this module works on."""
    return [m if isinstance(m, dict) else m.to_json() for m in messages]


__all__ = [
    "CompactionPreparation",
    "CompactionSettings",
    "FileOps",
    "estimate_context_tokens",
    "estimate_tokens",
    "file_ops_of",
    "message_dicts",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
    "summary_request",
    "turn_prefix_request",
    "usage_tokens",
    "with_file_lists",
]
