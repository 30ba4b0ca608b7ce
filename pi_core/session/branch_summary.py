"""Branch summaries: when the session moves to another point of its tree, summarise the branch left.

Pure logic, like :mod:`pi_core.session.compaction`: which entries were abandoned (from the old leaf back
to the common ancestor), which of them fit the token budget (newest first), the request, and the
summary as stored. The runtime asks the model and appends the ``branch_summary`` entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ai.types import Context
from .compaction import FileOps, estimate_tokens, file_ops_of, summary_request, with_file_lists

Raw = dict[str, Any]

BRANCH_PREAMBLE = ("The user tried another approach in a different branch of this conversation and then came "
                   "back here.\nWhat follows sums up that other branch.\n\n")
EMPTY_BRANCH = "No content to summarize"

BRANCH_SECTIONS = """## Goal
[What the user was trying to achieve on that branch]

## Constraints & Preferences
- [Requirements or preferences stated there, or "(none)"]

## Progress
### Done
- [x] [What was finished]

### In Progress
- [ ] [What was under way]

### Blocked
- [What stopped progress, if anything]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What would have come next]"""

BRANCH_PROMPT = ("Summarize the conversation above: it is a branch the user explored and then left. Another model "
                 "continues from an earlier point and should learn what was tried and found.\n\n"
                 "Follow this format exactly:\n\n" + BRANCH_SECTIONS +
                 "\n\nBe brief. Keep file paths, function names and error messages exactly as they appear.")


@dataclass
class BranchPreparation:
    """What a branch summary would cover; plugins see it in ``session_before_tree``."""

    target_id: str | None
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[Raw]
    messages: list[Raw]
    file_ops: FileOps
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None


def abandoned_entries(old_path: list[Raw], target_path: list[Raw]) -> tuple[list[Raw], str | None]:
    """Entries on the old branch after the deepest entry both paths share, oldest first; and that entry's id."""
    on_target = {e.get("id") for e in target_path}
    ancestor_index = max((n for n, e in enumerate(old_path) if e.get("id") in on_target), default=-1)
    ancestor = old_path[ancestor_index].get("id") if ancestor_index >= 0 else None
    return old_path[ancestor_index + 1:], ancestor


def branch_messages(entry: Raw) -> list[Raw]:
    """What one abandoned entry says (context edits are not applied, as in pi)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") or {}
        return [message] if message.get("role") not in ("toolResult", "system", None) else []
    if kind == "custom_message":
        return [{"role": "custom", "customType": entry.get("customType"), "content": entry.get("content") or ""}]
    if kind == "branch_summary" and entry.get("summary"):
        return [{"role": "branchSummary", "summary": entry["summary"], "fromId": entry.get("fromId")}]
    if kind == "compaction":
        return [{"role": "compactionSummary", "summary": entry.get("summary") or "",
                 "tokensBefore": entry.get("tokensBefore", 0)}]
    return []


def select_messages(entries: list[Raw], token_budget: int) -> tuple[list[Raw], FileOps]:
    """The newest messages that fit ``token_budget`` (a summary is still taken while under 90 %), oldest
    first, and the files they (and earlier branch summaries) touched."""
    ops = FileOps()
    for entry in entries:
        if entry.get("type") == "branch_summary" and not entry.get("fromHook"):
            details = entry.get("details") or {}
            ops.read.update(details.get("readFiles") or [])
            ops.edited.update(details.get("modifiedFiles") or [])
    chosen: list[Raw] = []
    total = 0
    for entry in reversed(entries):
        messages = branch_messages(entry)
        tokens = sum(estimate_tokens(m) for m in messages)
        if total + tokens > token_budget:
            is_summary = any(m.get("role") in ("branchSummary", "compactionSummary") for m in messages)
            if is_summary and total < 0.9 * token_budget:
                chosen[:0] = messages
            break
        chosen[:0] = messages
        total += tokens
    return chosen, file_ops_of(chosen, ops)


def branch_summary_request(preparation: BranchPreparation) -> Context:
    if preparation.replace_instructions and preparation.custom_instructions:
        return summary_request(preparation.messages, instructions=preparation.custom_instructions)
    return summary_request(preparation.messages, instructions=BRANCH_PROMPT,
                           custom_instructions=preparation.custom_instructions)


def stored_branch_summary(text: str, ops: FileOps) -> str:
    """The summary as stored in the entry: a short preamble, the model's text, the file lists."""
    return BRANCH_PREAMBLE + with_file_lists(text, ops)


__all__ = [
    "BranchPreparation",
    "abandoned_entries",
    "branch_messages",
    "branch_summary_request",
    "select_messages",
    "stored_branch_summary",
]
