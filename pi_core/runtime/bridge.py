"""What a plugin's ``ctx`` does to its session: :class:`PluginBridge`, the runtime side of
:class:`pi_core.extensions.context.SessionRuntime`.

Every method is one action of the plugin API, by name and with its types; ``ExtensionContext``
checks the session exists and delegates here. Actions called from inside a hook that would need the
session to move on first (``set_model``) are scheduled to run after the handler returns.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..ai.types import Message, Model, TextContent, UserMessage

if TYPE_CHECKING:
    from ..agent.tools import Tool
    from ..session.manager import SessionManager
    from ..toolkit.process import ProcessResult
    from .agent_session import AgentSession

DeliverAs = Literal["steer", "followUp", "nextTurn"]


class PluginBridge:
    """The plugin API of one :class:`~pi_core.AgentSession`."""

    def __init__(self, session: AgentSession) -> None:
        self._s = session

    # -- state -----------------------------------------------------------------------------------

    def get_model(self) -> Model | None:
        return self._s.model

    def get_model_registry(self) -> Any:
        return self._s.models

    def session_view(self) -> SessionManager:
        return self._s.session

    def is_idle(self) -> bool:
        return not self._s.is_streaming

    def abort(self) -> None:
        self._s.agent.abort()

    # -- tools -----------------------------------------------------------------------------------

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._s.set_active_tools(list(names))

    def get_active_tools(self) -> list[str]:
        return self._s.active_tool_names()

    def get_all_tools(self) -> list[Tool]:
        return list(self._s.host.tools)

    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None:
        # deferred and hidden tools are registered without being declared to the model
        if self._s.host.tools.add(tool, "runtime", replaces=replaces) and tool.exposure in ("direct", "model-only"):
            self._s.set_active_tools([*self._s.active_tool_names(), tool.name])

    # -- messages and entries ----------------------------------------------------------------------

    def send_message(self, message: Message | str, *, deliver_as: DeliverAs = "steer",
                     trigger_turn: bool = False) -> None:
        """pi's ``sendMessage``: queued while running; for the next prompt; a run of its own; or just stored."""
        s = self._s
        sent: Any = UserMessage(content=[TextContent(text=message)]) if isinstance(message, str) else message
        if deliver_as == "nextTurn":
            s.queue_next_turn(sent)
        elif s.is_streaming:
            (s.agent.follow_up if deliver_as == "followUp" else s.agent.steer)(sent)
            s.queue_changed()
        elif trigger_turn:
            s.background(s.run_messages([sent]))
        else:
            s.agent.messages.append(sent)
            s.persist(sent)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        return self._s.session.append_custom_entry(custom_type, data)

    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str:
        return self._s.session.append_custom_message_entry(custom_type, content, display, details)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        return self._s.session.append_context_edit(target_id, replacement)

    def set_session_name(self, name: str) -> None:
        self._s.session.append_session_info(name)

    # -- model -----------------------------------------------------------------------------------

    def set_model(self, model: Model | str) -> bool:
        s = self._s
        if isinstance(model, str):
            try:
                model = s.models.resolve(model=model)
            except LookupError:
                return False
        s.background(s.set_model(model))
        return True

    # -- processes ---------------------------------------------------------------------------------

    async def exec(self, command: str, args: Sequence[str], *, timeout: float | None = None,
                   cwd: Path | None = None) -> ProcessResult:
        from ..toolkit.process import run_process

        return await run_process([command, *args], cwd=cwd or self._s.cwd, timeout=timeout,
                                 env={**os.environ, **self._s.process_env()})


__all__ = ["PluginBridge"]
