"""Branch summaries: when the session moves to another point of its tree, summarise the branch left.

Pure logic, like :mod:`pi_core.session.compaction`: which entries were abandoned (from the old leaf back
to the common ancestor), which of them fit the token budget (newest first), the request, and the
summary as stored. The runtime asks the model and appends the ``branch_summary`` entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ai.types import Context
from .compaction import (
    FileOps,
    collect_file_ops,
    estimate_tokens,
    summary_request,
    with_file_lists,
)
from .projection import apply_edit
from .raw import raw_dict, raw_list

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


def branch_messages(entry: Raw, edit: Raw | None = None) -> list[Raw]:
    """What one abandoned entry says; a context edit among the abandoned entries applies (pi 1.6)."""
    kind = entry.get("type")
    if kind == "message":
        message = raw_dict(entry.get("message"))
        messages = [message] if message.get("role") not in ("toolResult", "system", None) else []
    elif kind == "custom_message":
        messages = [{"role": "custom", "customType": entry.get("customType"), "content": entry.get("content") or ""}]
    elif kind == "branch_summary":
        messages = [{"role": "branchSummary", "summary": entry.get("summary") or "", "fromId": entry.get("fromId")}]
    elif kind == "compaction":
        messages = [{"role": "compactionSummary", "summary": entry.get("summary") or "",
                     "tokensBefore": entry.get("tokensBefore", 0)}]
    else:
        return []
    return apply_edit(messages, edit)[:1] if edit is not None else messages


def select_messages(entries: list[Raw], token_budget: int) -> tuple[list[Raw], FileOps]:
    """The newest messages that fit ``token_budget`` (0: no limit), oldest first, and the files they,
    the message that did not fit and earlier branch summaries touched. A summary that does not fit is
    still taken while the selection is under 90 % of the budget."""
    ops = FileOps()
    for entry in entries:
        details = entry.get("details")
        if entry.get("type") == "branch_summary" and not entry.get("fromHook") and isinstance(details, dict):
            ops.read.update(p for p in raw_list(details.get("readFiles")) if isinstance(p, str))
            ops.edited.update(p for p in raw_list(details.get("modifiedFiles")) if isinstance(p, str))
    edits = {e["targetId"]: e for e in entries
             if e.get("type") == "context_edit" and isinstance(e.get("targetId"), str)}
    newest_first: list[Raw] = []
    total = 0
    for entry in reversed(entries):
        for message in branch_messages(entry, edits.get(entry.get("id"))):
            collect_file_ops(message, ops)
            tokens = estimate_tokens(message)
            if token_budget > 0 and total + tokens > token_budget:
                if entry.get("type") in ("compaction", "branch_summary") and total < 0.9 * token_budget:
                    newest_first.append(message)
                return newest_first[::-1], ops
            newest_first.append(message)
            total += tokens
    return newest_first[::-1], ops


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
