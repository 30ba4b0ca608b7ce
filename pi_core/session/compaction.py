"""Compaction: replace the older part of a conversation by a summary, keeping the recent part.

This module is the pure part (no model call, no session writes): token estimation, where to cut,
what to summarise, the summarization requests, and the summary text as stored. The runtime
(``pi_core.runtime.compaction``) asks the model and appends the entry.

Rules, as pi 1.6's: the cut never separates a tool call from its result (a tool result is never a cut
point); when the kept part starts inside a turn, the turn's beginning is summarised separately (a split
turn); an earlier summary is updated rather than summarised again (what it kept is summarised with the
new turns); files read and changed are tracked in ``details`` and carried from one compaction to the
next. Context edits count: what the model no longer sees is neither kept nor summarised.

Sturdier than pi: a history too large for one summarization request is summarised in pieces, each
piece updating the summary of the pieces before it, instead of overflowing the summarizer.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ai.types import Context, UserMessage
from .messages import convert_to_llm
from .projection import apply_edit, current_system_message, entry_messages
from .raw import raw_dict, raw_list, raw_text

Raw = dict[str, Any]

IMAGE_CHARS = 4800
"""What an image counts for in the estimate, in characters (pi's figure: 1200 tokens)."""
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
CUT_POINT_ROLES = TURN_START_ROLES | {"assistant"}
_PLAIN_ROLES = CUT_POINT_ROLES | {"toolResult"}
TOOL_RESULT_LIMIT = 2000
"""Characters of a tool result shown to the summarizer."""


@dataclass(frozen=True)
class CompactionSettings:
    """``compaction`` settings (pi's defaults)."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass
class FileOps:
    """Paths the ``read``, ``write`` and ``edit`` tools were called with."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add(self, tool: Any, arguments: Any) -> None:
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            return
        target = {"read": self.read, "write": self.written, "edit": self.edited}.get(tool)
        if target is not None:
            target.add(path)

    def modified(self) -> list[str]:
        return sorted(self.written | self.edited)

    def read_only(self) -> list[str]:
        return sorted(self.read - self.written - self.edited)

    def details(self) -> dict[str, list[str]]:
        """The entry's ``details``: ``{readFiles, modifiedFiles}``."""
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


def js_len(text: str) -> int:
    """``text.length`` in JavaScript (UTF-16 code units), so estimates and cuts agree with pi's.

    Anything but a string counts 0: a stored message written by another program may hold a number
    where text belongs (``{"type": "text", "text": 5}``), and estimating its size must not fail."""
    if text.__class__ is not str:
        return 0
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_json(value: Any) -> str:
    """``JSON.stringify(value)`` for plain JSON values."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def estimate_tokens(message: Raw) -> int:
    """A message's size in tokens, estimated as characters / 4 (an image counts 4,800 characters)."""
    role = message.get("role")
    chars = 0
    if role in ("user", "custom", "toolResult", "system"):
        chars = _content_chars(message.get("content"))
        if role == "system":
            sections = message.get("sections")
            chars += sum(js_len(v) for v in sections.values()) if sections.__class__ is dict else 0
            if message.get("toolsAdded"):
                chars += js_len(js_json(message["toolsAdded"]))
    elif role == "assistant":
        content = message.get("content")
        for block in content if content.__class__ is list else ():
            kind = block.get("type") if block.__class__ is dict else None
            if kind == "text":
                chars += js_len(block.get("text") or "")
            elif kind == "thinking":
                chars += js_len(block.get("thinking") or "")
            elif kind == "toolCall":
                chars += js_len(block.get("name") or "") + js_len(js_json(block.get("arguments") or {}))
    elif role == "bashExecution":
        chars = js_len(message.get("command") or "") + js_len(message.get("output") or "")
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_len(message.get("summary") or "")
    return math.ceil(chars / 4)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    for block in content if content.__class__ is list else ():
        kind = block.get("type") if block.__class__ is dict else None
        if kind == "text":
            chars += js_len(block.get("text") or "")
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def _field(record: Raw, key: str = "role") -> str | None:
    """``record[key]`` if it is text (a stored value of another type matches nothing)."""
    value = record.get(key)
    return value if value.__class__ is str else None


def usage_tokens(message: Raw) -> int:
    """Context tokens a successful answer reports (``totalTokens``, else the sum of the parts).

    A ``usage`` that is not an object, or a count that is not a finite number (a file another program
    wrote), counts 0, as pi's arithmetic on it gives ``NaN``, which is never over a threshold."""
    usage = message.get("usage")
    if usage.__class__ is not dict:
        return 0
    return int(_count(usage.get("totalTokens")) or sum(_count(usage.get(k)) for k in
                                                       ("input", "output", "cacheRead", "cacheWrite")))


def _count(value: Any) -> float:
    return value if (value.__class__ is int or value.__class__ is float) and math.isfinite(value) else 0


def last_usage_index(messages: list[Raw]) -> int | None:
    """The last answer whose usage can be trusted: not failed, not aborted, with tokens reported."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and message.get("stopReason") not in ("error", "aborted") \
                and usage_tokens(message) > 0:
            return index
    return None


def estimate_context_tokens(messages: list[Raw]) -> int:
    """The last real usage plus estimates of what came after it; estimates only without one."""
    index = last_usage_index(messages)
    if index is None:
        return sum(estimate_tokens(m) for m in messages)
    return usage_tokens(messages[index]) + sum(estimate_tokens(m) for m in messages[index + 1:])


def estimate_projected_tokens(messages: list[Raw], source_ids: list[str | None], path: list[Raw]) -> int:
    """The context's size as pi 1.6 estimates it before compacting or sending.

    The last usage counts only if its answer comes after every context edit and compaction on the
    branch (those change what the model sees since); otherwise everything is estimated, the system
    prompt as currently in force.
    """
    index = last_usage_index(messages)
    if index is not None:
        source = source_ids[index] if index < len(source_ids) else None
        # Walking back from the leaf, the usage counts if its entry is reached before any edit or compaction.
        for entry in reversed(path):
            if entry.get("id") == source and source is not None:
                return usage_tokens(messages[index]) + sum(estimate_tokens(m) for m in messages[index + 1:])
            if entry.get("type") in ("context_edit", "compaction"):
                break
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    return tokens + sum(estimate_tokens(m) for m in messages if m.get("role") != "system")


def should_compact(tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    return settings.enabled and context_window > 0 and tokens > context_window - settings.reserve_tokens


# -------------------------------------------------------------------------------------------------
# preparation


@dataclass(slots=True)
class _Item:
    """One entry of the compaction window and the messages it contributes (after context edits)."""

    entry: Raw
    messages: list[Raw]
    visible: bool
    """Contributes messages of its own (before edits); context edits and metadata do not."""
    barrier: bool = False
    """An older compaction inside the kept range: the cut never extends past it."""
    tokens: int = -1

    def size(self) -> int:
        if self.tokens < 0:
            self.tokens = sum(estimate_tokens(m) for m in self.messages)
        return self.tokens

    def has(self, roles: frozenset[str]) -> bool:
        return not self.barrier and any(_field(m) in roles for m in self.messages)


def window_entries(path: list[Raw]) -> tuple[list[Raw], Raw | None]:
    """The entries that make up what the model sees besides the latest compaction's summary (the kept
    range, then everything after it), and that compaction (``None`` without one)."""
    last = max((n for n, e in enumerate(path) if e.get("type") == "compaction"), default=-1)
    if last < 0:
        return path, None
    compaction = path[last]
    kept_from = next((n for n in range(last) if path[n].get("id") == compaction.get("firstKeptEntryId")), last)
    # The compaction's system snapshot supersedes system messages before it.
    kept = [e for e in path[kept_from:last] if not _is_system_entry(e)]
    return kept + path[last + 1:], compaction


def _is_system_entry(entry: Raw) -> bool:
    message = entry.get("message")
    return entry.get("type") == "message" and message.__class__ is dict and message.get("role") == "system"


def _items(entries: list[Raw]) -> list[_Item]:
    edits = {e["targetId"]: e for e in entries if e.get("type") == "context_edit" and _field(e, "targetId")}
    items = []
    for entry in entries:
        kind = entry.get("type")
        if kind == "compaction":
            items.append(_Item(entry, [], False, barrier=True))
            continue
        message = entry.get("message") if kind == "message" else None
        if message.__class__ is dict and _field(message) in _PLAIN_ROLES and message.get("content") is not None:
            messages = [message]  # the common case, without the general conversion
        else:
            messages = entry_messages(entry)
        visible = bool(messages) and kind != "context_edit"
        if edits and entry.get("id") in edits:
            messages = apply_edit(messages, edits[entry["id"]])
        items.append(_Item(entry, messages, visible))
    return items


def prepare_compaction(path: list[Raw], settings: CompactionSettings) -> CompactionPreparation | None:
    """Plan a compaction of the branch ``path`` (root → leaf, raw entries); ``None`` if nothing can go."""
    if not path or path[-1].get("type") == "compaction":
        return None
    # One small object per entry: with a large session in memory, the cyclic collector would rescan the
    # whole heap many times over (the session store pauses it for the same reason).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _prepare(path, settings)
    finally:
        if collecting:
            gc.enable()


def _prepare(path: list[Raw], settings: CompactionSettings) -> CompactionPreparation | None:
    entries, previous = window_entries(path)
    items = _items(entries)
    cut = _find_cut(items, settings.keep_recent_tokens)
    if cut is None:
        return None
    turn_start = _turn_start(items, cut)
    history_end = turn_start if turn_start is not None else cut
    to_summarize = _conversation(items[:history_end])
    prefix = _conversation(items[turn_start:cut]) if turn_start is not None else []
    if not to_summarize and not prefix:
        return None
    ops = _seed_file_ops(previous)
    for message in (*to_summarize, *prefix):
        collect_file_ops(message, ops)
    return CompactionPreparation(
        first_kept_entry_id=items[cut].entry["id"], messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix, is_split_turn=turn_start is not None,
        tokens_before=_tokens_before(items, previous, path),
        previous_summary=previous.get("summary") if previous is not None else None,
        file_ops=ops, settings=settings,
    )


def _conversation(items: list[_Item]) -> list[Raw]:
    return [m for item in items for m in item.messages if m.get("role") != "system"]


def _tokens_before(items: list[_Item], previous: Raw | None, path: list[Raw]) -> int:
    messages: list[Raw] = []
    sources: list[str | None] = []
    if previous is not None:
        head = entry_messages(previous)
        messages.extend(head)
        sources.extend([previous.get("id")] * len(head))
    for item in items:
        messages.extend(item.messages)
        sources.extend([item.entry.get("id")] * len(item.messages))
    return estimate_projected_tokens(messages, sources, path)


def _find_cut(items: list[_Item], keep_recent: int) -> int | None:
    """Index of the first kept item: the nearest cut point at or after where the recent budget runs out."""
    cut_points = [n for n, item in enumerate(items) if item.has(CUT_POINT_ROLES)]
    if not cut_points:
        return None
    cut, total, exceeded = cut_points[0], 0, False
    for n in range(len(items) - 1, -1, -1):
        tokens = items[n].size()
        if tokens == 0:
            continue
        total += tokens
        if total >= keep_recent:
            exceeded = True
            cut = next((c for c in cut_points if c >= n), cut_points[-1])
            break
    if exceeded and _is_recovery_suffix(items[cut + 1:]):
        cut += 1  # keep nothing of a failed attempt that is hidden anyway (pi 1.6)
    while cut > 0 and not items[cut - 1].barrier and not items[cut - 1].messages:
        cut -= 1  # model changes, labels and other silent entries stay with what follows them
    return cut


def _is_recovery_suffix(suffix: list[_Item]) -> bool:
    """After the cut only a hidden failed answer and its edits: the cut's input was never answered."""
    omitted = {item.entry.get("id") for item in suffix if item.visible and not item.messages}
    hidden_answer = any(item.entry.get("type") == "message" and raw_dict(item.entry.get("message")).get("role")
                        == "assistant" and item.entry.get("id") in omitted for item in suffix)
    foreign_edit = any(item.entry.get("type") == "context_edit" and item.entry.get("replacement") is not None
                       and _field(item.entry, "targetId") not in omitted for item in suffix)
    silent = all(not item.barrier and (not item.visible or item.entry.get("id") in omitted) for item in suffix)
    return hidden_answer and not foreign_edit and silent


def _turn_start(items: list[_Item], cut: int) -> int | None:
    """Where the turn containing ``cut`` starts, if ``cut`` is inside a turn (a split turn).

    A cut pulled back onto silent entries is judged by the first entry after them that says something
    (pi would report such a cut as a split turn and summarise the whole previous turn separately).
    """
    first = next((n for n in range(cut, len(items)) if items[n].messages or items[n].barrier), None)
    if first is None or items[first].barrier or items[first].has(TURN_START_ROLES):
        return None
    for n in range(cut - 1, -1, -1):
        if items[n].barrier:
            return None
        if items[n].has(TURN_START_ROLES):
            return n
    return None


# -------------------------------------------------------------------------------------------------
# file operations


def _seed_file_ops(previous: Raw | None) -> FileOps:
    ops = FileOps()
    if previous is not None and not previous.get("fromHook"):
        details = raw_dict(previous.get("details"))
        ops.read.update(p for p in raw_list(details.get("readFiles")) if isinstance(p, str))
        ops.edited.update(p for p in raw_list(details.get("modifiedFiles")) if isinstance(p, str))
    return ops


def collect_file_ops(message: Raw, ops: FileOps) -> None:
    """Add the file operations of one message: its tool calls, or the calls a tool result records."""
    role = message.get("role")
    if role == "toolResult":
        nested = message.get("nestedCalls")
        for call in raw_list(raw_dict(nested).get("calls")):
            if isinstance(call, dict):
                ops.add(call.get("name"), call.get("arguments"))
    elif role == "assistant":
        for block in raw_list(message.get("content")):
            if isinstance(block, dict) and block.get("type") == "toolCall":
                ops.add(block.get("name"), block.get("arguments"))


def file_ops_of(messages: list[Raw], seed: FileOps | None = None) -> FileOps:
    ops = seed or FileOps()
    for message in messages:
        collect_file_ops(message, ops)
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
# the conversation as text


def serialize_blocks(messages: Sequence[Any]) -> list[str]:
    """The conversation as the summarizer reads it, one block per part: ``[User]: ...``,
    ``[Assistant]: ...``, ``[Assistant tool calls]: read(path="a.py")``, ``[Tool result]: ...``.

    Thinking is left out (as in pi 1.6: providers return summaries of it, and replayed thinking can make
    the request larger than the context it summarises); long tool results are cut to 2,000 characters.
    """
    blocks: list[str] = []
    for message in messages:
        for llm in _as_llm(message):
            _blocks_of(llm, blocks)
    return blocks


def _as_llm(message: Any) -> list[Raw]:
    if message.__class__ is not dict:
        message = message.to_json()
    if message.get("role") in ("user", "assistant", "toolResult"):
        return [message]
    return [m.to_json() for m in convert_to_llm([message]) if m.role != "system"]


def _blocks_of(message: Raw, blocks: list[str]) -> None:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        text = _text(content, "")
        if text:
            blocks.append(f"[User]: {text}")
    elif role == "assistant":
        parts = [b for b in raw_list(content) if isinstance(b, dict)]
        if any(b.get("type") == "text" for b in parts):
            blocks.append("[Assistant]: " + _text(parts, "\n"))
        calls = [f"{b.get('name')}({', '.join(f'{k}={js_json(v)}' for k, v in raw_dict(b.get('arguments')).items())})"
                 for b in parts if b.get("type") == "toolCall"]
        if calls:
            blocks.append("[Assistant tool calls]: " + "; ".join(calls))
    elif role == "toolResult":
        text = _text(content, "")
        if text:
            blocks.append("[Tool result]: " + _truncate(text, TOOL_RESULT_LIMIT))


def _text(content: Any, separator: str) -> str:
    return raw_text(content, separator)


def _truncate(text: str, limit: int) -> str:
    size = js_len(text)
    if size <= limit:
        return text
    return f"{_js_head(text, limit)}\n\n[... {size - limit} more characters truncated]"


def _js_head(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``, never half a surrogate pair."""
    if text.isascii():
        return text[:units]
    data = text.encode("utf-16-le", "surrogatepass")[:units * 2]
    if len(data) >= 2 and 0xD8 <= data[-1] <= 0xDB:
        data = data[:-2]
    return data.decode("utf-16-le", "surrogatepass")


def serialize_conversation(messages: Sequence[Any]) -> str:
    """The conversation as plain text blocks separated by blank lines (see :func:`serialize_blocks`);
    ``messages`` are pi-JSON dicts or message models (what :func:`pi_core.convert_to_llm` returns)."""
    return "\n\n".join(serialize_blocks(messages))


def conversation_chunks(messages: list[Raw], max_tokens: int) -> list[str]:
    """The serialized conversation in consecutive pieces of at most ``max_tokens`` (estimated).

    Pieces break between blocks; a single block larger than a piece is cut, keeping its beginning.
    """
    limit = max(400, max_tokens) * 4
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for block in serialize_blocks(messages):
        length = js_len(block) + 2
        if length > limit:
            block = _js_head(block, limit - 200) + f"\n\n[... {length - limit + 200} more characters left out]"
            length = js_len(block) + 2
        if current and size + length > limit:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(block)
        size += length
    if current or not chunks:
        chunks.append("\n\n".join(current))
    return chunks


def fit_conversation(messages: list[Raw], max_tokens: int) -> str:
    """The serialized conversation within ``max_tokens`` (estimated): when too long, its beginning and
    its end, with a marker where blocks were left out."""
    blocks = serialize_blocks(messages)
    limit = max(800, max_tokens) * 4
    if sum(js_len(b) + 2 for b in blocks) <= limit:
        return "\n\n".join(blocks)
    half = limit // 2
    head = _take(blocks, half)
    tail = _take(blocks[len(head):][::-1], half)[::-1]
    left_out = len(blocks) - len(head) - len(tail)
    return "\n\n".join([*head, f"[... {left_out} parts of the conversation left out ...]", *tail])


def _take(blocks: list[str], limit: int) -> list[str]:
    """Blocks from the start while they fit ``limit`` characters (at least one, cut if need be)."""
    taken: list[str] = []
    size = 0
    for block in blocks:
        length = js_len(block) + 2
        if size + length > limit:
            if not taken:
                taken.append(_js_head(block, max(0, limit - 100)) + "\n\n[... cut ...]")
            break
        taken.append(block)
        size += length
    return taken


# -------------------------------------------------------------------------------------------------
# the summarization requests (our own prompts; the section structure is pi's)

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

_CLOSING = "Be brief in every section. Keep file paths, function names and error messages exactly as they appear."

FIRST_SUMMARY = ("Summarize the conversation above as a structured checkpoint. Another model will continue the "
                 "work from it, without the conversation.\n\nFollow this format exactly:\n\n" + SECTIONS +
                 "\n\n" + _CLOSING)

UPDATE_SUMMARY = ("The conversation above is NEW: it happened after the summary in <previous-summary>. Update "
                  "that summary with it: keep everything from it that still holds, add the new progress and "
                  "decisions, move finished work from In Progress to Done, rewrite Next Steps, and drop only what "
                  "is obsolete.\n\nFollow this format exactly:\n\n" + SECTIONS + "\n\n" + _CLOSING)

TURN_PREFIX = ("The conversation above is the beginning of a turn that is still going on; its later part is kept "
               "word for word and follows this checkpoint. Write a short checkpoint of what is shown, so that the "
               "rest makes sense:\n\n"
               "## Original Request\n[What the user asked for in this turn]\n\n"
               "## Progress So Far\n- [Decisions made and work done in the part above]\n\n"
               "## Context Needed to Continue\n- [What the later part relies on]\n\n"
               "Only summarize what is shown above; do not guess what happened after it.")

SPLIT_JOIN = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_HISTORY = "No prior history."


def summary_request(messages: list[Raw] | None = None, *, previous_summary: str | None = None,
                    custom_instructions: str | None = None, instructions: str | None = None,
                    conversation: str | None = None) -> Context:
    """The request asking for a summary of ``messages`` (or of the already serialized ``conversation``),
    updating ``previous_summary`` if given."""
    body = conversation if conversation is not None else serialize_conversation(messages or [])
    text = f"<conversation>\n{body}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += instructions or (UPDATE_SUMMARY if previous_summary else FIRST_SUMMARY)
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return _request(text)


def turn_prefix_request(messages: list[Raw] | None = None, *, custom_instructions: str | None = None,
                        conversation: str | None = None) -> Context:
    """The request asking for a checkpoint of a split turn's beginning."""
    body = conversation if conversation is not None else serialize_conversation(messages or [])
    text = f"# Conversation\n{body}\n\n# Instructions\n{TURN_PREFIX}"
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return _request(text)


def _request(text: str) -> Context:
    return Context(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=[{"type": "text", "text": text}])])


def message_dicts(messages: list[Any]) -> list[Raw]:
    """Session messages (pydantic or dict) as pi-JSON dicts, the form this module works on."""
    return [m if isinstance(m, dict) else m.to_json() for m in messages]


__all__ = [
    "CompactionPreparation",
    "CompactionSettings",
    "FileOps",
    "collect_file_ops",
    "conversation_chunks",
    "estimate_context_tokens",
    "estimate_projected_tokens",
    "estimate_tokens",
    "file_ops_of",
    "fit_conversation",
    "js_len",
    "last_usage_index",
    "message_dicts",
    "prepare_compaction",
    "serialize_blocks",
    "serialize_conversation",
    "should_compact",
    "summary_request",
    "turn_prefix_request",
    "usage_tokens",
    "window_entries",
    "with_file_lists",
]
