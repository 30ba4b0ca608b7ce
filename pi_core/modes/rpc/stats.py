"""``get_session_stats`` data (pi's ``SessionStats``): message counts and usage of the whole file, and
how full the context is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...session.raw import raw_dict, raw_list, raw_message, raw_number

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

USAGE_ENTRIES = ("compaction", "branch_summary", "usage")


def session_stats(session: AgentSession) -> dict[str, Any]:
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost, total, tool_calls = 0.0, 0, 0
    for entry in session.session.raw_entries():  # as stored: any field may have the wrong type
        usage = None
        if entry.get("type") == "message":
            message = raw_message(entry)
            total += 1
            role = message.get("role")
            if role.__class__ is str and role in counts:
                counts[role] += 1
            if role == "assistant":
                usage = message.get("usage")
                tool_calls += sum(1 for b in raw_list(message.get("content"))
                                  if raw_dict(b).get("type") == "toolCall")
        elif entry.get("type") in USAGE_ENTRIES:
            usage = entry.get("usage")
        if isinstance(usage, dict):
            for key in tokens:
                tokens[key] += int(raw_number(usage.get(key)))
            cost += float(raw_number(raw_dict(usage.get("cost")).get("total")))
    data: dict[str, Any] = {}
    if session.session.session_file:
        data["sessionFile"] = str(session.session.session_file)
    data.update({
        "sessionId": session.session.session_id,
        "userMessages": counts["user"], "assistantMessages": counts["assistant"], "toolCalls": tool_calls,
        "toolResults": counts["toolResult"], "totalMessages": total,
        "tokens": {**tokens, "total": sum(tokens.values())}, "cost": round(cost, 12),
        "contextUsage": session.get_context_usage().to_json(),
    })
    return data


__all__ = ["session_stats"]
