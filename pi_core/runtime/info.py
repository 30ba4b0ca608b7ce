"""What a host can ask an ``AgentSession`` about itself: statistics, context usage, commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ai.types import AssistantMessage

if TYPE_CHECKING:
    from .session import AgentSession


class SessionInfoMixin:
    """Mixed into :class:`~pi_core.runtime.session.AgentSession`."""

    def session_stats(self: AgentSession) -> dict[str, Any]:
        """pi's ``get_session_stats`` data: message counts and usage of the whole file, and context use."""
        counts = {"user": 0, "assistant": 0, "toolResult": 0}
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        cost, total, tool_calls = 0.0, 0, 0
        for entry in self.session.raw_entries():
            usage = None
            if entry.get("type") == "message":
                message = entry.get("message") or {}
                total += 1
                role = message.get("role")
                if role in counts:
                    counts[role] += 1
                if role == "assistant":
                    usage = message.get("usage")
                    tool_calls += sum(1 for b in message.get("content") or [] if b.get("type") == "toolCall")
            elif entry.get("type") in ("compaction", "branch_summary", "usage"):
                usage = entry.get("usage")
            if isinstance(usage, dict):
                for key in tokens:
                    tokens[key] += int(usage.get(key) or 0)
                cost += float((usage.get("cost") or {}).get("total") or 0)
        data: dict[str, Any] = {
            "sessionFile": str(self.session.session_file) if self.session.session_file else None,
            "sessionId": self.session.session_id,
            "userMessages": counts["user"], "assistantMessages": counts["assistant"], "toolCalls": tool_calls,
            "toolResults": counts["toolResult"], "totalMessages": total,
            "tokens": {**tokens, "total": sum(tokens.values())}, "cost": round(cost, 12),
            "contextUsage": self.context_usage(),
        }
        if data["sessionFile"] is None:
            del data["sessionFile"]
        return data

    def context_usage(self: AgentSession) -> dict[str, Any]:
        """Tokens the context used in the last answer (``None`` right after a compaction, as in pi)."""
        window = self.model.context_window
        compacted_at = max((getattr(m, "timestamp", 0) or 0 for m in self.agent.messages
                            if getattr(m, "role", None) == "compactionSummary"), default=None)
        used: int | None = None
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
                if compacted_at is None or message.timestamp > compacted_at:  # older usage predates the summary
                    u = message.usage
                    used = u.total_tokens or (u.input + u.output + u.cache_read + u.cache_write)
                break
        return {"tokens": used, "contextWindow": window,
                "percent": used / window * 100 if used is not None and window else None}

    def last_assistant_text(self: AgentSession) -> str | None:
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error",):
                text = message.text()
                if text:
                    return text
        return None

    def set_session_name(self: AgentSession, name: str) -> None:
        if not name.strip():
            raise ValueError("session name must not be empty")
        self.session.append_session_info(name)  # normalised as pi does (line breaks, outer spaces)

    def command_list(self: AgentSession) -> list[dict[str, Any]]:
        """Slash commands a host can offer: plugin commands (pi's ``RpcSlashCommand`` shape)."""
        commands = []
        for entry in self.host.commands.entries.values():
            record = self.host.records.get(entry.plugin)
            item: dict[str, Any] = {"name": entry.item.name, "description": entry.item.description or None,
                                    "source": "extension"}
            if record is not None and record.path is not None:
                item["path"] = str(record.path)
            commands.append({k: v for k, v in item.items() if v is not None})
        return commands


__all__ = ["SessionInfoMixin"]
