"""The session tree: pi-compatible JSONL files, the entry tree, and its projection into model input.

Public names are exported from :mod:`pi_core`; this package's modules are private.
"""

from __future__ import annotations

from .entries import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    ContextEditReplacement,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    SystemSnapshot,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    UsageEntry,
)
from .errors import (
    EntryNotFoundError,
    InvalidSessionError,
    SessionConflictError,
    SessionError,
    SessionLockedError,
    SessionReadOnlyError,
)
from .listing import SessionInfo
from .manager import SessionManager
from .messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    UnknownMessage,
    convert_to_llm,
)
from .projection import ModelRef, SessionContext
from .store import Diagnostic
from .tree import SessionTreeNode

__all__ = [
    "CURRENT_SESSION_VERSION",
    "AgentMessage",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContextEditEntry",
    "ContextEditReplacement",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "Diagnostic",
    "EntryNotFoundError",
    "InvalidSessionError",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "SessionConflictError",
    "SessionContext",
    "SessionEntry",
    "SessionError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionLockedError",
    "SessionManager",
    "SessionReadOnlyError",
    "SessionTreeNode",
    "SystemSnapshot",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UnknownMessage",
    "UsageEntry",
    "convert_to_llm",
]
