"""The model layer (pi-ai for Python): messages, streaming events, providers, model registry.

Public API; provider plugins import from here (and from ``pi_core``) only. Names load lazily so that
``import pi_core.ai`` costs nothing until something is used.

```python
from pi_core.ai import Context, UserMessage, complete, get_model
model = get_model("anthropic", "claude-sonnet-4-5")
reply = await complete(model, Context(messages=[UserMessage(content="Hi")]))
```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> defining module. Keep each section sorted.
_EXPORTS: dict[str, str] = {
    # --- types --------------------------------------------------------------------------------
    "THINKING_LEVELS": "pi_core.ai.types",
    "AssistantMessage": "pi_core.ai.types",
    "Context": "pi_core.ai.types",
    "Cost": "pi_core.ai.types",
    "ImageContent": "pi_core.ai.types",
    "Message": "pi_core.ai.types",
    "Model": "pi_core.ai.types",
    "ModelCost": "pi_core.ai.types",
    "StopReason": "pi_core.ai.types",
    "SystemMessage": "pi_core.ai.types",
    "TextContent": "pi_core.ai.types",
    "ThinkingContent": "pi_core.ai.types",
    "ThinkingLevel": "pi_core.ai.types",
    "ToolCall": "pi_core.ai.types",
    "ToolDeclaration": "pi_core.ai.types",
    "ToolResultMessage": "pi_core.ai.types",
    "Usage": "pi_core.ai.types",
    "UserMessage": "pi_core.ai.types",
    "now_ms": "pi_core.ai.types",
    # --- abort --------------------------------------------------------------------------------
    "AbortController": "pi_core.ai.abort",
    "AbortError": "pi_core.ai.abort",
    "AbortSignal": "pi_core.ai.abort",
    # --- events -------------------------------------------------------------------------------
    "AssistantMessageEvent": "pi_core.ai.events",
    "DoneEvent": "pi_core.ai.events",
    "ErrorEvent": "pi_core.ai.events",
    "RetryEvent": "pi_core.ai.events",
    "StartEvent": "pi_core.ai.events",
    "TextDeltaEvent": "pi_core.ai.events",
    "TextEndEvent": "pi_core.ai.events",
    "TextStartEvent": "pi_core.ai.events",
    "ThinkingDeltaEvent": "pi_core.ai.events",
    "ThinkingEndEvent": "pi_core.ai.events",
    "ThinkingStartEvent": "pi_core.ai.events",
    "ToolCallDeltaEvent": "pi_core.ai.events",
    "ToolCallEndEvent": "pi_core.ai.events",
    "ToolCallStartEvent": "pi_core.ai.events",
    # --- streaming ----------------------------------------------------------------------------
    "ABORTED_MESSAGE": "pi_core.ai.event_stream",
    "DEFAULT_THINKING_BUDGETS": "pi_core.ai.options",
    "EventStream": "pi_core.ai.event_stream",
    "StreamFn": "pi_core.ai.options",
    "StreamOptions": "pi_core.ai.options",
    "StreamWriter": "pi_core.ai.event_stream",
    "complete": "pi_core.ai.client",
    "stream": "pi_core.ai.client",
    # --- wire helpers for provider plugins ---------------------------------------------------
    "SSEDecoder": "pi_core.ai.sse",
    "SSEEvent": "pi_core.ai.sse",
    "iter_sse": "pi_core.ai.sse",
    "iter_sse_batches": "pi_core.ai.sse",
    "aclose_shared_client": "pi_core.ai.http",
    "is_loopback_url": "pi_core.ai.http",
    "merge_headers": "pi_core.ai.http",
    "post_stream": "pi_core.ai.http",
    "shared_client": "pi_core.ai.http",
    "user_agent": "pi_core.ai.http",
    "parse_json_with_repair": "pi_core.ai.partial_json",
    "parse_partial_json": "pi_core.ai.partial_json",
    "parse_streaming_arguments": "pi_core.ai.partial_json",
    "parse_tool_arguments": "pi_core.ai.partial_json",
    "repair_json": "pi_core.ai.partial_json",
    "adjust_max_tokens_for_thinking": "pi_core.ai.request",
    "clamp_max_tokens": "pi_core.ai.request",
    "clamp_thinking_level": "pi_core.ai.request",
    "conversation": "pi_core.ai.request",
    "conversation_messages": "pi_core.ai.request",
    "data_uri": "pi_core.ai.request",
    "estimate_context_tokens": "pi_core.ai.request",
    "mapped_level": "pi_core.ai.request",
    "requested_level": "pi_core.ai.request",
    "sampling_params": "pi_core.ai.request",
    "sanitize_surrogates": "pi_core.ai.request",
    "supported_levels": "pi_core.ai.request",
    "system_prompt": "pi_core.ai.request",
    "calculate_cost": "pi_core.ai.cost",
    "total_tokens": "pi_core.ai.cost",
    "BodyStream": "pi_core.ai.wire",
    "DeferredMessage": "pi_core.ai.message_list",
    "EncodedMessages": "pi_core.ai.wire",
    "MessageList": "pi_core.ai.message_list",
    "TurnCache": "pi_core.ai.wire",
    "TurnConverter": "pi_core.ai.wire",
    "body_bytes": "pi_core.ai.wire",
    "encode_body": "pi_core.ai.wire",
    "remakeable": "pi_core.ai.wire",
    "message_items": "pi_core.ai.message_list",
    "message_lines": "pi_core.ai.message_list",
    "message_line_block": "pi_core.ai.message_list",
    "LineBlock": "pi_core.ai.message_list",
    "message_views": "pi_core.ai.message_list",
    "RawTurnConverter": "pi_core.ai.wire",
    "RawAssistant": "pi_core.ai.raw_views",
    "RawImage": "pi_core.ai.raw_views",
    "RawText": "pi_core.ai.raw_views",
    "RawThinking": "pi_core.ai.raw_views",
    "RawToolCall": "pi_core.ai.raw_views",
    "RawToolResult": "pi_core.ai.raw_views",
    "RawUser": "pi_core.ai.raw_views",
    "raw_json_text": "pi_core.ai.raw_views",
    "raw_object": "pi_core.ai.raw_views",
    "raw_handoff": "pi_core.ai.raw_views",
    "DeclineTurn": "pi_core.ai.raw_views",
    # --- cross-provider handoff -----------------------------------------------------------------
    "IdNormalizer": "pi_core.ai.handoff",
    "NO_RESULT": "pi_core.ai.handoff",
    "is_same_model": "pi_core.ai.handoff",
    "sanitize_id": "pi_core.ai.handoff",
    "short_hash": "pi_core.ai.handoff",
    "transform_messages": "pi_core.ai.handoff",
    # --- catalog --------------------------------------------------------------------------------
    "catalog_index": "pi_core.ai.catalog",
    "catalog_provider": "pi_core.ai.catalog",
    "catalog_providers": "pi_core.ai.catalog",
    "load_catalog": "pi_core.ai.catalog",
    # --- overflow and retry -----------------------------------------------------------------------
    "OVERFLOW_PATTERNS": "pi_core.ai.overflow",
    "OverflowPattern": "pi_core.ai.overflow",
    "is_context_overflow": "pi_core.ai.overflow",
    "is_overflow_text": "pi_core.ai.overflow",
    "overflow_pattern": "pi_core.ai.overflow",
    "ErrorKind": "pi_core.ai.retry",
    "RetryPolicy": "pi_core.ai.retry",
    "classify_error": "pi_core.ai.retry",
    "error_status": "pi_core.ai.retry",
    "retrying_stream": "pi_core.ai.retry",
    # --- errors -------------------------------------------------------------------------------
    "MissingApiKeyError": "pi_core.ai.errors",
    "ProviderError": "pi_core.ai.errors",
    "ProviderHTTPError": "pi_core.ai.errors",
    "describe_exception": "pi_core.ai.errors",
    "format_http_error": "pi_core.ai.errors",
    "js_json": "pi_core.ai.errors",
    # --- registry -----------------------------------------------------------------------------
    "ApiProvider": "pi_core.ai.registry",
    "ModelNotFoundError": "pi_core.ai.registry",
    "ModelRegistry": "pi_core.ai.registry",
    "ProviderConfig": "pi_core.ai.registry",
    "ResolvedModel": "pi_core.ai.registry",
    "default_registry": "pi_core.ai.registry",
    "get_model": "pi_core.ai.registry",
    "get_models": "pi_core.ai.registry",
    "get_providers": "pi_core.ai.registry",
    "register_api_provider": "pi_core.ai.registry",
    "set_default_registry": "pi_core.ai.registry",
    "unregister_api_provider": "pi_core.ai.registry",
    "Route": "pi_core.ai.virtual",
    "RouteReason": "pi_core.ai.virtual",
    "RouteRequest": "pi_core.ai.virtual",
    "RoutedModel": "pi_core.ai.virtual",
    "virtual_provider": "pi_core.ai.virtual",
    "ModelListContext": "pi_core.ai.model_lists",
    "ModelRefreshResult": "pi_core.ai.model_lists",
    "network_allowed": "pi_core.ai.model_lists",
    "agent_dir": "pi_core.ai.credentials",
    "env_api_key": "pi_core.ai.credentials",
    "resolve_config_value": "pi_core.ai.credentials",
    # --- sign-in and credentials -----------------------------------------------------------------
    "AuthError": "pi_core.ai.auth.types",
    "AuthResult": "pi_core.ai.auth.types",
    "OAuthFlow": "pi_core.ai.auth.types",
    "ProviderAuth": "pi_core.ai.auth.types",
    "CredentialStore": "pi_core.ai.auth.store",
    "CredentialStoreError": "pi_core.ai.auth.store",
    "AuthUrlEvent": "pi_core.ai.auth.interaction",
    "DeviceCodeEvent": "pi_core.ai.auth.interaction",
    "InfoEvent": "pi_core.ai.auth.interaction",
    "LoginCancelled": "pi_core.ai.auth.interaction",
    "LoginEvent": "pi_core.ai.auth.interaction",
    "LoginInteraction": "pi_core.ai.auth.interaction",
    "LoginOption": "pi_core.ai.auth.interaction",
    "ProgressEvent": "pi_core.ai.auth.interaction",
    "LoginMethod": "pi_core.ai.auth.login",
    "login_methods": "pi_core.ai.auth.login",
    "login_provider": "pi_core.ai.auth.login",
    "logout_provider": "pi_core.ai.auth.login",
    "provider_label": "pi_core.ai.auth.login",
    "CallbackServer": "pi_core.ai.auth.oauth",
    "DeviceCodeOAuth": "pi_core.ai.auth.oauth",
    "OAuthError": "pi_core.ai.auth.oauth",
    "Poll": "pi_core.ai.auth.oauth",
    "auth_request": "pi_core.ai.auth.oauth",
    "auth_url": "pi_core.ai.auth.oauth",
    "callback_or_paste": "pi_core.ai.auth.oauth",
    "decode_jwt_claims": "pi_core.ai.auth.oauth",
    "expires_at": "pi_core.ai.auth.oauth",
    "parse_pasted_code": "pi_core.ai.auth.oauth",
    "pkce_challenge": "pi_core.ai.auth.oauth",
    "pkce_pair": "pi_core.ai.auth.oauth",
    "poll_device_code": "pi_core.ai.auth.oauth",
    "random_state": "pi_core.ai.auth.oauth",
    "start_callback_server": "pi_core.ai.auth.oauth",
    "token_fields": "pi_core.ai.auth.oauth",
    # --- faux provider --------------------------------------------------------------------------
    "FauxProvider": "pi_core.ai.faux",
    "FauxRequest": "pi_core.ai.faux",
    "FauxTurn": "pi_core.ai.faux",
    "faux_error": "pi_core.ai.faux",
    "faux_text": "pi_core.ai.faux",
    "faux_thinking": "pi_core.ai.faux",
    "faux_tool_call": "pi_core.ai.faux",
    "faux_turn": "pi_core.ai.faux",
    "last_user_text": "pi_core.ai.faux",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core.ai' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - static view of the lazy names
    # `X as X`: each name re-exported explicitly, so `mypy --strict` accepts imports from this package
    from .abort import AbortController as AbortController, AbortError as AbortError, AbortSignal as AbortSignal
    from .auth.interaction import (
        AuthUrlEvent as AuthUrlEvent,
        DeviceCodeEvent as DeviceCodeEvent,
        InfoEvent as InfoEvent,
        LoginCancelled as LoginCancelled,
        LoginEvent as LoginEvent,
        LoginInteraction as LoginInteraction,
        LoginOption as LoginOption,
        ProgressEvent as ProgressEvent,
    )
    from .auth.login import (
        LoginMethod as LoginMethod,
        login_methods as login_methods,
        login_provider as login_provider,
        logout_provider as logout_provider,
        provider_label as provider_label,
    )
    from .auth.oauth import (
        CallbackServer as CallbackServer,
        DeviceCodeOAuth as DeviceCodeOAuth,
        OAuthError as OAuthError,
        Poll as Poll,
        auth_request as auth_request,
        auth_url as auth_url,
        callback_or_paste as callback_or_paste,
        decode_jwt_claims as decode_jwt_claims,
        expires_at as expires_at,
        parse_pasted_code as parse_pasted_code,
        pkce_challenge as pkce_challenge,
        pkce_pair as pkce_pair,
        poll_device_code as poll_device_code,
        random_state as random_state,
        start_callback_server as start_callback_server,
        token_fields as token_fields,
    )
    from .auth.store import CredentialStore as CredentialStore, CredentialStoreError as CredentialStoreError
    from .auth.types import (
        AuthError as AuthError,
        AuthResult as AuthResult,
        OAuthFlow as OAuthFlow,
        ProviderAuth as ProviderAuth,
    )
    from .catalog import (
        catalog_index as catalog_index,
        catalog_provider as catalog_provider,
        catalog_providers as catalog_providers,
        load_catalog as load_catalog,
    )
    from .client import complete as complete, stream as stream
    from .cost import calculate_cost as calculate_cost, total_tokens as total_tokens
    from .credentials import (
        agent_dir as agent_dir,
        env_api_key as env_api_key,
        resolve_config_value as resolve_config_value,
    )
    from .errors import (
        MissingApiKeyError as MissingApiKeyError,
        ProviderError as ProviderError,
        ProviderHTTPError as ProviderHTTPError,
        describe_exception as describe_exception,
        format_http_error as format_http_error,
        js_json as js_json,
    )
    from .event_stream import (
        ABORTED_MESSAGE as ABORTED_MESSAGE,
        EventStream as EventStream,
        StreamWriter as StreamWriter,
    )
    from .events import (
        AssistantMessageEvent as AssistantMessageEvent,
        DoneEvent as DoneEvent,
        ErrorEvent as ErrorEvent,
        RetryEvent as RetryEvent,
        StartEvent as StartEvent,
        TextDeltaEvent as TextDeltaEvent,
        TextEndEvent as TextEndEvent,
        TextStartEvent as TextStartEvent,
        ThinkingDeltaEvent as ThinkingDeltaEvent,
        ThinkingEndEvent as ThinkingEndEvent,
        ThinkingStartEvent as ThinkingStartEvent,
        ToolCallDeltaEvent as ToolCallDeltaEvent,
        ToolCallEndEvent as ToolCallEndEvent,
        ToolCallStartEvent as ToolCallStartEvent,
    )
    from .faux import (
        FauxProvider as FauxProvider,
        FauxRequest as FauxRequest,
        FauxTurn as FauxTurn,
        faux_error as faux_error,
        faux_text as faux_text,
        faux_thinking as faux_thinking,
        faux_tool_call as faux_tool_call,
        faux_turn as faux_turn,
        last_user_text as last_user_text,
    )
    from .handoff import (
        IdNormalizer as IdNormalizer,
        NO_RESULT as NO_RESULT,
        is_same_model as is_same_model,
        sanitize_id as sanitize_id,
        short_hash as short_hash,
        transform_messages as transform_messages,
    )
    from .http import (
        aclose_shared_client as aclose_shared_client,
        is_loopback_url as is_loopback_url,
        merge_headers as merge_headers,
        post_stream as post_stream,
        shared_client as shared_client,
        user_agent as user_agent,
    )
    from .message_list import (
        DeferredMessage as DeferredMessage,
        MessageList as MessageList,
        message_items as message_items,
        message_lines as message_lines,
        message_line_block as message_line_block,
        LineBlock as LineBlock,
        message_views as message_views,
    )
    from .raw_views import (
        RawAssistant as RawAssistant,
        RawImage as RawImage,
        RawText as RawText,
        RawThinking as RawThinking,
        RawToolCall as RawToolCall,
        RawToolResult as RawToolResult,
        RawUser as RawUser,
        raw_json_text as raw_json_text,
        raw_object as raw_object,
        raw_handoff as raw_handoff,
        DeclineTurn as DeclineTurn,
    )
    from .model_lists import (
        ModelListContext as ModelListContext,
        ModelRefreshResult as ModelRefreshResult,
        network_allowed as network_allowed,
    )
    from .options import (
        DEFAULT_THINKING_BUDGETS as DEFAULT_THINKING_BUDGETS,
        StreamFn as StreamFn,
        StreamOptions as StreamOptions,
    )
    from .overflow import (
        OVERFLOW_PATTERNS as OVERFLOW_PATTERNS,
        OverflowPattern as OverflowPattern,
        is_context_overflow as is_context_overflow,
        is_overflow_text as is_overflow_text,
        overflow_pattern as overflow_pattern,
    )
    from .partial_json import (
        parse_json_with_repair as parse_json_with_repair,
        parse_partial_json as parse_partial_json,
        parse_streaming_arguments as parse_streaming_arguments,
        parse_tool_arguments as parse_tool_arguments,
        repair_json as repair_json,
    )
    from .registry import (
        ApiProvider as ApiProvider,
        ModelNotFoundError as ModelNotFoundError,
        ModelRegistry as ModelRegistry,
        ProviderConfig as ProviderConfig,
        ResolvedModel as ResolvedModel,
        default_registry as default_registry,
        get_model as get_model,
        get_models as get_models,
        get_providers as get_providers,
        register_api_provider as register_api_provider,
        set_default_registry as set_default_registry,
        unregister_api_provider as unregister_api_provider,
    )
    from .virtual import (
        Route as Route,
        RouteReason as RouteReason,
        RouteRequest as RouteRequest,
        RoutedModel as RoutedModel,
        virtual_provider as virtual_provider,
    )
    from .request import (
        adjust_max_tokens_for_thinking as adjust_max_tokens_for_thinking,
        clamp_max_tokens as clamp_max_tokens,
        clamp_thinking_level as clamp_thinking_level,
        conversation as conversation,
        conversation_messages as conversation_messages,
        data_uri as data_uri,
        estimate_context_tokens as estimate_context_tokens,
        mapped_level as mapped_level,
        requested_level as requested_level,
        sampling_params as sampling_params,
        sanitize_surrogates as sanitize_surrogates,
        supported_levels as supported_levels,
        system_prompt as system_prompt,
    )
    from .retry import (
        ErrorKind as ErrorKind,
        RetryPolicy as RetryPolicy,
        classify_error as classify_error,
        error_status as error_status,
        retrying_stream as retrying_stream,
    )
    from .sse import SSEDecoder as SSEDecoder, SSEEvent as SSEEvent, iter_sse as iter_sse
    from .sse import iter_sse_batches as iter_sse_batches
    from .types import (
        AssistantMessage as AssistantMessage,
        Context as Context,
        Cost as Cost,
        ImageContent as ImageContent,
        Message as Message,
        Model as Model,
        ModelCost as ModelCost,
        StopReason as StopReason,
        SystemMessage as SystemMessage,
        THINKING_LEVELS as THINKING_LEVELS,
        TextContent as TextContent,
        ThinkingContent as ThinkingContent,
        ThinkingLevel as ThinkingLevel,
        ToolCall as ToolCall,
        ToolDeclaration as ToolDeclaration,
        ToolResultMessage as ToolResultMessage,
        Usage as Usage,
        UserMessage as UserMessage,
        now_ms as now_ms,
    )
    from .wire import (
        BodyStream as BodyStream,
        EncodedMessages as EncodedMessages,
        RawTurnConverter as RawTurnConverter,
        TurnCache as TurnCache,
        TurnConverter as TurnConverter,
        body_bytes as body_bytes,
        encode_body as encode_body,
        remakeable as remakeable,
    )
