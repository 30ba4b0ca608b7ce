"""The ``ctx`` every hook handler receives: the session's public face and the plugin API handle.

One context belongs to one session. Its properties read live state. Actions are delegated to the
session runtime; before a session runs (for example while ``pi plugins`` lists plugins) they raise
:class:`RuntimeError`, as pi's API does during extension loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..agent.tools import Tool
    from ..ai.types import Message, Model
    from ..session.manager import SessionManager
    from ..toolkit.process import ProcessResult

Level = Literal["info", "warning", "error"]
DeliverAs = Literal["steer", "followUp", "nextTurn"]


class UI:
    """Dialogs and notices. This base class is what headless modes (print, JSON, SDK) use:
    dialogs answer with their "cancel" value and notices go nowhere, as in pi."""

    has_ui: bool = False

    async def notify(self, message: str, level: Level = "info") -> None:
        return None

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def secret(self, title: str, *, timeout: float | None = None) -> str | None:
        """Like :meth:`input` for a secret (an API key): hosts do not repeat the answer in their log."""
        return await self.input(title, timeout=timeout)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return None

    async def set_status(self, key: str, text: str | None) -> None:
        return None

    async def set_title(self, title: str) -> None:
        return None

    async def set_widget(self, key: str, lines: Sequence[str] | None, *, placement: str = "aboveEditor") -> None:
        return None

    async def set_editor_text(self, text: str) -> None:
        return None

    async def paste_to_editor(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""


class SessionRuntime(Protocol):
    """What a running session offers its plugins, one method per action (implemented by
    ``pi_core.runtime.bridge.PluginBridge``). :class:`ExtensionContext` delegates to it."""

    def get_model(self) -> Model | None: ...
    def get_model_registry(self) -> Any: ...
    def session_view(self) -> SessionManager: ...
    def is_idle(self) -> bool: ...
    def abort(self) -> None: ...
    def set_active_tools(self, names: Sequence[str]) -> None: ...
    def get_active_tools(self) -> list[str]: ...
    def get_all_tools(self) -> list[Tool]: ...
    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None: ...
    def send_message(self, message: Message | str, *, deliver_as: DeliverAs = "steer",
                     trigger_turn: bool = False) -> None: ...
    def append_entry(self, custom_type: str, data: Any = None) -> str: ...
    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str: ...
    def append_context_edit(self, target_id: str, replacement: Any) -> str: ...
    def set_session_name(self, name: str) -> None: ...
    def set_model(self, model: Model | str) -> bool: ...
    async def exec(self, command: str, args: Sequence[str], *, timeout: float | None = None,
                   cwd: Path | None = None) -> ProcessResult: ...


class ExtensionContext:
    """Passed as ``ctx`` to every hook.

    :ivar cwd: the session's working directory.
    :ivar ui: dialogs and notices (:class:`UI`); harmless defaults without a UI.
    :ivar mode: ``tui``, ``rpc``, ``json``, ``print`` or ``sdk``.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        ui: UI | None = None,
        mode: str = "sdk",
        runtime: SessionRuntime | None = None,
        flags: dict[str, Any] | None = None,
    ) -> None:
        self.cwd = Path(cwd)
        self.ui = ui or UI()
        self.mode = mode
        self._runtime = runtime
        self._flags = dict(flags or {})

    # -- state ---------------------------------------------------------------------------------

    @property
    def has_ui(self) -> bool:
        return self.ui.has_ui

    @property
    def model(self) -> Model | None:
        return self._runtime.get_model() if self._runtime else None

    @property
    def model_registry(self) -> Any:
        """The session's :class:`pi_core.ai.ModelRegistry` (providers, credentials); ``None`` outside a
        session."""
        return self._runtime.get_model_registry() if self._runtime else None

    @property
    def session(self) -> SessionManager:
        """A read-only view of the session (entries, branch, leaf, file, id)."""
        return self._require().session_view()

    def is_idle(self) -> bool:
        return self._runtime.is_idle() if self._runtime else True

    def get_flag(self, name: str) -> Any:
        """The value of a flag registered through ``register_flags`` (``None`` if unknown)."""
        return self._flags.get(name.lstrip("-"))

    # -- actions -------------------------------------------------------------------------------

    def abort(self) -> None:
        if self._runtime:
            self._runtime.abort()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Choose which registered tools the model is told about from the next request on.

        This is not a sandbox: it changes what the model is offered, nothing else.
        """
        self._require().set_active_tools(list(names))

    def get_active_tools(self) -> list[str]:
        return self._require().get_active_tools()

    def get_all_tools(self) -> list[Tool]:
        return self._require().get_all_tools()

    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None:
        """Register a tool discovered at run time; it is activated unless its ``exposure`` is
        ``deferred`` or ``hidden`` (those are reached through ``codemode`` and ``tool_search``)."""
        self._require().register_tool(tool, replaces=replaces)

    def send_message(
        self, message: Message | str, *, deliver_as: DeliverAs = "steer", trigger_turn: bool = False,
    ) -> None:
        """Queue a message: as steering, as a follow-up, or for the next prompt."""
        self._require().send_message(message, deliver_as=deliver_as, trigger_turn=trigger_turn)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Persist plugin state in the session (a ``custom`` entry, never sent to the model)."""
        return self._require().append_entry(custom_type, data)

    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str:
        """Add a ``custom_message`` entry: the model sees it as user input."""
        return self._require().append_custom_message(custom_type, content, display=display, details=details)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        """Replace (or with ``None`` omit) an entry's contribution to the model's context."""
        return self._require().append_context_edit(target_id, replacement)

    def set_session_name(self, name: str) -> None:
        self._require().set_session_name(name)

    def set_model(self, model: Model | str) -> bool:
        return self._require().set_model(model)

    async def exec(self, command: str, args: Sequence[str] = (), *, timeout: float | None = None,
                   cwd: Path | None = None) -> ProcessResult:
        """Run a program without a shell (timeout, abort, process-group kill); returns a
        :class:`pi_core.ProcessResult` (``stdout``, ``stderr``, ``exit_code``, ``killed``)."""
        return await self._require().exec(command, list(args), timeout=timeout, cwd=cwd)

    # -- plumbing ------------------------------------------------------------------------------

    def _require(self) -> SessionRuntime:
        if self._runtime is None:
            raise RuntimeError("no session is running; this action is available from session_start on")
        return self._runtime


__all__ = ["UI", "ExtensionContext", "SessionRuntime"]
