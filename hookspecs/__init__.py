"""Hook specifications for pi plugins: the whole contract between the core and every plugin.

Built-in tools, commands and providers are plugins like any other and use only these hooks. Plugins
implement a hook by defining a function of the same name marked with ``pi_core.hookimpl``::

    from pi_core import hookimpl

    @hookimpl
    def before_tool_call(event, ctx):
        if event.tool_name == "bash" and "rm -rf" in event.arguments["command"]:
            return Block("not on my watch")

**Dispatch.** The core never calls ``pm.hook.<name>(...)`` directly. Every hook has a *mode* (recorded
here, in :data:`DISPATCH_MODES`) that the dispatcher applies:

* ``collect`` — every handler runs; results are collected in order.
* ``chain`` — every handler runs and sees the previous handler's output: it may change the event in
  place or return a value that replaces part of it (each event documents what a return value means).
* ``first`` — handlers run until one returns a decisive value; later handlers are not called.
* ``notify`` — every handler runs; return values are ignored.

**Order.** Handlers run in load order: built-in plugins, then pip-installed plugins, then global
extensions (``~/.pi/agent/extensions``), then project extensions (``.pi/extensions``), then ``-e``
files; inside one module in definition order. ``tryfirst``/``trylast`` move a handler to the front or
the back. (This is pi's order, not pluggy's last-registered-first.)

**Errors.** An exception in a handler is reported with the plugin's name and the next handler still
runs, except in ``before_tool_call``, which fails closed: an exception blocks the call.

**async.** Any handler may be ``def`` or ``async def``.

**Arguments.** A handler may accept fewer arguments than the spec (``def context(event)`` is fine).
Never give a handler argument a default value: pluggy then never passes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pluggy

if TYPE_CHECKING:
    from pi_core.events import (
        AfterToolCallEvent,
        AgentBeforeSettleEvent,
        AgentEndEvent,
        AgentStartEvent,
        AgentStartPatch,
        Block,
        BeforeAgentStartEvent,
        BeforeToolCallEvent,
        BoundaryPatch,
        Cancel,
        CompactionOverride,
        ContextEvent,
        ContextWithSystemEvent,
        Handled,
        InputEvent,
        McpServersChangeEvent,
        MessageEndEvent,
        MessageStartEvent,
        MessageUpdateEvent,
        ModelSelectEvent,
        ProjectTrustEvent,
        ProviderHeadersEvent,
        ProviderRequestEvent,
        ProviderResponseEvent,
        ProviderStreamEvent,
        ResourcePaths,
        ResourcesDiscoverEvent,
        SessionBeforeCompactEvent,
        SessionBeforeForkEvent,
        SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent,
        SessionCompactEvent,
        SessionCompactFailedEvent,
        SessionShutdownEvent,
        SessionStartEvent,
        SessionTreeEvent,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
        ToolExecutionUpdateEvent,
        ToolResultPatch,
        Transform,
        TreeOverride,
        ThinkingLevelSelectEvent,
        TrustDecision,
        TurnEndEvent,
        TurnStartEvent,
        UserBashEvent,
        UserBashResult,
    )
    from pi_core.extensions.context import ExtensionContext
    from pi_core.runtime.events import AgentSettledEvent, SessionInfoChangedEvent

PROJECT = "pi"
_hookspec = pluggy.HookspecMarker(PROJECT)

Mode = Literal["collect", "chain", "first", "notify"]

#: hook name -> dispatch mode; read by ``pi_core.extensions.dispatch``.
DISPATCH_MODES: dict[str, Mode] = {}

#: hooks that fail closed: an exception in a handler (or an answer of the wrong shape) is a decision
#: (block), not a reported error.
FAIL_CLOSED: frozenset[str] = frozenset({"before_tool_call"})

#: pi's event names that are spelt differently here (``pi plugins doctor`` suggests ours).
PI_NAMES: dict[str, str] = {"tool_call": "before_tool_call", "tool_result": "after_tool_call"}

_F = TypeVar("_F", bound=Callable[..., Any])


def _spec(mode: Mode) -> Callable[[_F], _F]:
    def mark(fn: _F) -> _F:
        DISPATCH_MODES[fn.__name__] = mode
        return _hookspec(fn)

    return mark


# -------------------------------------------------------------------------------------------------
# Registration: what a plugin contributes. Called once per session, when the plugin manager is built.
# -------------------------------------------------------------------------------------------------


@_spec("collect")
def register_tools(register: Callable[..., None]) -> None:
    """Register tools the model can call.

    Call ``register(tool, replaces=None)`` once per :class:`pi_core.Tool`. Return nothing.

    Tool names are unique. If a name is already taken, the first registration in load order
    keeps it and the conflict is reported naming both plugins (``pi plugins doctor``). To replace a
    built-in tool on purpose, pass ``replaces="<name>"``; the replacement is shown to the user.

    :param register: the registration callback; it records which plugin registered each tool.

    Every registered tool is *available*; which tools are *active* (told to the model) is chosen by
    ``--tools``, ``--toolset`` and ``set_active_tools``.

    Use in .pi/extensions: yes; project extensions load only in a trusted project.
    """


@_spec("collect")
def register_commands(register: Callable[..., None]) -> None:
    """Register slash commands (``/name args``).

    Call ``register(command, replaces=None)`` with a :class:`pi_core.Command`. Return nothing.
    Conflicts are handled as for tools.

    :param register: the registration callback.

    Use in .pi/extensions: yes.
    """


@_spec("collect")
def register_providers(register: Callable[..., None]) -> None:
    """Register model providers and API implementations (wire protocols).

    Call ``register(item, replaces=None)`` with a :class:`pi_core.ai.ApiProvider` (an API
    implementation such as ``anthropic-messages``) or a :class:`pi_core.ai.ProviderConfig` (a provider:
    base URL, API key variable, models). Return nothing. API names and provider names are each unique;
    conflicts are handled as for tools. Models merge as in pi: built-in catalog, then ``models.json``,
    then providers from other plugins.

    :param register: the registration callback.

    Use in .pi/extensions: yes.
    """


@_spec("collect")
def register_toolsets(register: Callable[..., None]) -> None:
    """Register named sets of tools for ``pi --toolset NAME``.

    Call ``register(toolset)`` with a :class:`pi_core.Toolset` (a name and tool names). Return
    nothing. Unknown tool names in a set are reported when the set is used.

    :param register: the registration callback.

    Use in .pi/extensions: yes.
    """


@_spec("collect")
def register_flags(register: Callable[..., None]) -> None:
    """Register command-line flags (``pi --my-flag``).

    Call ``register(flag)`` with a :class:`pi_core.Flag`. Return nothing. The value is read with
    ``ctx.get_flag(name)``. Flags appear in ``pi --help``. The first registration of a name wins.

    :param register: the registration callback.

    Use in .pi/extensions: yes, but only flags of loaded (trusted) extensions exist.
    """


@_spec("collect")
def register_cli_commands(register: Callable[..., None]) -> None:
    """Register ``pi`` sub-commands (``pi my-command ...``).

    Call ``register(fn, name=None, help=None)`` with a plain function whose parameters become
    typer options and arguments (a parameter typed ``typer.Context`` receives the context; its
    ``obj`` is the :class:`pi_core.PluginHost`, for commands that need the providers or tools).
    ``pi "a prompt"`` keeps meaning a prompt: a word is only a sub-command if it is the first word
    and a registered command's exact name. Return nothing.

    :param register: the registration callback.

    Use in .pi/extensions: yes.
    """


@_spec("collect")
def resources_discover(event: ResourcesDiscoverEvent, ctx: ExtensionContext) -> ResourcePaths | None:
    """Contribute skill and prompt-template locations.

    Return :class:`pi_core.ResourcePaths` or ``None``. All results are collected, in load order.

    :param event: ``cwd`` and ``reason`` (``startup`` or ``reload``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


# -------------------------------------------------------------------------------------------------
# Model input: per-request transforms. They never rewrite the stored history.
# -------------------------------------------------------------------------------------------------


@_spec("chain")
def context(event: ContextEvent, ctx: ExtensionContext) -> list[Any] | None:
    """Change the conversation messages of one request.

    ``event.messages`` is a copy of the messages about to be sent, *without* the system prompt. Change
    it in place, or return a new list; the next handler sees the result. The core attaches the system
    prompt and the tool declarations afterwards, so a handler cannot lose them. Nothing is stored:
    the session history is unchanged.

    :param event: :class:`pi_core.ContextEvent` (``messages``, ``model``).
    :param ctx: the session context.

    Runs before every model request, before ``context_with_system``.

    Use in .pi/extensions: yes.
    """


@_spec("chain")
def context_with_system(event: ContextWithSystemEvent, ctx: ExtensionContext) -> Any | None:
    """Change the complete request: system prompt, messages and tool declarations.

    The event holds the request exactly as it will be sent. Change it in place, or return an object
    with any of ``system_prompt``, ``messages``, ``tools`` (a :class:`pi_core.ai.Context` will do),
    or a message list. The handler owns all of it; what it leaves is sent verbatim. Nothing is stored.

    :param event: :class:`pi_core.ContextWithSystemEvent`.
    :param ctx: the session context.

    Runs after every ``context`` handler.

    Use in .pi/extensions: yes.
    """


@_spec("chain")
def before_provider_request(event: ProviderRequestEvent, ctx: ExtensionContext) -> dict[str, Any] | None:
    """Inspect or replace the raw provider payload (the JSON body) before it is posted.

    Change ``event.payload`` in place or return a new dict, which replaces it for later handlers and
    for the request.

    :param event: :class:`pi_core.ProviderRequestEvent` (``payload``, ``model``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


# -------------------------------------------------------------------------------------------------
# Tools
# -------------------------------------------------------------------------------------------------


@_spec("first")
def before_tool_call(event: BeforeToolCallEvent, ctx: ExtensionContext) -> Block | dict[str, Any] | None:
    """Gate a tool call after its arguments were validated and before it runs.

    Return :class:`pi_core.Block` to stop the call: the model receives ``reason`` as an error result
    and later handlers are not called (pi's ``{"block": True, "reason": ...}`` works too). Change
    ``event.arguments`` in place (or return a new dict, which must be valid for the tool) to
    rewrite the arguments; they are not validated again. Return ``None`` to let the call proceed.

    **Fails closed:** an exception in a handler blocks the call with the exception's message.

    Runs for calls other tools make too (``ToolContext.execute_tool``, codemode scripts): those
    have ``event.parent_tool_call_id`` set, and a block fails only that nested call.

    :param event: :class:`pi_core.BeforeToolCallEvent` (``tool_name``, ``tool_call_id``,
        ``arguments``, ``tool`` with its capabilities, ``assistant_message``,
        ``parent_tool_call_id``).
    :param ctx: the session context.

    Use in .pi/extensions: yes; this is the hook for permission policies.
    """


@_spec("chain")
def after_tool_call(event: AfterToolCallEvent, ctx: ExtensionContext) -> ToolResultPatch | None:
    """Patch a tool's result before the model sees it.

    Change ``event.content``, ``event.details`` or ``event.is_error`` in place, or return a
    :class:`pi_core.ToolResultPatch`; later handlers see the patched result. Runs for executed calls,
    including ones that raised; not for calls that were unknown, invalid or blocked. Nested calls
    (``ToolContext.execute_tool``) have ``event.parent_tool_call_id`` set.

    :param event: :class:`pi_core.AfterToolCallEvent`.
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


# -------------------------------------------------------------------------------------------------
# Compaction and branch summary
# -------------------------------------------------------------------------------------------------


@_spec("first")
def session_before_compact(
    event: SessionBeforeCompactEvent, ctx: ExtensionContext
) -> Cancel | CompactionOverride | None:
    """Cancel a compaction or supply its summary.

    Return :class:`pi_core.Cancel` to leave the session as it is, or
    :class:`pi_core.CompactionOverride` to use that summary instead of asking the model (the entry is
    then marked as produced by a plugin). The first decisive result wins.

    :param event: :class:`pi_core.SessionBeforeCompactEvent` (``preparation``: what would be
        summarised and kept; ``branch_entries``; ``custom_instructions``; ``reason``: manual,
        threshold or overflow; ``will_retry``; ``signal``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


@_spec("notify")
def session_compact(event: SessionCompactEvent, ctx: ExtensionContext) -> None:
    """A compaction entry was appended to the session.

    :param event: :class:`pi_core.SessionCompactEvent` (``compaction_entry``, ``from_plugin``,
        ``reason``, ``will_retry``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


@_spec("first")
def session_before_tree(event: SessionBeforeTreeEvent, ctx: ExtensionContext) -> Cancel | TreeOverride | None:
    """Cancel a tree navigation, or supply its branch summary, instructions or label.

    Return :class:`pi_core.Cancel` to stay where the session is, or :class:`pi_core.TreeOverride`.
    The first decisive result wins.

    :param event: :class:`pi_core.SessionBeforeTreeEvent` (``preparation``: target, old leaf, common
        ancestor, entries to summarise, whether the user wants a summary; ``signal``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


@_spec("notify")
def session_tree(event: SessionTreeEvent, ctx: ExtensionContext) -> None:
    """The session moved to another point of its tree.

    :param event: :class:`pi_core.SessionTreeEvent` (``new_leaf_id``, ``old_leaf_id``,
        ``summary_entry``, ``from_plugin``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


@_spec("notify")
def mcp_servers_change(event: McpServersChangeEvent, ctx: ExtensionContext) -> None:
    """A plugin registered or unregistered an MCP server (``ctx.register_mcp_server``).

    The plugin that connects MCP servers (the built-in ``mcp``) handles it: it connects new servers
    next to those of ``mcp.json`` and closes removed ones. Servers registered before the session
    started are read with ``ctx.get_mcp_servers()`` in ``session_start`` instead.

    :param event: :class:`pi_core.McpServersChangeEvent` (``servers``: every registered server
        after the change, as :class:`pi_core.RegisteredMcpServer`).
    :param ctx: the session context.

    Runs after the registering handler returned. Use in .pi/extensions: yes, to connect servers yourself.
    """


# -------------------------------------------------------------------------------------------------
# Run: a prompt, its turns, its messages and tool executions
# -------------------------------------------------------------------------------------------------


@_spec("chain")
def input(event: InputEvent, ctx: ExtensionContext) -> Transform | Handled | None:  # noqa: A001
    """Transform or consume user input before it becomes a prompt.

    Return :class:`pi_core.Transform` (or change ``event.text`` in place) to rewrite the input for
    later handlers and the model; return :class:`pi_core.Handled` to consume it (no run starts;
    later handlers are not called).

    :param event: :class:`pi_core.InputEvent` (``text``, ``images``, ``source``,
        ``streaming_behavior``).
    :param ctx: the session context.

    Runs after slash commands are recognised and before prompt templates are expanded.

    Use in .pi/extensions: yes.
    """


@_spec("chain")
def before_agent_start(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> AgentStartPatch | None:
    """Once per prompt, before the run: change the system prompt or add a message.

    Set ``event.system_prompt`` or return :class:`pi_core.AgentStartPatch`; each handler sees the
    previous handler's prompt. Messages added are appended after the user's prompt.

    :param event: :class:`pi_core.BeforeAgentStartEvent` (``prompt``, ``images``, ``system_prompt``,
        ``messages``).
    :param ctx: the session context.

    Use in .pi/extensions: yes.
    """


@_spec("notify")
def agent_start(event: AgentStartEvent, ctx: ExtensionContext) -> None:
    """A run started (a prompt, a retry or a continuation).

    :param event: :class:`pi_core.AgentStartEvent`.
    :param ctx: the session context.
    """


@_spec("notify")
def agent_end(event: AgentEndEvent, ctx: ExtensionContext) -> None:
    """A run ended; ``event.messages`` holds the messages it added.

    :param event: :class:`pi_core.AgentEndEvent`.
    :param ctx: the session context.
    """


@_spec("notify")
def turn_start(event: TurnStartEvent, ctx: ExtensionContext) -> None:
    """A turn (one model request and the tool calls it asks for) started.

    :param event: :class:`pi_core.TurnStartEvent` (``turn_index`` from 0 per run, ``timestamp``).
    :param ctx: the session context.
    """


@_spec("chain")
def turn_end(event: TurnEndEvent, ctx: ExtensionContext) -> BoundaryPatch | None:
    """A turn ended: its assistant message and tool results are stored. An actionable boundary.

    Return :class:`pi_core.BoundaryPatch` (or pi's ``{"entries": [...], "continue": True}``) to append
    entries (``custom``, ``custom_message``, ``context_edit``, ``compaction`` drafts; the whole proposal,
    starting from ``event.entries``) and/or ask for one more model request. Each handler sees the
    proposal so far. The entries are appended after every handler ran, in order. ``continue_`` never
    suppresses work that follows anyway (tool results, steering) and is ignored for ``error`` and
    ``aborted`` turns; guard it, or the next turn asks again.

    :param event: :class:`pi_core.TurnEndEvent` (``turn_index``, the assistant ``message``,
        ``tool_results`` in the order the model issued the calls, ``message_entry_id``,
        ``tool_result_entry_ids``, ``outcome``, ``entries``, ``continue_``).
    :param ctx: the session context.
    """


@_spec("notify")
def message_start(event: MessageStartEvent, ctx: ExtensionContext) -> None:
    """A message (user, assistant, tool result, system) started.

    :param event: :class:`pi_core.MessageStartEvent`.
    :param ctx: the session context.
    """


@_spec("notify")
def message_update(event: MessageUpdateEvent, ctx: ExtensionContext) -> None:
    """The assistant message being streamed changed (one call per streamed delta).

    This hook is hot: keep handlers cheap. With no handler it costs nothing.

    :param event: :class:`pi_core.MessageUpdateEvent` (the partial ``message`` and the provider's
        ``assistant_message_event``).
    :param ctx: the session context.
    """


@_spec("chain")
def message_end(event: MessageEndEvent, ctx: ExtensionContext) -> Any | None:
    """A message is final (and, for session messages, about to be persisted).

    Return a replacement message with the same ``role`` (or pi's ``{"message": ...}``) to change what is
    stored and sent from now on; later handlers see the replacement. A different role is an error.

    :param event: :class:`pi_core.MessageEndEvent`.
    :param ctx: the session context.
    """


@_spec("notify")
def tool_execution_start(event: ToolExecutionStartEvent, ctx: ExtensionContext) -> None:
    """A tool call starts (before validation and ``before_tool_call``).

    :param event: :class:`pi_core.ToolExecutionStartEvent` (``tool_call_id``, ``tool_name``, raw
        ``args``).
    :param ctx: the session context.
    """


@_spec("notify")
def tool_execution_update(event: ToolExecutionUpdateEvent, ctx: ExtensionContext) -> None:
    """A running tool reported partial output.

    :param event: :class:`pi_core.ToolExecutionUpdateEvent` (``partial_result``).
    :param ctx: the session context.
    """


@_spec("notify")
def tool_execution_end(event: ToolExecutionEndEvent, ctx: ExtensionContext) -> None:
    """A tool call finished; events come in completion order when tools run in parallel.

    :param event: :class:`pi_core.ToolExecutionEndEvent` (``result``, ``is_error``).
    :param ctx: the session context.
    """


@_spec("notify")
def model_select(event: ModelSelectEvent, ctx: ExtensionContext) -> None:
    """The session's model changed.

    :param event: :class:`pi_core.ModelSelectEvent` (``model``, ``previous_model``, ``source``:
        set, cycle or restore).
    :param ctx: the session context.
    """


# -------------------------------------------------------------------------------------------------
# Session lifecycle
# -------------------------------------------------------------------------------------------------


@_spec("notify")
def session_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
    """A session was created, resumed, forked or reloaded. Start background work here, not at import.

    :param event: :class:`pi_core.SessionStartEvent` (``reason``, ``previous_session_file``).
    :param ctx: the session context.
    """


@_spec("first")
def session_before_switch(event: SessionBeforeSwitchEvent, ctx: ExtensionContext) -> Cancel | None:
    """Veto switching to a new or another session.

    Return :class:`pi_core.Cancel` to stay in the current session; the first decisive result wins.

    :param event: :class:`pi_core.SessionBeforeSwitchEvent` (``reason``: new or resume,
        ``target_session_file``).
    :param ctx: the session context.
    """


@_spec("first")
def session_before_fork(event: SessionBeforeForkEvent, ctx: ExtensionContext) -> Cancel | None:
    """Veto a fork (a new session file from a point of this one).

    Return :class:`pi_core.Cancel` to prevent it; the first decisive result wins.

    :param event: :class:`pi_core.SessionBeforeForkEvent` (``entry_id``, ``position``).
    :param ctx: the session context.
    """


@_spec("notify")
def session_shutdown(event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
    """The session is closing (exit, reload, or before switching). Release resources here.

    Every handler runs, even if an earlier one fails.

    :param event: :class:`pi_core.SessionShutdownEvent` (``reason``, ``target_session_file``).
    :param ctx: the session context.
    """


# -------------------------------------------------------------------------------------------------
# Trust, settling, the user's shell, provider traffic, thinking, failed compactions
# -------------------------------------------------------------------------------------------------


@_spec("first")
def project_trust(event: ProjectTrustEvent, ctx: ExtensionContext) -> TrustDecision | None:
    """Decide whether to trust a project whose trust is not decided yet, before its code loads.

    Return :class:`pi_core.TrustDecision` (or pi's ``{"trusted": "yes", "remember": True}``): the first
    ``yes`` or ``no`` wins and replaces pi's own question; ``remember`` stores it in the trust store.
    ``undecided`` (or ``None``) leaves it to later handlers, the stored decision and
    ``defaultProjectTrust``.

    :param event: :class:`pi_core.ProjectTrustEvent` (``cwd``).
    :param ctx: a context with ``cwd``, ``mode`` and ``ui`` only: no session runs yet.

    Only installed plugins, global extensions and ``-e`` files take part: project extensions load
    after the decision. Use in .pi/extensions: no.
    """


@_spec("chain")
def agent_before_settle(event: AgentBeforeSettleEvent, ctx: ExtensionContext) -> BoundaryPatch | None:
    """The last actionable moment of a prompt: retries, compaction and queued messages are done.

    Return :class:`pi_core.BoundaryPatch` (or ``{"entries": [...], "continue": True}``) as for
    ``turn_end``: the entries are appended and, with ``continue_``, one more request is made (and this
    hook runs again after it). Not called when the run was aborted.

    :param event: :class:`pi_core.AgentBeforeSettleEvent` (``messages`` of the prompt, ``entries``,
        ``continue_``).
    :param ctx: the session context.
    """


@_spec("notify")
def agent_settled(event: AgentSettledEvent, ctx: ExtensionContext) -> None:
    """pi will not continue on its own: retries, compaction and queued messages are done.

    ``agent_end`` may be followed by more runs; this is the end. Work started here
    (``send_user_message``) begins after every handler returned; a command waiting in
    ``ctx.wait_for_idle()`` resumes after them too.

    :param event: :class:`pi_core.AgentSettledEvent` (``aborted``).
    :param ctx: the session context (``ctx.is_idle()`` is true).
    """


@_spec("first")
def user_bash(event: UserBashEvent, ctx: ExtensionContext) -> UserBashResult | None:
    """Take over a ``!command`` the user typed (run it over ssh, in a container, or not at all).

    Return :class:`pi_core.UserBashResult` with ``operations`` (a :class:`pi_core.BashOperations`: the
    command runs through it, output and truncation as usual) or ``result`` (recorded as the command's
    outcome; nothing runs). The first answer wins; ``None`` runs it locally.

    :param event: :class:`pi_core.UserBashEvent` (``command``, ``exclude_from_context``, ``cwd``).
    :param ctx: the session context.
    """


@_spec("chain")
def before_provider_headers(event: ProviderHeadersEvent, ctx: ExtensionContext) -> dict[str, Any] | None:
    """Change the HTTP headers of a provider request (once per request).

    Change ``event.headers`` in place (a ``None`` value removes the header) or return a new dict.

    :param event: :class:`pi_core.ProviderHeadersEvent` (``headers``, ``model``).
    :param ctx: the session context.

    Runs after ``before_provider_request``'s payload is final. Only HTTP providers call it.
    """


@_spec("notify")
def after_provider_response(event: ProviderResponseEvent, ctx: ExtensionContext) -> None:
    """A provider answered: status and headers, before the body is read (a 429's ``retry-after``, say).

    :param event: :class:`pi_core.ProviderResponseEvent` (``status``, ``headers``, ``model``).
    :param ctx: the session context.
    """


@_spec("notify")
def provider_stream_event(event: ProviderStreamEvent, ctx: ExtensionContext) -> None:
    """One parsed event of a provider's stream (a chunk's JSON), before it becomes message events.

    Read-only and hot (one call per chunk): keep handlers cheap. With no handler it costs nothing.

    :param event: :class:`pi_core.ProviderStreamEvent` (``provider``, ``api``, ``model``, ``data``).
    :param ctx: the session context.
    """


@_spec("notify")
def thinking_level_select(event: ThinkingLevelSelectEvent, ctx: ExtensionContext) -> None:
    """The thinking level changed (a command, a key, ``ctx.set_thinking_level``, a model change).

    :param event: :class:`pi_core.ThinkingLevelSelectEvent` (``level``, ``previous_level``).
    :param ctx: the session context.
    """


@_spec("notify")
def session_info_changed(event: SessionInfoChangedEvent, ctx: ExtensionContext) -> None:
    """The session's display name was set (``/name``, RPC ``set_session_name``, ``ctx.set_session_name``).

    Runs after the name is stored; handlers run in the background, in registration order.

    :param event: :class:`pi_core.SessionInfoChangedEvent` (``name``: the stored, normalised name).
    :param ctx: the session context.
    """


@_spec("notify")
def session_compact_failed(event: SessionCompactFailedEvent, ctx: ExtensionContext) -> None:
    """A compaction failed or was aborted; the session is unchanged.

    :param event: :class:`pi_core.SessionCompactFailedEvent` (``reason``, ``error_message``, ``aborted``,
        ``will_retry``, ``from_plugin``).
    :param ctx: the session context.
    """
