"""What a plugin's ``ctx`` does to its session: :class:`PluginBridge`, the runtime side of
:class:`pi_core.extensions.context.SessionRuntime`.

Every method is one action of the plugin API, by name and with its types; ``ExtensionContext``
checks the session exists and delegates here. Work that must not run inside the calling hook (a run
started by ``send_message``, a compaction) is started in the background and returns at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..ai.types import ImageContent, Message, Model, TextContent, UserMessage
from ..extensions.results import ForkResult, NavigateResult, SessionResult

if TYPE_CHECKING:
    from ..agent.tools import Tool
    from ..ai.abort import AbortSignal
    from ..ai.registry import ApiProvider, ModelRegistry, ProviderConfig
    from ..extensions.mcp_servers import RegisteredMcpServer
    from ..extensions.results import ContextUsage, SlashCommandInfo
    from ..session.manager import SessionManager
    from ..session.messages import CustomMessage
    from ..toolkit.process import ProcessResult
    from .agent_session import AgentSession
    from .compaction import CompactionResult
    from .settings import Settings
    from .system_prompt import SystemPromptOptions

DeliverAs = Literal["steer", "followUp", "nextTurn"]
QueueAs = Literal["steer", "followUp"]


class PluginBridge:
    """The plugin API of one :class:`~pi_core.AgentSession`."""

    def __init__(self, session: AgentSession) -> None:
        self._s = session

    # -- state -----------------------------------------------------------------------------------

    def get_model(self) -> Model | None:
        return self._s.model

    def get_thinking_level(self) -> str:
        return self._s.thinking_level

    def get_scoped_models(self) -> list[Model]:
        return list(self._s.scoped_models)

    def get_signal(self) -> AbortSignal | None:
        return self._s.signal

    def get_model_registry(self) -> ModelRegistry:
        return self._s.models

    def session_view(self) -> SessionManager:
        return self._s.session

    def is_idle(self) -> bool:
        return not self._s.is_streaming

    def is_project_trusted(self) -> bool:
        return self._s.settings.trusted

    def has_pending_messages(self) -> bool:
        return self._s.has_pending_messages()

    def get_context_usage(self) -> ContextUsage:
        return self._s.get_context_usage()

    def get_system_prompt(self) -> str:
        return self._s.system_prompt

    def get_settings(self) -> Settings:
        return self._s.settings

    def get_commands(self, *, include_builtin: bool = False) -> list[SlashCommandInfo]:
        return self._s.get_commands(include_builtin=include_builtin)

    # -- control ---------------------------------------------------------------------------------

    def abort(self) -> None:
        self._s.agent.abort()

    def shutdown(self) -> None:
        self._s.request_shutdown()

    def compact(self, custom_instructions: str | None,
                on_complete: Callable[[CompactionResult], Any] | None,
                on_error: Callable[[Exception], Any] | None) -> None:
        from .compaction import CompactionError

        async def run() -> None:
            try:
                result = await self._s.compact(custom_instructions)
                if result is None:
                    raise CompactionError("Compaction cancelled")
            except Exception as exc:
                await _call(on_error, exc)
                return
            await _call(on_complete, result)

        self._s.background(run())

    # -- tools -----------------------------------------------------------------------------------

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._s.set_active_tools(list(names))

    def get_active_tools(self) -> list[str]:
        return self._s.active_tool_names()

    def get_declared_tools(self) -> list[str]:
        return self._s.declared_tool_names()

    def get_all_tools(self) -> list[Tool]:
        return list(self._s.host.tools)

    def register_tool(self, tool: Tool, *, replaces: str | None = None) -> None:
        # deferred and hidden tools are registered without being declared to the model; --tools and
        # --exclude-tools decide for run-time tools (an MCP server's) as for the others
        if self._s.host.tools.add(tool, "runtime", replaces=replaces) and tool.exposure in ("direct", "model-only") \
                and self._s.admits_tool(tool.name):
            self._s.set_active_tools([*self._s.active_tool_names(), tool.name])

    def mcp_servers_changed(self, servers: list[RegisteredMcpServer]) -> None:
        from ..events import McpServersChangeEvent

        self._s.notify("mcp_servers_change", McpServersChangeEvent(servers))

    # -- messages and entries ----------------------------------------------------------------------

    def send_message(self, message: Message | CustomMessage | str, *, deliver_as: DeliverAs = "steer",
                     trigger_turn: bool | None = None) -> None:
        """pi's ``sendMessage``: for the next prompt; queued while running (unless ``trigger_turn`` is
        ``False``: then added when the running turn ends); a run of its own; or just added."""
        s = self._s
        sent: Any = UserMessage(content=[TextContent(text=message)]) if isinstance(message, str) else message
        if deliver_as == "nextTurn":
            s.queue_next_turn(sent)
        elif s.is_streaming and trigger_turn is not False:
            (s.agent.follow_up if deliver_as == "followUp" else s.agent.steer)(sent)
            s.queue_changed()
        elif trigger_turn:
            s.background(s.run_message(sent))
        elif s.is_streaming:
            s.hold_message(sent)
        else:
            s.add_message(sent)

    def send_user_message(self, content: str | Sequence[TextContent | ImageContent], *,
                          deliver_as: QueueAs | None = None, expand_prompt_templates: bool = False) -> None:
        s = self._s
        text, images = _split_content(content)
        if s.is_streaming and deliver_as is None:
            raise RuntimeError("the agent is running: pass deliver_as='steer' or 'followUp' to queue the message")
        (s.queue_input if s.is_streaming else s.background)(
            s.prompt(text, images, streaming_behavior=deliver_as if s.is_streaming else None, source="extension",
                     expand=expand_prompt_templates))

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        entry_id = self._s.session.append_custom_entry(custom_type, data)
        self._s.entry_appended(entry_id)
        return entry_id

    def append_custom_message(self, custom_type: str, content: Any, *, display: bool = True,
                              details: Any = None) -> str:
        return self._s.session.append_custom_message_entry(custom_type, content, display, details)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        return self._s.session.append_context_edit(target_id, replacement)

    def set_session_name(self, name: str) -> None:
        self._s.set_session_name(name)

    def set_label(self, entry_id: str, label: str | None) -> str:
        return self._s.session.append_label_change(entry_id, label)

    # -- model, thinking, providers ----------------------------------------------------------------

    def set_model(self, model: Model | str) -> bool:
        s = self._s
        if isinstance(model, str):
            try:
                model = s.models.resolve(model=model)
            except LookupError:
                return False
        if not s.models.has_configured_auth(model) and (model.provider, model.id) != (s.model.provider, s.model.id):
            return False
        from ..events import ModelSelectEvent

        previous = s.apply_model(model)  # in effect before this returns; the hooks follow
        level = s.level_for_model(model)
        if level != s.thinking_level:
            s.set_thinking_level(level)
        s.notify("model_select", ModelSelectEvent(model, previous, "set"))
        return True

    def set_thinking_level(self, level: str) -> str:
        from ..ai.request import clamp_thinking_level

        s = self._s
        chosen = clamp_thinking_level(s.model, level)
        if chosen != s.thinking_level:
            s.set_thinking_level(chosen)
        return chosen

    def set_scoped_models(self, models: Sequence[Model]) -> None:
        self._s.scoped_models = list(models)

    def set_setting(self, key: str, value: Any, scope: Literal["global", "project"]) -> Settings:
        s = self._s
        settings = s.settings.set_global(key, value) if scope == "global" else s.settings.set_project(key, value)
        s.apply_settings(settings)
        return settings

    def register_provider(self, item: ApiProvider | ProviderConfig) -> None:
        self._s.models.register_provider(item)

    def unregister_provider(self, name: str) -> bool:
        return self._s.models.unregister_provider(name)

    # -- processes ---------------------------------------------------------------------------------

    async def exec(self, command: str, args: Sequence[str], *, timeout: float | None = None,
                   cwd: Path | None = None, signal: AbortSignal | None = None,
                   max_buffer: int | None = None) -> ProcessResult:
        from ..toolkit.process import run_process

        options: dict[str, Any] = {"max_output_bytes": max_buffer} if max_buffer is not None else {}
        return await run_process([command, *args], cwd=cwd or self._s.cwd, timeout=timeout, signal=signal,
                                 env=self._s.process_env(), **options)

    # -- commands only -----------------------------------------------------------------------------

    async def wait_for_idle(self) -> None:
        await self._s.wait_for_idle()

    async def new_session(self, parent_session: str | Path | None,
                          setup: Callable[[SessionManager], Any] | None) -> SessionResult:
        await self._s.wait_for_idle()
        return SessionResult(cancelled=not await self._s.new_session(parent_session, setup=setup))

    async def fork(self, entry_id: str, position: Literal["before", "at"]) -> ForkResult:
        await self._s.wait_for_idle()
        cancelled, text = await self._s.fork(entry_id, position)
        return ForkResult(cancelled, text)

    async def switch_session(self, path: str | Path) -> SessionResult:
        await self._s.wait_for_idle()
        switched, note = await self._s.switch_session_asking(path)
        if note:
            await self._s.ctx.ui.notify(note)
        return SessionResult(cancelled=not switched)

    async def navigate_tree(self, target_id: str, *, summarize: bool, custom_instructions: str | None,
                            replace_instructions: bool, label: str | None) -> NavigateResult:
        outcome = await self._s.navigate_tree(target_id, summarize=summarize, custom_instructions=custom_instructions,
                                              replace_instructions=replace_instructions, label=label)
        return NavigateResult(bool(outcome.get("cancelled")), bool(outcome.get("aborted")),
                              outcome.get("editor_text"), outcome.get("summary_entry"))

    async def reload(self) -> None:
        await self._s.wait_for_idle()
        await self._s.reload()

    def get_system_prompt_options(self) -> SystemPromptOptions:
        return self._s.system_prompt_options()


def _split_content(content: str | Sequence[TextContent | ImageContent]) -> tuple[str, list[ImageContent]]:
    if isinstance(content, str):
        return content, []
    text = "\n".join(b.text for b in content if isinstance(b, TextContent))  # pi joins the parts with newlines
    return text, [b for b in content if isinstance(b, ImageContent)]


async def _call(callback: Callable[[Any], Any] | None, value: Any) -> None:
    if callback is None:
        return
    result = callback(value)
    if inspect.isawaitable(result):
        await result


__all__ = ["PluginBridge"]
