"""Provider ``amazon-bedrock`` and its API ``bedrock-converse-stream`` (Bedrock's ConverseStream).

``POST {endpoint}/model/{modelId}/converse-stream``; the reply is an AWS event stream (binary frames,
CRC-checked), decoded with botocore's own parser. Requests are signed with SigV4 by botocore (no
hand-written signing) using the standard AWS credential chain — ``AWS_PROFILE`` and the shared config
files, ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``, web identity
(``AWS_WEB_IDENTITY_TOKEN_FILE``, IRSA), container credentials and instance metadata — or carry a Bedrock
API key as a bearer token (``AWS_BEARER_TOKEN_BEDROCK``, or a stored key). The region is the one in an
inference-profile ARN, else ``AWS_REGION``/``AWS_DEFAULT_REGION``, else the profile's, else the catalog
endpoint's (``us-east-1``). A ``baseUrl`` that is not a standard ``bedrock-runtime.<region>`` endpoint (a
VPC endpoint, a proxy) is used as is. ``AWS_BEDROCK_SKIP_AUTH=1`` sends unsigned requests (proxies that
authenticate themselves).

botocore is an optional dependency: ``pip install 'pi-core-agent[bedrock]'``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from pi_core import hookimpl, parse_json
from pi_core.ai import (
    ApiProvider,
    AuthResult,
    Context,
    EncodedMessages,
    Model,
    ProviderAuth,
    ProviderError,
    ProviderHTTPError,
    StreamOptions,
    StreamWriter,
    catalog_provider,
    body_bytes,
    conversation,
    conversation_messages,
    post_stream,
    requested_level,
    sanitize_id,
    sanitize_surrogates,
    system_prompt,
    transform_messages,
    TurnCache,
)

API = "bedrock-converse-stream"
EXTRA = "pip install 'pi-core-agent[bedrock]'"
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                "model_context_window_exceeded": "length", "tool_use": "toolUse"}
ERROR_PREFIXES = {"internalServerException": "Internal server error", "modelStreamErrorException": "Model stream error",
                  "validationException": "Validation error", "throttlingException": "Throttling error",
                  "serviceUnavailableException": "Service unavailable"}
AMBIENT_VARS = ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE")
_STANDARD_ENDPOINT = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
EMPTY_TEXT = "(empty)"


def _botocore() -> Any:
    try:
        import botocore.session
    except ImportError as exc:
        raise ProviderError(f"Amazon Bedrock needs botocore, an optional dependency: {EXTRA}") from exc
    return botocore


# -- credentials and endpoint ------------------------------------------------------------------------------
def ambient_configured(env: Mapping[str, str]) -> bool:
    """pi's check: a profile, keys, a bearer token, container or web-identity credentials are set."""
    if any(env.get(name) for name in AMBIENT_VARS):
        return True
    return bool(env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"))


async def ambient_auth(env: Mapping[str, str]) -> AuthResult | None:
    """A bearer token, or credentials from the standard AWS chain (resolved in a thread: it may read
    files, exchange a web-identity token or ask the instance metadata service)."""
    token = (env.get("AWS_BEARER_TOKEN_BEDROCK") or "").strip()
    if token:
        return AuthResult(api_key=token, source="AWS_BEARER_TOKEN_BEDROCK")
    if env.get("AWS_BEDROCK_SKIP_AUTH") == "1":
        return AuthResult(source="AWS_BEDROCK_SKIP_AUTH", kind="ambient")
    if not ambient_configured(env):
        return None
    credentials, region = await asyncio.to_thread(aws_credentials, env)
    if credentials is None:
        return None
    return AuthResult(source="AWS credential chain", kind="ambient",
                      extra={"aws_credentials": credentials, "aws_region": region})


def aws_credentials(env: Mapping[str, str]) -> tuple[Any, str | None]:
    """Frozen credentials and the profile's region, from botocore's default chain."""
    botocore = _botocore()
    session = botocore.session.Session()
    profile = env.get("AWS_PROFILE")
    if profile:
        session.set_config_variable("profile", profile)
    credentials = session.get_credentials()
    region = session.get_config_variable("region")
    return (credentials.get_frozen_credentials() if credentials is not None else None), region


def endpoint_region(base_url: str) -> str | None:
    match = _STANDARD_ENDPOINT.match((urlsplit(base_url).hostname or "").lower())
    return match.group(1) if match else None


def resolve_target(model: Model, options: StreamOptions) -> tuple[str, str]:
    """``(endpoint, region)`` of a request."""
    configured = options.getenv("AWS_REGION") or options.getenv("AWS_DEFAULT_REGION")
    auth = options.auth
    profile_region = auth.extra.get("aws_region") if auth is not None else None
    from_url = endpoint_region(model.base_url)
    arn = _ARN_REGION.match(model.id)
    region = (arn.group(1) if arn else None) or configured or profile_region or from_url or "us-east-1"
    if model.base_url and from_url is None:
        return model.base_url.rstrip("/"), region  # a custom endpoint (VPC, proxy) stays as given
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://bedrock-runtime.{region}{suffix}", region


def signed_headers(url: str, body: bytes, region: str, credentials: Any, headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` plus the SigV4 ones (``Authorization``, ``X-Amz-Date``, the session token), made by botocore."""
    _botocore()
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(credentials, "bedrock", region).add_auth(request)
    return dict(request.headers.items())


# -- messages --------------------------------------------------------------------------------------------
def is_claude(model: Model) -> bool:
    text = f"{model.id} {model.name or ''}".lower()
    return "anthropic.claude" in text or "anthropic/claude" in text or "claude" in (model.name or "").lower()


def _candidates(model: Model) -> list[str]:
    return [v for value in (model.id, model.name or "") for v in (value.lower(), re.sub(r"[\s_.:]+", "-", value.lower()))]


def supports_caching(model: Model, options: StreamOptions) -> bool:
    names = _candidates(model)
    if not any("claude" in n for n in names):
        return options.getenv("AWS_BEDROCK_FORCE_CACHE") == "1"
    return any(k in n for n in names for k in ("fable-5", "opus-5", "sonnet-5", "haiku-5", "-4-", "claude-3-7-sonnet",
                                                "claude-3-5-haiku"))


def supports_adaptive(model: Model) -> bool:
    return any(k in n for n in _candidates(model) for k in ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6",
                                                             "sonnet-5", "haiku-5", "fable-5"))


def _image(block: Any) -> dict[str, Any]:
    formats = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
    if block.mime_type not in formats:
        raise ProviderError(f"Bedrock does not take images of type {block.mime_type}")
    return {"image": {"format": formats[block.mime_type], "source": {"bytes": block.data}}}  # blobs are base64 in JSON


def _text(text: str) -> dict[str, Any] | None:
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _assistant(message: Any, model: Model) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        kind = block.type
        if kind == "text":
            if (item := _text(block.text)) is not None:
                blocks.append(item)
        elif kind == "toolCall":
            blocks.append({"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments or {}}})
        elif kind == "thinking":
            if block.redacted:
                if block.thinking_signature:
                    blocks.append({"reasoningContent": {"redactedContent": block.thinking_signature}})
                continue
            thinking = sanitize_surrogates(block.thinking)
            if not thinking.strip():
                continue
            if not is_claude(model):
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif block.thinking_signature and block.thinking_signature.strip():
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking,
                                                                      "signature": block.thinking_signature}}})
            else:
                blocks.append({"text": thinking})  # unsigned thinking cannot be replayed as thinking
    return blocks


def _tool_result(result: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in result.content:
        if block.type == "image":
            content.append(_image(block))
        elif (item := _text(block.text)) is not None:
            content.append(item)
    return {"toolResult": {"toolUseId": result.tool_call_id, "content": content or [{"text": EMPTY_TEXT}],
                           "status": "error" if result.is_error else "success"}}


def convert_messages(model: Model, context: Context, cache_point: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ``messages`` (after cross-provider handoff), ``cache_point`` added to the last one when it is
    a user message, as a plain list."""
    return list(encoded_messages(model, context, cache_point))


def encoded_messages(model: Model, context: Context, cache_point: dict[str, Any] | None) -> EncodedMessages:
    """The ``messages``, converted turn by turn (a turn starts at an assistant message: nothing before it
    depends on what follows); the turns of the previous request that are the same are reused as they were
    encoded (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long session costs what is new in it.
    A turn's tool results share one user message; results stored after a failed answer (which is left
    out) start one of their own. ``cache_point`` goes on the last message when it is a user message (the
    last turn is never reused, so the mark never reaches a later request)."""
    key = json.dumps([model.provider, model.api, model.id, model.name, list(model.input)])
    messages = _TURNS.convert(key, conversation_messages(context), lambda turn, offset: (_convert_turn(turn, model), 0))
    last = messages.last() if cache_point else None
    if last is not None and last["role"] == "user":
        last["content"].append({"cachePoint": cache_point})
    return messages


_TURNS = TurnCache()


def _convert_turn(turn: list[Any], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in transform_messages(conversation(turn), model, lambda i, m, s: sanitize_id(i, 64)):
        role = message.role
        if role == "user":
            if isinstance(message.content, str):
                content = [_text(message.content) or {"text": EMPTY_TEXT}]
            else:
                content = [c for b in message.content
                           if (c := _text(b.text) if b.type == "text" else _image(b)) is not None]
                content = content or [{"text": EMPTY_TEXT}]
            out.append({"role": "user", "content": content})
        elif role == "assistant":
            blocks = _assistant(message, model)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            if out and out[-1]["role"] == "user" and all("toolResult" in c for c in out[-1]["content"]):
                out[-1]["content"].append(_tool_result(message))  # one user message holds a turn's results
            else:
                out.append({"role": "user", "content": [_tool_result(message)]})
    return out


def is_govcloud(model: Model, options: StreamOptions) -> bool:
    """A request to AWS GovCloud: its region is ``us-gov-*`` or the model is a GovCloud profile or ARN."""
    model_id = model.id.lower()
    return (resolve_target(model, options)[1].lower().startswith("us-gov-") or model_id.startswith("us-gov.")
            or model_id.startswith("arn:aws-us-gov:"))


def _reasoning_fields(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    level = requested_level(model, options)
    if not level or not model.reasoning:
        return None
    if is_claude(model):
        # GovCloud's Converse schema rejects Claude's thinking.display (as pi 1.6 notes); it is left out there.
        display = {} if is_govcloud(model, options) else {"display": "summarized"}
        if supports_adaptive(model):
            mapped = (model.thinking_level_map or {}).get(level)
            effort = mapped if isinstance(mapped, str) else {"minimal": "low", "low": "low", "medium": "medium"}.get(
                level, "high")
            return {"thinking": {"type": "adaptive", **display}, "output_config": {"effort": effort}}
        return {"thinking": {"type": "enabled", "budget_tokens": options.budget_for(level), **display},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    names = _candidates(model)
    if any("gpt-oss" in n for n in names):
        return {"reasoning_effort": {"minimal": "low", "xhigh": "high", "max": "high"}.get(level, level)}
    if any("gpt-" in n for n in names):
        mapped = (model.thinking_level_map or {}).get(level)
        return {"reasoning": {"effort": mapped if isinstance(mapped, str) else {"minimal": "low"}.get(level, level)}}
    return None


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    retention = options.cache_retention or ("long" if options.getenv("PI_CACHE_RETENTION") == "long" else "short")
    cache_point = None
    if retention != "none" and supports_caching(model, options):
        cache_point = {"type": "default", **({"ttl": "1h"} if retention == "long" else {})}
    payload: dict[str, Any] = {"messages": encoded_messages(model, context, cache_point)}
    prompt = system_prompt(context)
    if prompt:
        payload["system"] = [{"text": sanitize_surrogates(prompt)}] + ([{"cachePoint": cache_point}]
                                                                       if cache_point else [])
    inference: dict[str, Any] = {}
    max_tokens = options.max_tokens or (model.max_tokens if is_claude(model) else None)
    if max_tokens:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    payload["inferenceConfig"] = inference
    if context.tools and options.tool_choice != "none":
        config: dict[str, Any] = {"tools": [{"toolSpec": {"name": t.name, "description": t.description,
                                                          "inputSchema": {"json": t.parameters}}}
                                            for t in context.tools]}
        choice = options.tool_choice
        if choice in ("auto", "any"):
            config["toolChoice"] = {choice: {}}
        elif isinstance(choice, dict) and choice.get("type") == "tool":
            config["toolChoice"] = {"tool": {"name": choice.get("name")}}
        payload["toolConfig"] = config
    fields = _reasoning_fields(model, options)
    if fields:
        payload["additionalModelRequestFields"] = fields
    return payload


# -- the event stream ---------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.open: dict[int, int] = {}
        self.started = False

    def event(self, kind: str, data: dict[str, Any]) -> None:
        writer = self.writer
        if kind == "messageStart":
            if data.get("role") != "assistant":
                raise ProviderError("Bedrock started a message that is not the assistant's")
            self.started = True
        elif kind == "contentBlockStart":
            tool = (data.get("start") or {}).get("toolUse")
            if tool:
                self.open[data.get("contentBlockIndex", 0)] = writer.toolcall_start(tool.get("toolUseId") or "",
                                                                                    tool.get("name") or "")
        elif kind == "contentBlockDelta":
            self._delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif kind == "contentBlockStop":
            self._stop(data.get("contentBlockIndex", 0))
        elif kind == "messageStop":
            reason = data.get("stopReason")
            writer.message.raw_stop_reason = reason
            mapped = STOP_REASONS.get(reason or "")
            if mapped is None:
                writer.message.stop_reason = "error"
                writer.message.error_message = f"Provider stopped with: {reason}" if reason else None
            else:
                writer.message.stop_reason = mapped  # type: ignore[assignment]
        elif kind == "metadata":
            usage = data.get("usage") or {}
            if usage:
                writer.set_usage(input=usage.get("inputTokens") or 0, output=usage.get("outputTokens") or 0,
                                 cache_read=usage.get("cacheReadInputTokens") or 0,
                                 cache_write=usage.get("cacheWriteInputTokens") or 0,
                                 total_tokens=usage.get("totalTokens") or 0)

    def _delta(self, block: int, delta: dict[str, Any]) -> None:
        writer = self.writer
        if "text" in delta:
            if block not in self.open:
                self.open[block] = writer.text_start()
            writer.text_delta(self.open[block], delta["text"] or "")
        elif "toolUse" in delta and block in self.open:
            writer.toolcall_delta(self.open[block], (delta["toolUse"] or {}).get("input") or "")
        elif "reasoningContent" in delta:
            reasoning = delta["reasoningContent"] or {}
            if block not in self.open:
                self.open[block] = writer.thinking_start()
            index = self.open[block]
            if reasoning.get("text"):
                writer.thinking_delta(index, reasoning["text"])
            if reasoning.get("signature"):
                writer.thinking_signature(index, reasoning["signature"])
            if reasoning.get("redactedContent"):
                thinking = writer.message.content[index]
                if not getattr(thinking, "redacted", False):
                    thinking.redacted = True
                    thinking.thinking_signature = ""
                    writer.thinking_delta(index, "[Reasoning redacted]")
                thinking.thinking_signature = (thinking.thinking_signature or "") + reasoning["redactedContent"]

    def _stop(self, block: int) -> None:
        index = self.open.pop(block, None)
        if index is None:
            return
        kind = self.writer.open_blocks.get(index)
        if kind == "text":
            self.writer.text_end(index)
        elif kind == "thinking":
            self.writer.thinking_end(index)
        elif kind == "toolCall":
            self.writer.toolcall_end(index)


def _error_text(kind: str, payload: bytes) -> str:
    try:
        message = parse_json(payload or b"{}").get("message") or payload.decode("utf-8", "replace")
    except (ValueError, AttributeError):
        message = payload.decode("utf-8", "replace")
    key = kind[:1].lower() + kind[1:]
    return f"{ERROR_PREFIXES.get(key, kind)}: {message}"


async def stream_bedrock(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``bedrock-converse-stream`` stream function."""
    _botocore()
    from botocore.eventstream import EventStreamBuffer

    endpoint, region = resolve_target(model, options)
    url = f"{endpoint}/model/{quote(model.id, safe='')}/converse-stream"
    payload = await options.apply_on_payload(build_payload(model, context, options))
    body = body_bytes(payload)  # signed whole
    headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
    headers.update({k: v for k, v in (options.headers or {}).items() if k.lower() not in ("authorization", "host")})
    auth = options.auth
    credentials = auth.extra.get("aws_credentials") if auth is not None else None
    if options.api_key:
        headers["authorization"] = f"Bearer {options.api_key}"
    elif credentials is not None:
        headers = signed_headers(url, body, region, credentials, headers)
    elif options.getenv("AWS_BEDROCK_SKIP_AUTH") != "1":
        raise ProviderError("No AWS credentials for Amazon Bedrock: set AWS_PROFILE, AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK, or use web identity or container "
                            "credentials (or `pi auth login amazon-bedrock` for a Bedrock API key)")
    parser = _Parser(writer)
    buffer = EventStreamBuffer()
    try:
        async with post_stream(url, body, headers, style="anthropic", client=options.client,
                               read_timeout=options.read_timeout) as response:
            writer.start()
            async for chunk in response.aiter_bytes():
                buffer.add_data(chunk)
                for message in buffer:
                    kind = message.headers.get(":event-type") or message.headers.get(":exception-type") or ""
                    if message.headers.get(":message-type") in ("exception", "error"):
                        raise ProviderError(_error_text(kind or message.headers.get(":error-code", "Error"),
                                                        message.payload))
                    try:
                        data = parse_json(message.payload or b"{}")
                    except ValueError as exc:  # malformed, or nested too deeply
                        raise ProviderError(f"Invalid Bedrock stream event {kind or '?'}: {exc}") from None
                    parser.event(kind, data)
                await writer.drain()
    except ProviderHTTPError as exc:
        kind = (exc.body and _error_type(exc)) or ""
        raise ProviderError(f"{exc.status} {_error_text(kind or 'Error', exc.body.encode())}",
                            status=exc.status, retry_after_ms=exc.retry_after_ms) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("botocore"):
            raise ProviderError(f"Could not read the Bedrock event stream: {exc}") from exc
        raise
    for block in list(parser.open):
        parser._stop(block)
    message = writer.message
    if message.stop_reason == "pending":
        raise ProviderError("Bedrock stream ended without a stop reason")
    if message.stop_reason == "error":
        raise ProviderError(message.error_message or "An unknown error occurred")
    writer.finish(message.stop_reason)


def _error_type(exc: ProviderHTTPError) -> str:
    try:
        data = parse_json(exc.body)
    except ValueError:
        return ""
    kind = str(data.get("__type") or "") if isinstance(data, dict) else ""
    return kind.rsplit("#", 1)[-1]


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_bedrock))
    config = catalog_provider("amazon-bedrock", API)
    config.display_name = "Amazon Bedrock"
    config.auth = ProviderAuth(api_key_label="Amazon Bedrock API key", ambient=ambient_auth,
                               ambient_configured=ambient_configured, ambient_label="the AWS credential chain")
    register(config)


__all__ = ["API", "ambient_auth", "build_payload", "convert_messages", "resolve_target", "signed_headers",
           "stream_bedrock"]
