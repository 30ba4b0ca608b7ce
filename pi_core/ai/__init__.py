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
    "message_items": "pi_core.ai.message_list",
    "message_views": "pi_core.ai.message_list",
    # --- cross-provider handoff -----------------------------------------------------------------
    "IdNormalizer": "pi_core.ai.handoff",
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
    from .abort import AbortController, AbortError, AbortSignal
    from .auth.interaction import (
        AuthUrlEvent,
        DeviceCodeEvent,
        InfoEvent,
        LoginCancelled,
        LoginEvent,
        LoginInteraction,
        LoginOption,
        ProgressEvent,
    )
    from .auth.login import LoginMethod, login_methods, login_provider, logout_provider, provider_label
    from .auth.oauth import (
        CallbackServer,
        DeviceCodeOAuth,
        OAuthError,
        Poll,
        auth_request,
        auth_url,
        callback_or_paste,
        decode_jwt_claims,
        expires_at,
        parse_pasted_code,
        pkce_challenge,
        pkce_pair,
        poll_device_code,
        random_state,
        start_callback_server,
        token_fields,
    )
    from .auth.store import CredentialStore, CredentialStoreError
    from .auth.types import AuthError, AuthResult, OAuthFlow, ProviderAuth
    from .catalog import catalog_index, catalog_provider, catalog_providers, load_catalog
    from .client import complete, stream
    from .cost import calculate_cost, total_tokens
    from .credentials import agent_dir, env_api_key, resolve_config_value
    from .errors import (
        MissingApiKeyError,
        ProviderError,
        ProviderHTTPError,
        describe_exception,
        format_http_error,
        js_json,
    )
    from .event_stream import ABORTED_MESSAGE, EventStream, StreamWriter
    from .events import (
        AssistantMessageEvent,
        DoneEvent,
        ErrorEvent,
        RetryEvent,
        StartEvent,
        TextDeltaEvent,
        TextEndEvent,
        TextStartEvent,
        ThinkingDeltaEvent,
        ThinkingEndEvent,
        ThinkingStartEvent,
        ToolCallDeltaEvent,
        ToolCallEndEvent,
        ToolCallStartEvent,
    )
    from .faux import (
        FauxProvider,
        FauxRequest,
        FauxTurn,
        faux_error,
        faux_text,
        faux_thinking,
        faux_tool_call,
        faux_turn,
        last_user_text,
    )
    from .handoff import IdNormalizer, is_same_model, sanitize_id, short_hash, transform_messages
    from .http import aclose_shared_client, is_loopback_url, merge_headers, post_stream, shared_client, user_agent
    from .message_list import DeferredMessage, MessageList, message_items, message_views
    from .options import DEFAULT_THINKING_BUDGETS, StreamFn, StreamOptions
    from .overflow import OVERFLOW_PATTERNS, OverflowPattern, is_context_overflow, is_overflow_text, overflow_pattern
    from .partial_json import (
        parse_json_with_repair,
        parse_partial_json,
        parse_streaming_arguments,
        parse_tool_arguments,
        repair_json,
    )
    from .request import (
        adjust_max_tokens_for_thinking,
        clamp_max_tokens,
        clamp_thinking_level,
        conversation,
        conversation_messages,
        data_uri,
        estimate_context_tokens,
        mapped_level,
        requested_level,
        sampling_params,
        sanitize_surrogates,
        supported_levels,
        system_prompt,
    )
    from .model_lists import ModelListContext, ModelRefreshResult, network_allowed
    from .registry import (
        ApiProvider,
        ModelNotFoundError,
        ModelRegistry,
        ProviderConfig,
        ResolvedModel,
        default_registry,
        get_model,
        get_models,
        get_providers,
        register_api_provider,
        set_default_registry,
        unregister_api_provider,
    )
    from .retry import ErrorKind, RetryPolicy, classify_error, error_status, retrying_stream
    from .sse import SSEDecoder, SSEEvent, iter_sse
    from .types import (
        THINKING_LEVELS,
        AssistantMessage,
        Context,
        Cost,
        ImageContent,
        Message,
        Model,
        ModelCost,
        StopReason,
        SystemMessage,
        TextContent,
        ThinkingContent,
        ThinkingLevel,
        ToolCall,
        ToolDeclaration,
        ToolResultMessage,
        Usage,
        UserMessage,
        now_ms,
    )
    from .wire import BodyStream, EncodedMessages, TurnCache, TurnConverter, body_bytes, encode_body
