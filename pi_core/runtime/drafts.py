"""Entries plugins propose at a boundary (``turn_end``, ``agent_before_settle``): checked as a whole,
then appended in order. pi's draft shapes, camelCase or snake_case keys:

* ``{"type": "custom", "customType": ..., "data": ...}`` — plugin state, never sent to the model;
* ``{"type": "custom_message", "customType": ..., "content": ..., "display": ..., "details": ...}`` — a
  plugin's message the model sees as user input from the next request on;
* ``{"type": "context_edit", "targetId": ..., "replacement": ...}`` — replace (``None``: hide) an entry;
* ``{"type": "compaction", "summary": ..., "firstKeptEntryId": ..., "tokensBefore": ...}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_session import AgentSession

REQUIRED = {"custom": ("custom_type",), "custom_message": ("custom_type", "content"),
            "context_edit": ("target_id",), "compaction": ("summary",)}


class DraftError(ValueError):
    """A proposal that cannot be appended as it is (nothing of it was written)."""


def check_drafts(drafts: Any) -> list[dict[str, Any]]:
    """The drafts with snake_case keys; raises :class:`DraftError` naming the first problem."""
    if not isinstance(drafts, list):
        raise DraftError(f"entries must be a list, not {type(drafts).__name__}")
    checked = []
    for index, draft in enumerate(drafts):
        if not isinstance(draft, dict):
            raise DraftError(f"entries[{index}] must be a dict, not {type(draft).__name__}")
        data = {_snake(k): v for k, v in draft.items()}
        kind = data.get("type")
        if kind not in REQUIRED:
            raise DraftError(f"entries[{index}]: type must be one of {', '.join(REQUIRED)}, not {kind!r}")
        missing = [key for key in REQUIRED[kind] if data.get(key) is None]
        if missing:
            raise DraftError(f"entries[{index}] ({kind}) lacks {', '.join(missing)}")
        checked.append(data)
    return checked


def append_drafts(session: AgentSession, drafts: list[dict[str, Any]]) -> bool:
    """Append checked drafts; True when the model's view must be rebuilt (an edit or a compaction)."""
    from ..session.messages import CustomMessage

    manager, rebuild = session.session, False
    for draft in drafts:
        kind = draft["type"]
        if kind == "custom":
            manager.append_custom_entry(draft["custom_type"], draft.get("data"))
        elif kind == "custom_message":
            message = CustomMessage(custom_type=draft["custom_type"], content=draft["content"],
                                    display=bool(draft.get("display", True)), details=draft.get("details"))
            session.agent.messages.append(message)
            session.persist(message)
        elif kind == "context_edit":
            manager.append_context_edit(draft["target_id"], draft.get("replacement"))
            rebuild = True
        else:
            manager.append_compaction(draft["summary"], draft.get("first_kept_entry_id"),
                                      int(draft.get("tokens_before") or 0), draft.get("details"), True,
                                      draft.get("usage"))
            rebuild = True
    return rebuild


def _snake(key: Any) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in str(key))


__all__ = ["DraftError", "append_drafts", "check_drafts"]
