"""What a tool is: a name, a JSON Schema, capabilities, and an async ``execute``.

A tool's ``execute(params, ctx)`` receives the validated arguments and a :class:`ToolContext`. It
returns a :class:`ToolResult`; raising :class:`ToolError` (or any exception) produces an error result
whose text is the exception message, so the model can react instead of the run crashing.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

from ..ai.abort import AbortSignal
from ..ai.types import ImageContent, TextContent, ToolDeclaration
from ..offloop import in_worker

if TYPE_CHECKING:
    from ..extensions.context import ExtensionContext
    from ..toolkit.process import ShellConfig


def _shell_config() -> ShellConfig:
    from ..toolkit.process import ShellConfig

    return ShellConfig()

ToolContent = Union[TextContent, ImageContent]


@dataclass(frozen=True)
class ToolCapabilities:
    """What a tool may do, declared by the tool so that policy plugins need no list of tool names.

    In a batch of the model's calls, ``concurrency_safe`` tools may run in parallel with each other and
    every other tool runs alone. Calls a tool makes (``ToolContext.execute_tool``, e.g. from codemode
    scripts) all run concurrently, as in pi, except those of ``sequential`` tools (pi's
    ``executionMode: "sequential"``), which wait for each other and run one at a time, in call order.
    """

    reads: bool = False
    writes: bool = False
    executes: bool = False
    network: bool = False
    concurrency_safe: bool = False
    sequential: bool = False


@dataclass
class ToolResult:
    """The outcome of one tool call.

    ``content`` is what the model sees; ``details`` is structured data for hosts and UIs (never sent
    to the model). ``is_error`` marks a failure that still has content worth showing.
    """

    content: list[ToolContent] = field(default_factory=list)
    details: Any = None
    is_error: bool = False
    structured_content: Any = None
    """Machine-readable output (pi 1.6 sends it to hosts as ``structuredContent``, not to the model)."""
    terminate: bool = False
    """End the run after this batch of tool calls, without asking the model again (when every result of
    the batch terminates): a tool whose result is the answer (structured output) says so."""

    @classmethod
    def text(cls, text: str, *, details: Any = None, is_error: bool = False, terminate: bool = False) -> ToolResult:
        return cls(content=[TextContent(text=text)], details=details, is_error=is_error, terminate=terminate)

    def text_content(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def to_json(self) -> dict[str, Any]:
        """The result as pi's event stream shows it (``tool_execution_end.result``)."""
        data: dict[str, Any] = {"content": [b.to_json() for b in self.content]}
        if self.details is not None:
            data["details"] = self.details
        if self.structured_content is not None:
            data["structuredContent"] = self.structured_content
        return data


class ToolError(Exception):
    """Raise from ``execute`` to fail the call with this message (and optional ``details``)."""

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


UpdateCallback = Callable[[ToolResult], object]


@dataclass
class ToolCallOutcome:
    """What :meth:`ToolContext.execute_tool` returns: the call as it was made and how it ended.

    :ivar tool_call_id: ``<calling id>/<n>``.
    :ivar arguments: the arguments after ``before_tool_call`` handlers (as validated).
    :ivar result: the result after ``after_tool_call`` handlers; an error result for an unknown tool,
        invalid arguments, a blocked call or a tool that raised.
    """

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]
    result: ToolResult
    duration_ms: int | None = None

    @property
    def is_error(self) -> bool:
        return self.result.is_error


class NestedCaller(Protocol):
    """Runs the calls tools make to other tools (the session provides it)."""

    def callable_tools(self) -> list[Tool]: ...

    async def execute(self, caller_id: str, name: str, arguments: dict[str, Any], signal: AbortSignal,
                      on_update: UpdateCallback | None) -> ToolCallOutcome: ...


@dataclass
class ToolContext:
    """Everything a running tool may use besides its arguments."""

    tool_call_id: str
    cwd: Path
    signal: AbortSignal = field(default_factory=AbortSignal)
    on_update: UpdateCallback | None = None
    """Report partial output; the host turns it into ``tool_execution_update`` events."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for processes the tool starts (``PI_SESSION_ID``, ``PI_MODEL``, ...)."""
    session: ExtensionContext | None = None
    """The session's plugin context (ui, session view, API); ``None`` when a tool runs standalone."""
    nested: NestedCaller | None = None
    """Runs :meth:`execute_tool` calls; set by the session (``None`` when a tool runs standalone)."""
    shell: ShellConfig = field(default_factory=lambda: _shell_config())
    """The shell and command prefix the settings ask for (``shellPath``, ``shellCommandPrefix``)."""

    def update(self, partial: ToolResult) -> None:
        if self.on_update is not None:
            self.on_update(partial)

    @property
    def tools(self) -> list[Tool]:
        """The tools :meth:`execute_tool` can call: the active ``direct`` tools and every
        ``deferred`` tool (never ``model-only`` or ``hidden`` ones)."""
        return self.nested.callable_tools() if self.nested is not None else []

    async def execute_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                           signal: AbortSignal | None = None,
                           on_update: UpdateCallback | None = None) -> ToolCallOutcome:
        """Run another tool as a model-issued call runs: argument validation, ``before_tool_call`` and
        ``after_tool_call`` handlers, ``tool_execution_*`` events, all carrying
        ``parent_tool_call_id``. The call is not part of the transcript; a bounded record of it is
        kept as ``nested_calls`` on this tool's result message.

        Never raises for a failing call: unknown tools, invalid arguments, blocked calls and tools
        that raised come back as error results (``outcome.is_error``).

        :param signal: defaults to this call's signal.
        :param on_update: receives the nested tool's partial results too.
        """
        if self.nested is None:
            return ToolCallOutcome(f"{self.tool_call_id}/0", name, dict(arguments or {}),
                                   ToolResult.text("Tools can only call other tools in a session", details={},
                                                   is_error=True))
        return await self.nested.execute(self.tool_call_id, name, dict(arguments or {}), signal or self.signal,
                                         on_update)

    def resolve(self, path: str) -> Path:
        """Resolve a path argument the way every built-in tool does (relative to ``cwd``, ``~``)."""
        from .paths import resolve_tool_path

        return resolve_tool_path(path, self.cwd)


ExecuteFn = Callable[[dict[str, Any], ToolContext], Union[Awaitable[ToolResult], ToolResult]]

Exposure = Literal["direct", "deferred", "hidden", "model-only"]
ReachesTools = Callable[[dict[str, Any]], Union[Sequence[str], Literal["all"]]]


@dataclass(frozen=True)
class ToolNamespace:
    """A group of tools (the tools of one MCP server): tool search ranks by it, codemode lists by it.

    :param name: e.g. ``mcp__docs``.
    :param aliases: other names that find it (``describeNamespace("docs")``).
    :param description: one line on what the group offers.
    :param instructions: longer usage notes (an MCP server's instructions).
    """

    name: str
    aliases: tuple[str, ...] = ()
    description: str | None = None
    instructions: str | None = None


@dataclass
class Tool:
    """A tool the model can call.

    :param name: the name the model uses; unique across plugins.
    :param description: what the model is told the tool does.
    :param parameters: JSON Schema of the arguments (an ``object`` schema).
    :param execute: ``(params, ctx) -> ToolResult``, ``def`` or ``async def``.
    :param label: a short human label for UIs (defaults to the name).
    :param capabilities: what the tool may do; see :class:`ToolCapabilities`.
    :param prompt_snippet: one line for the system prompt's tool list; tools without one are only
        covered by the "other tools may be available" line.
    :param prompt_guidelines: rules added to the system prompt while the tool is active.
    :param prepare_arguments: a shim run on raw arguments before validation (legacy shapes).
    :param exposure: how the model reaches the tool. ``direct``: declared while active (the default).
        ``deferred``: not declared; reached through tools that reach other tools (``codemode``
        scripts call it, ``tool_search`` activates it). ``hidden``: registered but unreachable.
        ``model-only``: declared while active, never called from other tools (codemode itself).
    :param namespace: the group the tool belongs to (:class:`ToolNamespace`), for search and listings.
    :param output_schema: JSON Schema of ``structured_content``; codemode scripts then receive that
        value instead of the text.
    :param annotations: behaviour hints as MCP names them (``readOnlyHint``, ``destructiveHint``,
        ``idempotentHint``, ``openWorldHint``), for permission policies.
    :param reaches_tools: for a tool that calls other tools: ``(arguments) -> names or "all"``, the
        words of the call that may name tools (plugins that provide tools late, such as MCP, get
        those ready before the call runs).
    :param render_call: ``(args, theme, context) -> component | lines | None``: how the terminal shows the
        call, also while it runs (``None`` or returning ``None``: the default header). ``context`` is a
        :class:`pi_core.ToolRenderContext` (optional: a renderer without the parameter is called
        without it). See docs/tui.md.
    :param render_result: ``(result, options, theme, context) -> component | lines | None``: how the
        terminal shows the result (``options``: ``expanded``, ``is_partial`` — a partial result while the
        tool runs —, ``is_error``). Another plugin's tool, a built-in included, is restyled without
        replacing it through ``ctx.register_tool_renderer``.
    :param default_active: whether a plugin's tool is active when ``--tools`` does not name the tools:
        plugin tools are, as in pi (declared ones: ``direct`` or ``model-only``); a tool that should only
        be opted into says ``False``. The built-in tools follow ``defaultTools`` instead.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: ExecuteFn
    label: str | None = None
    capabilities: ToolCapabilities = field(default_factory=ToolCapabilities)
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    prepare_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    exposure: Exposure = "direct"
    namespace: ToolNamespace | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, bool] = field(default_factory=dict)
    reaches_tools: ReachesTools | None = None
    default_active: bool = True
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None

    def declaration(self) -> ToolDeclaration:
        return ToolDeclaration(name=self.name, description=self.description, parameters=self.parameters)

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call ``execute`` and await it if needed; errors propagate to the caller. A plain ``def``
        runs in a worker thread, so a blocking body cannot freeze the loop: an abort (Ctrl-C, SIGTERM)
        still ends the call, and the thread's late result is dropped."""
        if inspect.iscoroutinefunction(self.execute):
            result = self.execute(params, ctx)
        else:
            result = await in_worker(lambda: self.execute(params, ctx))
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, ToolResult):
            raise TypeError(f"tool {self.name!r} returned {type(result).__name__}, not ToolResult")
        return result


__all__ = [
    "ExecuteFn",
    "Exposure",
    "ReachesTools",
    "NestedCaller",
    "Tool",
    "ToolCallOutcome",
    "ToolCapabilities",
    "ToolContent",
    "ToolContext",
    "ToolError",
    "ToolNamespace",
    "ToolResult",
    "UpdateCallback",
]
