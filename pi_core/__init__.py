"""pi for Python: a coding agent whose minimal core is a pluggy plugin framework.

This module is the public API. Plugins (built-in ones included) import from here and from
``pi_core.ai``, nothing else. Names load lazily, so ``import pi_core`` stays cheap for a CLI that
starts often.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing costs ~20 ms to import; keep `import pi_core` cheap

from ._version import __version__

# name -> module that defines it. Sections per area; keep each section sorted.
_EXPORTS: dict[str, str] = {
    # --- plugin framework -------------------------------------------------------------------
    "hookimpl": "pi_core.extensions.markers",
    "EventBus": "pi_core.extensions.bus",
    "CommandContext": "pi_core.extensions.context",
    "ExtensionContext": "pi_core.extensions.context",
    "UI": "pi_core.extensions.context",
    "Command": "pi_core.extensions.contributions",
    "CliCommand": "pi_core.extensions.contributions",
    "Flag": "pi_core.extensions.contributions",
    "Toolset": "pi_core.extensions.contributions",
    "PluginHost": "pi_core.extensions.manager",
    "RegisteredMcpServer": "pi_core.extensions.mcp_servers",
    "build_plugin_host": "pi_core.extensions.manager",
    "is_project_trusted": "pi_core.extensions.trust",
    "ContextUsage": "pi_core.extensions.results",
    "ForkResult": "pi_core.extensions.results",
    "NavigateResult": "pi_core.extensions.results",
    "SessionResult": "pi_core.extensions.results",
    "SlashCommandInfo": "pi_core.extensions.results",
    "SourceInfo": "pi_core.extensions.results",
    # --- hook events and decisions ----------------------------------------------------------
    "AfterToolCallEvent": "pi_core.events",
    "AgentBeforeSettleEvent": "pi_core.events",
    "AgentEndEvent": "pi_core.events",
    "AgentStartEvent": "pi_core.events",
    "AgentStartPatch": "pi_core.events",
    "BeforeAgentStartEvent": "pi_core.events",
    "BeforeToolCallEvent": "pi_core.events",
    "Block": "pi_core.events",
    "BoundaryPatch": "pi_core.events",
    "Cancel": "pi_core.events",
    "CompactionOverride": "pi_core.events",
    "ContextEvent": "pi_core.events",
    "ContextWithSystemEvent": "pi_core.events",
    "Handled": "pi_core.events",
    "InputEvent": "pi_core.events",
    "McpServersChangeEvent": "pi_core.events",
    "MessageEndEvent": "pi_core.events",
    "MessageStartEvent": "pi_core.events",
    "MessageUpdateEvent": "pi_core.events",
    "ModelSelectEvent": "pi_core.events",
    "ProjectTrustEvent": "pi_core.events",
    "ProviderHeadersEvent": "pi_core.events",
    "ProviderRequestEvent": "pi_core.events",
    "ProviderResponseEvent": "pi_core.events",
    "ProviderStreamEvent": "pi_core.events",
    "ResourcePaths": "pi_core.events",
    "ResourcesDiscoverEvent": "pi_core.events",
    "SessionBeforeCompactEvent": "pi_core.events",
    "SessionBeforeForkEvent": "pi_core.events",
    "SessionBeforeSwitchEvent": "pi_core.events",
    "SessionBeforeTreeEvent": "pi_core.events",
    "SessionCompactEvent": "pi_core.events",
    "SessionCompactFailedEvent": "pi_core.events",
    "SessionShutdownEvent": "pi_core.events",
    "SessionStartEvent": "pi_core.events",
    "SessionTreeEvent": "pi_core.events",
    "ThinkingLevelSelectEvent": "pi_core.events",
    "ToolExecutionEndEvent": "pi_core.events",
    "ToolExecutionStartEvent": "pi_core.events",
    "ToolExecutionUpdateEvent": "pi_core.events",
    "ToolResultPatch": "pi_core.events",
    "Transform": "pi_core.events",
    "TreeOverride": "pi_core.events",
    "TrustDecision": "pi_core.events",
    "TurnEndEvent": "pi_core.events",
    "TurnStartEvent": "pi_core.events",
    "UserBashEvent": "pi_core.events",
    "UserBashResult": "pi_core.events",
    # --- tools -------------------------------------------------------------------------------
    "Tool": "pi_core.agent.tools",
    "ToolCallOutcome": "pi_core.agent.tools",
    "ToolCapabilities": "pi_core.agent.tools",
    "ToolContext": "pi_core.agent.tools",
    "ToolError": "pi_core.agent.tools",
    "ToolNamespace": "pi_core.agent.tools",
    "ToolResult": "pi_core.agent.tools",
    "BashOperations": "pi_core.agent.operations",
    "EditOperations": "pi_core.agent.operations",
    "ExecResult": "pi_core.agent.operations",
    "LocalBashOperations": "pi_core.agent.operations",
    "LocalFileOperations": "pi_core.agent.operations",
    "ReadOperations": "pi_core.agent.operations",
    "SpawnHook": "pi_core.agent.operations",
    "WriteOperations": "pi_core.agent.operations",
    "is_local": "pi_core.agent.operations",
    "run_bash_operations": "pi_core.agent.operations",
    # the built-in tools, to reuse with other operations (plugins/tools)
    "create_bash_tool": "plugins.tools.bash",
    "create_edit_tool": "plugins.tools.edit",
    "create_read_tool": "plugins.tools.read",
    "create_write_tool": "plugins.tools.write",
    "resolve_tool_path": "pi_core.agent.paths",
    # --- tool helpers (truncation, processes, matching) ---------------------------------------
    "DEFAULT_MAX_BYTES": "pi_core.toolkit.truncate",
    "DEFAULT_SECRET_PATTERNS": "pi_core.toolkit.shell_env",
    "DEFAULT_MAX_LINES": "pi_core.toolkit.truncate",
    "Edit": "pi_core.toolkit.textmatch",
    "EditError": "pi_core.toolkit.textmatch",
    "EditOutcome": "pi_core.toolkit.textmatch",
    "GREP_MAX_LINE_LENGTH": "pi_core.toolkit.truncate",
    "GrepLine": "pi_core.toolkit.search",
    "GrepResult": "pi_core.toolkit.search",
    "HeadTail": "pi_core.toolkit.truncate",
    "NONINTERACTIVE_ENV": "pi_core.toolkit.process",
    "OutputCollector": "pi_core.toolkit.process",
    "Overrides": "pi_core.toolkit.ignore",
    "PreparedImage": "pi_core.toolkit.images",
    "ProcessResult": "pi_core.toolkit.process",
    "ProcessStartError": "pi_core.toolkit.process",
    "Replacement": "pi_core.toolkit.textmatch",
    "SearchError": "pi_core.toolkit.search",
    "ShellConfig": "pi_core.toolkit.process",
    "ShellEnvPolicy": "pi_core.toolkit.shell_env",
    "ShellResult": "pi_core.toolkit.process",
    "SpecialFileError": "pi_core.toolkit.blocking",
    "TextFile": "pi_core.toolkit.textmatch",
    "Truncation": "pi_core.toolkit.truncate",
    "apply_edits": "pi_core.toolkit.textmatch",
    "capped_listing": "pi_core.toolkit.results",
    "check_regular_file": "pi_core.toolkit.blocking",
    "count_argument": "pi_core.toolkit.results",
    "atomic_write": "pi_core.toolkit.mutation",
    "build_env": "pi_core.toolkit.process",
    "closest_region": "pi_core.toolkit.textmatch",
    "compile_pattern": "pi_core.toolkit.ignore",
    "default_shell": "pi_core.toolkit.process",
    "detect_image_mime": "pi_core.toolkit.images",
    "detect_image_mime_file": "pi_core.toolkit.images",
    "edit_diff": "pi_core.toolkit.diff",
    "file_mutation_lock": "pi_core.toolkit.mutation",
    "find_edit": "pi_core.toolkit.textmatch",
    "find_ripgrep": "pi_core.toolkit.search",
    "format_size": "pi_core.toolkit.truncate",
    "glob_to_regex": "pi_core.toolkit.ignore",
    "grep": "pi_core.toolkit.search",
    "list_files": "pi_core.toolkit.search",
    "mutation_key": "pi_core.toolkit.mutation",
    "path_key": "pi_core.toolkit.search",
    "prepare_image": "pi_core.toolkit.images",
    "run_blocking": "pi_core.toolkit.blocking",
    "run_process": "pi_core.toolkit.process",
    "run_shell": "pi_core.toolkit.process",
    "sanitize_output": "pi_core.toolkit.process",
    "scrubbed_env": "pi_core.toolkit.shell_env",
    "set_shell_env_policy": "pi_core.toolkit.shell_env",
    "shell_env_policy": "pi_core.toolkit.shell_env",
    "special_file_kind": "pi_core.toolkit.blocking",
    "truncate_head": "pi_core.toolkit.truncate",
    "truncate_head_tail": "pi_core.toolkit.truncate",
    "truncate_line": "pi_core.toolkit.truncate",
    "truncate_tail": "pi_core.toolkit.truncate",
    "walk": "pi_core.toolkit.ignore",
    # --- reading untrusted JSON --------------------------------------------------------------
    "JSON_MAX_DEPTH": "pi_core.safejson",
    "JSONInputError": "pi_core.safejson",
    "json_safe": "pi_core.safejson",
    "parse_json": "pi_core.safejson",
    # --- messages (re-exported from pi_core.ai) -----------------------------------------------
    "AbortController": "pi_core.ai.abort",
    "AbortSignal": "pi_core.ai.abort",
    "AssistantMessage": "pi_core.ai.types",
    "ImageContent": "pi_core.ai.types",
    "Message": "pi_core.ai.types",
    "Model": "pi_core.ai.types",
    "SystemMessage": "pi_core.ai.types",
    "TextContent": "pi_core.ai.types",
    "ThinkingContent": "pi_core.ai.types",
    "ToolCall": "pi_core.ai.types",
    "ToolResultMessage": "pi_core.ai.types",
    "UserMessage": "pi_core.ai.types",
    # --- sessions ----------------------------------------------------------------------------
    "BranchPreparation": "pi_core.session.branch_summary",
    "CompactionError": "pi_core.runtime.compaction",
    "CompactionPreparation": "pi_core.session.compaction",
    "CompactionResult": "pi_core.runtime.compaction",
    "FileOps": "pi_core.session.compaction",
    "AgentMessage": "pi_core.session.messages",
    "BashExecutionMessage": "pi_core.session.messages",
    "BranchSummaryEntry": "pi_core.session.entries",
    "BranchSummaryMessage": "pi_core.session.messages",
    "CompactionEntry": "pi_core.session.entries",
    "CompactionSummaryMessage": "pi_core.session.messages",
    "ContextEditEntry": "pi_core.session.entries",
    "ContextEditReplacement": "pi_core.session.entries",
    "CustomEntry": "pi_core.session.entries",
    "CustomMessage": "pi_core.session.messages",
    "CustomMessageEntry": "pi_core.session.entries",
    "EntryNotFoundError": "pi_core.session.errors",
    "InvalidSessionError": "pi_core.session.errors",
    "LabelEntry": "pi_core.session.entries",
    "MessageEntry": "pi_core.session.entries",
    "ModelChangeEntry": "pi_core.session.entries",
    "ModelRef": "pi_core.session.projection",
    "SessionCheck": "pi_core.session.check",
    "SessionConflictError": "pi_core.session.errors",
    "SessionContext": "pi_core.session.projection",
    "SessionDiagnostic": "pi_core.session.store",
    "SessionEntry": "pi_core.session.entries",
    "SessionError": "pi_core.session.errors",
    "SessionHeader": "pi_core.session.entries",
    "SessionInfo": "pi_core.session.listing",
    "SessionInfoEntry": "pi_core.session.entries",
    "SessionLockedError": "pi_core.session.errors",
    "SessionManager": "pi_core.session.manager",
    "SessionProblem": "pi_core.session.check",
    "SessionReadOnlyError": "pi_core.session.errors",
    "SessionTreeNode": "pi_core.session.tree",
    "SystemSnapshot": "pi_core.session.entries",
    "ThinkingLevelChangeEntry": "pi_core.session.entries",
    "UnknownEntry": "pi_core.session.entries",
    "UnknownMessage": "pi_core.session.messages",
    "UsageEntry": "pi_core.session.entries",
    "check_session_file": "pi_core.session.check",
    "convert_to_llm": "pi_core.session.messages",
    "default_session_dir": "pi_core.session.locations",
    "repair_session_file": "pi_core.session.check",
    "serialize_conversation": "pi_core.session.compaction",
    "agent_dir": "pi_core.paths",
    # --- runtime, SDK ------------------------------------------------------------------------
    "AgentSession": "pi_core.runtime.agent_session",
    "ForkPoint": "pi_core.runtime.agent_session",
    "SessionBusyError": "pi_core.runtime.agent_session",
    "UnknownCommandError": "pi_core.runtime.agent_session",
    "SetupError": "pi_core.sdk",
    "create_agent_session": "pi_core.sdk",
    "AgentSettledEvent": "pi_core.runtime.events",
    "AutoRetryEndEvent": "pi_core.runtime.events",
    "AutoRetryStartEvent": "pi_core.runtime.events",
    "CompactionEndEvent": "pi_core.runtime.events",
    "CompactionStartEvent": "pi_core.runtime.events",
    "EntryAppendedEvent": "pi_core.runtime.events",
    "QueueUpdateEvent": "pi_core.runtime.events",
    # settings/resources
    "ContextFile": "pi_core.runtime.resources",
    "ContextFiles": "pi_core.runtime.resources",
    "FrontMatterError": "pi_core.runtime.resources",
    "PromptTemplate": "pi_core.runtime.resources",
    "ResourceDiagnostic": "pi_core.runtime.resources",
    "ResourceError": "pi_core.runtime.resources",
    "Settings": "pi_core.runtime.settings",
    "SettingsError": "pi_core.runtime.settings",
    "SettingsIssue": "pi_core.runtime.settings",
    "Skill": "pi_core.runtime.resources",
    "SkillSet": "pi_core.runtime.resources",
    "SystemPrompt": "pi_core.runtime.system_prompt",
    "SystemPromptOptions": "pi_core.runtime.system_prompt",
    "TemplateSet": "pi_core.runtime.resources",
    "build_system_prompt": "pi_core.runtime.system_prompt",
    "expand_prompt_template": "pi_core.runtime.resources",
    "expand_skill_command": "pi_core.runtime.resources",
    "load_context_files": "pi_core.runtime.resources",
    "load_prompt_templates": "pi_core.runtime.resources",
    "load_skills": "pi_core.runtime.resources",
    "parse_front_matter": "pi_core.runtime.resources",
    # --- packages ---------------------------------------------------------------------------
    "PackageResource": "pi_core.packages.resolve",
    "PackageSet": "pi_core.packages.resolve",
    "PackageSource": "pi_core.packages.sources",
    "ResolvedPackage": "pi_core.packages.resolve",
    "discover_package_resources": "pi_core.packages.resolve",
    "parse_package_source": "pi_core.packages.sources",
    "resolve_packages": "pi_core.packages.resolve",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - static view of the lazy names
    # `X as X`: each name re-exported explicitly, so `mypy --strict` accepts imports from this package
    from plugins.tools.bash import create_bash_tool as create_bash_tool
    from plugins.tools.edit import create_edit_tool as create_edit_tool
    from plugins.tools.read import create_read_tool as create_read_tool
    from plugins.tools.write import create_write_tool as create_write_tool
    from .agent.operations import (
        BashOperations as BashOperations,
        EditOperations as EditOperations,
        ExecResult as ExecResult,
        LocalBashOperations as LocalBashOperations,
        LocalFileOperations as LocalFileOperations,
        ReadOperations as ReadOperations,
        SpawnHook as SpawnHook,
        WriteOperations as WriteOperations,
        is_local as is_local,
        run_bash_operations as run_bash_operations,
    )
    from .agent.paths import resolve_tool_path as resolve_tool_path
    from .agent.tools import (
        Tool as Tool,
        ToolCallOutcome as ToolCallOutcome,
        ToolCapabilities as ToolCapabilities,
        ToolContext as ToolContext,
        ToolError as ToolError,
        ToolNamespace as ToolNamespace,
        ToolResult as ToolResult,
    )
    from .ai.abort import AbortController as AbortController, AbortSignal as AbortSignal
    from .ai.types import (
        AssistantMessage as AssistantMessage,
        ImageContent as ImageContent,
        Message as Message,
        Model as Model,
        SystemMessage as SystemMessage,
        TextContent as TextContent,
        ThinkingContent as ThinkingContent,
        ToolCall as ToolCall,
        ToolResultMessage as ToolResultMessage,
        UserMessage as UserMessage,
    )
    from .events import (
        AfterToolCallEvent as AfterToolCallEvent,
        AgentBeforeSettleEvent as AgentBeforeSettleEvent,
        AgentEndEvent as AgentEndEvent,
        AgentStartEvent as AgentStartEvent,
        AgentStartPatch as AgentStartPatch,
        BeforeAgentStartEvent as BeforeAgentStartEvent,
        BeforeToolCallEvent as BeforeToolCallEvent,
        Block as Block,
        BoundaryPatch as BoundaryPatch,
        Cancel as Cancel,
        CompactionOverride as CompactionOverride,
        ContextEvent as ContextEvent,
        ContextWithSystemEvent as ContextWithSystemEvent,
        Handled as Handled,
        InputEvent as InputEvent,
        McpServersChangeEvent as McpServersChangeEvent,
        MessageEndEvent as MessageEndEvent,
        MessageStartEvent as MessageStartEvent,
        MessageUpdateEvent as MessageUpdateEvent,
        ModelSelectEvent as ModelSelectEvent,
        ProjectTrustEvent as ProjectTrustEvent,
        ProviderHeadersEvent as ProviderHeadersEvent,
        ProviderRequestEvent as ProviderRequestEvent,
        ProviderResponseEvent as ProviderResponseEvent,
        ProviderStreamEvent as ProviderStreamEvent,
        ResourcePaths as ResourcePaths,
        ResourcesDiscoverEvent as ResourcesDiscoverEvent,
        SessionBeforeCompactEvent as SessionBeforeCompactEvent,
        SessionBeforeForkEvent as SessionBeforeForkEvent,
        SessionBeforeSwitchEvent as SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent as SessionBeforeTreeEvent,
        SessionCompactEvent as SessionCompactEvent,
        SessionCompactFailedEvent as SessionCompactFailedEvent,
        SessionShutdownEvent as SessionShutdownEvent,
        SessionStartEvent as SessionStartEvent,
        SessionTreeEvent as SessionTreeEvent,
        ThinkingLevelSelectEvent as ThinkingLevelSelectEvent,
        ToolExecutionEndEvent as ToolExecutionEndEvent,
        ToolExecutionStartEvent as ToolExecutionStartEvent,
        ToolExecutionUpdateEvent as ToolExecutionUpdateEvent,
        ToolResultPatch as ToolResultPatch,
        Transform as Transform,
        TreeOverride as TreeOverride,
        TrustDecision as TrustDecision,
        TurnEndEvent as TurnEndEvent,
        TurnStartEvent as TurnStartEvent,
        UserBashEvent as UserBashEvent,
        UserBashResult as UserBashResult,
    )
    from .extensions.bus import EventBus as EventBus
    from .extensions.context import CommandContext as CommandContext, ExtensionContext as ExtensionContext, UI as UI
    from .extensions.contributions import CliCommand as CliCommand, Command as Command, Flag as Flag, Toolset as Toolset
    from .extensions.manager import PluginHost as PluginHost, build_plugin_host as build_plugin_host
    from .extensions.markers import hookimpl as hookimpl
    from .extensions.mcp_servers import RegisteredMcpServer as RegisteredMcpServer
    from .extensions.results import (
        ContextUsage as ContextUsage,
        ForkResult as ForkResult,
        NavigateResult as NavigateResult,
        SessionResult as SessionResult,
        SlashCommandInfo as SlashCommandInfo,
        SourceInfo as SourceInfo,
    )
    from .extensions.trust import is_project_trusted as is_project_trusted
    from .packages.resolve import (
        PackageResource as PackageResource,
        PackageSet as PackageSet,
        ResolvedPackage as ResolvedPackage,
        discover_package_resources as discover_package_resources,
        resolve_packages as resolve_packages,
    )
    from .packages.sources import PackageSource as PackageSource, parse_package_source as parse_package_source
    from .paths import agent_dir as agent_dir
    from .runtime.agent_session import (
        AgentSession as AgentSession,
        ForkPoint as ForkPoint,
        SessionBusyError as SessionBusyError,
        UnknownCommandError as UnknownCommandError,
    )
    from .runtime.compaction import CompactionError as CompactionError, CompactionResult as CompactionResult
    from .runtime.events import (
        AgentSettledEvent as AgentSettledEvent,
        AutoRetryEndEvent as AutoRetryEndEvent,
        AutoRetryStartEvent as AutoRetryStartEvent,
        CompactionEndEvent as CompactionEndEvent,
        CompactionStartEvent as CompactionStartEvent,
        EntryAppendedEvent as EntryAppendedEvent,
        QueueUpdateEvent as QueueUpdateEvent,
    )
    from .runtime.resources import (
        ContextFile as ContextFile,
        ContextFiles as ContextFiles,
        FrontMatterError as FrontMatterError,
        PromptTemplate as PromptTemplate,
        ResourceDiagnostic as ResourceDiagnostic,
        ResourceError as ResourceError,
        Skill as Skill,
        SkillSet as SkillSet,
        TemplateSet as TemplateSet,
        expand_prompt_template as expand_prompt_template,
        expand_skill_command as expand_skill_command,
        load_context_files as load_context_files,
        load_prompt_templates as load_prompt_templates,
        load_skills as load_skills,
        parse_front_matter as parse_front_matter,
    )
    from .runtime.settings import Settings as Settings, SettingsError as SettingsError, SettingsIssue as SettingsIssue
    from .runtime.system_prompt import (
        SystemPrompt as SystemPrompt,
        SystemPromptOptions as SystemPromptOptions,
        build_system_prompt as build_system_prompt,
    )
    from .safejson import (
        JSONInputError as JSONInputError,
        JSON_MAX_DEPTH as JSON_MAX_DEPTH,
        json_safe as json_safe,
        parse_json as parse_json,
    )
    from .sdk import SetupError as SetupError, create_agent_session as create_agent_session
    from .session.branch_summary import BranchPreparation as BranchPreparation
    from .session.check import (
        SessionCheck as SessionCheck,
        SessionProblem as SessionProblem,
        check_session_file as check_session_file,
        repair_session_file as repair_session_file,
    )
    from .session.compaction import (
        CompactionPreparation as CompactionPreparation,
        FileOps as FileOps,
        serialize_conversation as serialize_conversation,
    )
    from .session.entries import (
        BranchSummaryEntry as BranchSummaryEntry,
        CompactionEntry as CompactionEntry,
        ContextEditEntry as ContextEditEntry,
        ContextEditReplacement as ContextEditReplacement,
        CustomEntry as CustomEntry,
        CustomMessageEntry as CustomMessageEntry,
        LabelEntry as LabelEntry,
        MessageEntry as MessageEntry,
        ModelChangeEntry as ModelChangeEntry,
        SessionEntry as SessionEntry,
        SessionHeader as SessionHeader,
        SessionInfoEntry as SessionInfoEntry,
        SystemSnapshot as SystemSnapshot,
        ThinkingLevelChangeEntry as ThinkingLevelChangeEntry,
        UnknownEntry as UnknownEntry,
        UsageEntry as UsageEntry,
    )
    from .session.errors import (
        EntryNotFoundError as EntryNotFoundError,
        InvalidSessionError as InvalidSessionError,
        SessionConflictError as SessionConflictError,
        SessionError as SessionError,
        SessionLockedError as SessionLockedError,
        SessionReadOnlyError as SessionReadOnlyError,
    )
    from .session.listing import SessionInfo as SessionInfo
    from .session.locations import default_session_dir as default_session_dir
    from .session.manager import SessionManager as SessionManager
    from .session.messages import (
        AgentMessage as AgentMessage,
        BashExecutionMessage as BashExecutionMessage,
        BranchSummaryMessage as BranchSummaryMessage,
        CompactionSummaryMessage as CompactionSummaryMessage,
        CustomMessage as CustomMessage,
        UnknownMessage as UnknownMessage,
        convert_to_llm as convert_to_llm,
    )
    from .session.projection import ModelRef as ModelRef, SessionContext as SessionContext
    from .session.store import SessionDiagnostic as SessionDiagnostic
    from .session.tree import SessionTreeNode as SessionTreeNode
    from .toolkit.blocking import (
        SpecialFileError as SpecialFileError,
        check_regular_file as check_regular_file,
        run_blocking as run_blocking,
        special_file_kind as special_file_kind,
    )
    from .toolkit.diff import edit_diff as edit_diff
    from .toolkit.ignore import (
        Overrides as Overrides,
        compile_pattern as compile_pattern,
        glob_to_regex as glob_to_regex,
        walk as walk,
    )
    from .toolkit.images import (
        PreparedImage as PreparedImage,
        detect_image_mime as detect_image_mime,
        detect_image_mime_file as detect_image_mime_file,
        prepare_image as prepare_image,
    )
    from .toolkit.mutation import (
        atomic_write as atomic_write,
        file_mutation_lock as file_mutation_lock,
        mutation_key as mutation_key,
    )
    from .toolkit.process import (
        NONINTERACTIVE_ENV as NONINTERACTIVE_ENV,
        OutputCollector as OutputCollector,
        ProcessResult as ProcessResult,
        ProcessStartError as ProcessStartError,
        ShellConfig as ShellConfig,
        ShellResult as ShellResult,
        build_env as build_env,
        default_shell as default_shell,
        run_process as run_process,
        run_shell as run_shell,
        sanitize_output as sanitize_output,
    )
    from .toolkit.results import capped_listing as capped_listing, count_argument as count_argument
    from .toolkit.search import (
        GrepLine as GrepLine,
        GrepResult as GrepResult,
        SearchError as SearchError,
        find_ripgrep as find_ripgrep,
        grep as grep,
        list_files as list_files,
        path_key as path_key,
    )
    from .toolkit.shell_env import (
        DEFAULT_SECRET_PATTERNS as DEFAULT_SECRET_PATTERNS,
        ShellEnvPolicy as ShellEnvPolicy,
        scrubbed_env as scrubbed_env,
        set_shell_env_policy as set_shell_env_policy,
        shell_env_policy as shell_env_policy,
    )
    from .toolkit.textmatch import (
        Edit as Edit,
        EditError as EditError,
        EditOutcome as EditOutcome,
        Replacement as Replacement,
        TextFile as TextFile,
        apply_edits as apply_edits,
        closest_region as closest_region,
        find_edit as find_edit,
    )
    from .toolkit.truncate import (
        DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES as DEFAULT_MAX_LINES,
        GREP_MAX_LINE_LENGTH as GREP_MAX_LINE_LENGTH,
        HeadTail as HeadTail,
        Truncation as Truncation,
        format_size as format_size,
        truncate_head as truncate_head,
        truncate_head_tail as truncate_head_tail,
        truncate_line as truncate_line,
        truncate_tail as truncate_tail,
    )
