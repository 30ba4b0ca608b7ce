"""Moving an ``AgentSession`` between session files: new, switch, fork, clone; and user shell commands.

Every move asks the plugins first (``session_before_switch`` / ``session_before_fork`` may cancel),
shuts the old session down (``session_shutdown``), rebinds the transcript to the new file and starts it
(``session_start``). None of this is allowed while a run is in progress.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..ai.abort import AbortController
from ..events import SessionBeforeForkEvent, SessionBeforeSwitchEvent, SessionShutdownEvent, SessionStartEvent

if TYPE_CHECKING:
    from .session import AgentSession

Reason = Literal["new", "resume", "fork"]


class SessionLifecycle:
    """Mixed into :class:`~pi_core.runtime.session.AgentSession`."""

    _bash: AbortController | None = None
    _pending_bash: list[Any]

    # -- switching files -----------------------------------------------------------------------

    async def new_session(self: AgentSession, parent_session: str | Path | None = None) -> bool:
        """Start a fresh session file in the same project; False if a plugin cancelled."""
        from ..session import SessionManager

        self._require_idle("start a new session")
        if await self._vetoed_switch("new", None):
            return False
        manager = SessionManager.create(self.cwd, session_dir=self.session.session_dir, parent_session=parent_session)
        manager.append_model_change(self.model.provider, self.model.id)
        manager.append_thinking_level_change(self.thinking_level)
        await self._rebind(manager, "new")
        return True

    async def switch_session(self: AgentSession, path: str | Path) -> bool:
        """Continue another session file; False if a plugin cancelled."""
        from ..session import SessionManager

        self._require_idle("switch sessions")
        target = Path(path).expanduser()
        if await self._vetoed_switch("resume", target):
            return False
        await self._rebind(SessionManager.open(target), "resume")
        await self._restore_model()
        return True

    async def _restore_model(self: AgentSession) -> None:
        """Continue with the model and thinking level the resumed session last used, when available."""
        restored = self.session.build_session_context()
        ref = restored.model
        models = getattr(self, "models", None)
        if ref is not None and models is not None and (ref.provider, ref.model_id) != (self.model.provider, self.model.id):
            model = models.get_model(ref.provider, ref.model_id)
            if model is not None and models.has_auth(model.provider):
                self._model = model
                self.agent.config.model = model
        if restored.thinking_level:
            self._thinking_level = restored.thinking_level
            self.agent.config.stream_options["reasoning"] = None if restored.thinking_level == "off" \
                else restored.thinking_level

    async def fork(self: AgentSession, entry_id: str) -> tuple[bool, str]:
        """A new session file holding the conversation *before* the user message ``entry_id``.

        Returns ``(cancelled, text)``: ``text`` is the forked message, for the host to offer for editing.
        """
        entry = self.session.get_raw_entry(entry_id)
        message = (entry or {}).get("message") or {}
        if entry is None or message.get("role") != "user":
            raise ValueError(f"entry {entry_id!r} is not a user message of this session")
        self._require_idle("fork")
        if await self._vetoed_fork(entry_id, "before"):
            return True, ""
        text = _message_text(message)
        parent = entry.get("parentId")
        await self._branch_into_new_file(parent, "fork")
        return False, text

    async def clone(self: AgentSession) -> bool:
        """Copy the active branch into a new session file and continue there; False if cancelled."""
        self._require_idle("clone")
        leaf = self.session.get_leaf_id()
        if await self._vetoed_fork(leaf, "at"):
            return False
        await self._branch_into_new_file(leaf, "fork")
        return True

    def get_fork_messages(self: AgentSession) -> list[dict[str, str]]:
        """The user messages of the active branch that ``fork`` accepts: ``{entryId, text}``."""
        return [{"entryId": e["id"], "text": _message_text(e["message"])} for e in self.session.get_raw_branch()
                if e.get("type") == "message" and (e.get("message") or {}).get("role") == "user"]

    # -- user shell commands (RPC `bash`, interactive `!cmd`) -----------------------------------

    async def run_bash(self: AgentSession, command: str, *, exclude_from_context: bool = False,
                       on_output: Callable[[str], Any] | None = None) -> dict[str, Any]:
        """Run a command for the user; its output reaches the model with the next prompt.

        Returns pi's RPC ``bash`` data: ``{output, exitCode, cancelled, truncated, fullOutputPath?}``.
        """
        from ..session import BashExecutionMessage
        from ..toolkit.process import build_env, run_shell

        self._bash = AbortController()
        try:
            result = await run_shell(command, cwd=self.cwd, env=build_env(self._process_env()),
                                     signal=self._bash.signal, on_output=on_output)
        finally:
            self._bash = None
        data = result.to_rpc()
        message = BashExecutionMessage(
            command=command, output=result.output, exit_code=result.exit_code, cancelled=data["cancelled"],
            truncated=result.truncated, full_output_path=data.get("fullOutputPath"),
            exclude_from_context=True if exclude_from_context else None)
        if self.is_streaming:
            self._pending_bash.append(message)  # pi adds it once the run is over
        else:
            self._record_bash(message)
        return data

    def abort_bash(self: AgentSession) -> bool:
        if self._bash is None:
            return False
        self._bash.abort("aborted by the user")
        return True

    def _record_bash(self: AgentSession, message: Any) -> None:
        self.agent.messages.append(message)
        self._persist(message)

    def _flush_pending_bash(self: AgentSession) -> None:
        pending, self._pending_bash = self._pending_bash, []
        for message in pending:
            self._record_bash(message)

    # -- internals -----------------------------------------------------------------------------

    def _require_idle(self: AgentSession, what: str) -> None:
        from .session import SessionBusyError

        if self.is_streaming:
            raise SessionBusyError(f"cannot {what} while the agent is running; abort it first")

    async def _vetoed_switch(self: AgentSession, reason: Literal["new", "resume"], target: Path | None) -> bool:
        event = await self.host.dispatch.call("session_before_switch", SessionBeforeSwitchEvent(reason, target),
                                              self.ctx)
        return event.decision is not None

    async def _vetoed_fork(self: AgentSession, entry_id: str | None, position: Literal["before", "at"]) -> bool:
        event = await self.host.dispatch.call("session_before_fork", SessionBeforeForkEvent(entry_id, position),
                                              self.ctx)
        return event.decision is not None

    async def _branch_into_new_file(self: AgentSession, leaf_id: str | None, reason: Reason) -> None:
        previous = self.session.session_file
        await self.host.dispatch.call("session_shutdown", SessionShutdownEvent(reason), self.ctx)
        if leaf_id is None:
            self.session.new_session(parent_session=previous)
        else:
            self.session.create_branched_session(leaf_id)
        self._load_transcript()
        await self.host.dispatch.call("session_start", SessionStartEvent(reason, previous), self.ctx)

    async def _rebind(self: AgentSession, manager: Any, reason: Reason) -> None:
        previous = self.session.session_file
        await self.host.dispatch.call("session_shutdown", SessionShutdownEvent(reason, manager.session_file),
                                      self.ctx)
        self.session.close()
        self.session = manager
        self._load_transcript()
        await self.host.dispatch.call("session_start", SessionStartEvent(reason, previous), self.ctx)

    def _load_transcript(self: AgentSession) -> None:
        restored = self.session.build_session_context()
        self.agent.messages[:] = list(restored.messages)
        self._entry_ids.clear()
        self.agent.config.stream_options["session_id"] = self.session.session_id


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


__all__ = ["SessionLifecycle"]
