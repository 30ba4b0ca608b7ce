"""API ``anthropic-messages``: Anthropic's Messages API (also MiniMax, and OpenRouter/Fireworks models
served through it).

``POST {baseUrl}/v1/messages?beta=true`` with ``stream: true``; auth ``x-api-key``, or a bearer token:
a Claude Pro/Max sign-in (an OAuth token, ``sk-ant-oat…``) is sent the way Claude Code sends it — the
``Authorization`` header, Claude Code's user agent and beta flags, its identity as the first system
block and its tool names (``Read`` for ``read``), which the subscription backend requires — and an
``Authorization`` header from the credential (``ANTHROPIC_AUTH_TOKEN``, Copilot) replaces the key. Thinking uses a
token budget per level (``enabled``) or, for models whose compat says ``forceAdaptiveThinking``,
``adaptive`` thinking with an effort. Prompt-cache markers go on the system prompt, the last tool and the
last user block. Thinking signatures are kept and replayed; redacted thinking round-trips as
``redacted_thinking``.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from pi_core import hookimpl
from pi_core.ai import (
    ApiProvider,
    Context,
    EncodedMessages,
    MissingApiKeyError,
    Model,
    ProviderError,
    StreamOptions,
    StreamWriter,
    TurnCache,
    adjust_max_tokens_for_thinking,
    catalog_provider,
    clamp_max_tokens,
    conversation,
    conversation_messages,
    iter_sse_batches,
    merge_headers,
    parse_json_with_repair,
    post_stream,
    remakeable,
    requested_level,
    sanitize_id,
    sanitize_surrogates,
    system_prompt,
    transform_messages,
)

API = "anthropic-messages"
VERSION = "2023-06-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
MESSAGE_EVENTS = {"message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta",
                  "content_block_stop"}
STOP_REASONS = {"end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse", "pause_turn": "stop",
                "stop_sequence": "stop", "model_context_window_exceeded": "length"}


#: What the subscription backend expects of a Claude Code client (facts of that service, not pi's).
CLAUDE_CODE_VERSION = "2.1.322"
CLAUDE_CODE_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_TOOLS = {name.lower(): name for name in (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
    "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch")}


def is_oauth_token(key: str | None) -> bool:
    """Whether ``key`` is a Claude subscription token (sent as a bearer token, Claude Code style)."""
    return bool(key) and "sk-ant-oat" in key  # type: ignore[operator]


def claude_code_name(name: str, oauth: bool) -> str:
    return CLAUDE_CODE_TOOLS.get(name.lower(), name) if oauth else name


def tool_name_from_reply(name: str, context: Context, oauth: bool) -> str:
    """The conversation's own name of a tool the model called by its Claude Code name."""
    if not oauth:
        return name
    lowered = name.lower()
    return next((t.name for t in context.tools or [] if t.name.lower() == lowered), name)


def compat_of(model: Model) -> dict[str, Any]:
    c = model.compat or {}
    openrouter = model.provider == "openrouter" or "openrouter.ai" in model.base_url
    return {"supportsEagerToolInputStreaming": c.get("supportsEagerToolInputStreaming", True),
            "supportsLongCacheRetention": c.get("supportsLongCacheRetention", True),
            "supportsCacheControlOnTools": c.get("supportsCacheControlOnTools", True),
            "supportsTemperature": c.get("supportsTemperature", True),
            "allowEmptySignature": c.get("allowEmptySignature", False),
            "forceAdaptiveThinking": c.get("forceAdaptiveThinking", False),
            "sendSessionAffinityHeaders": c.get("sendSessionAffinityHeaders", openrouter),
            "sessionAffinityFormat": c.get("sessionAffinityFormat", "openrouter" if openrouter else None)}


def cache_control(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    retention = options.cache_retention or ("long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short")
    if retention == "none":
        return None
    if retention == "long" and compat_of(model)["supportsLongCacheRetention"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


# -- messages ------------------------------------------------------------------------------------
# Messages are models or the read-only views of stored ones (pi_core.ai.views): told apart by role
# and block type, never by class.
def _image(image: Any) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _result_content(result: Any) -> Any:
    if not any(b.type == "image" for b in result.content):
        return sanitize_surrogates("\n".join(b.text for b in result.content if b.type == "text"))
    blocks = [{"type": "text", "text": sanitize_surrogates(b.text)} if b.type == "text" else _image(b)
              for b in result.content]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _user(message: Any) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)} if message.content.strip() else None
    blocks = [{"type": "text", "text": sanitize_surrogates(b.text)} if b.type == "text" else _image(b)
              for b in message.content]
    blocks = [b for b in blocks if b["type"] != "text" or b["text"].strip()]
    return {"role": "user", "content": blocks} if blocks else None


def _assistant(message: Any, allow_empty_signature: bool, oauth: bool = False) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        kind = block.type
        if kind == "text":
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif kind == "thinking":
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
                continue
            signed = bool(block.thinking_signature and block.thinking_signature.strip())
            if not signed and not block.thinking.strip():
                continue
            if signed:
                blocks.append({"type": "thinking", "thinking": sanitize_surrogates(block.thinking),
                               "signature": block.thinking_signature})
            elif allow_empty_signature:
                blocks.append({"type": "thinking", "thinking": sanitize_surrogates(block.thinking), "signature": ""})
            else:  # unsigned thinking (an aborted stream) cannot be replayed as thinking
                blocks.append({"type": "text", "text": sanitize_surrogates(block.thinking)})
        elif kind == "toolCall":
            blocks.append({"type": "tool_use", "id": block.id, "name": claude_code_name(block.name, oauth),
                           "input": block.arguments or {}})
    return {"role": "assistant", "content": blocks} if blocks else None


def convert_messages(model: Model, context: Context, marker: dict[str, Any] | None,
                     oauth: bool = False) -> list[dict[str, Any]]:
    """The ``messages`` array (after handoff), as a plain list; consecutive tool results share one
    user message."""
    return list(encoded_messages(model, context, marker, oauth))


def encoded_messages(model: Model, context: Context, marker: dict[str, Any] | None,
                     oauth: bool = False) -> EncodedMessages:
    """The ``messages`` array, converted turn by turn (a turn starts at an assistant message: nothing
    before it depends on what follows); the turns of the previous request that are the same are reused
    as they were encoded (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long session costs
    what is new in it. ``marker`` (prompt caching) goes on the last user block."""
    allow_empty = compat_of(model)["allowEmptySignature"]
    key = json.dumps([model.provider, model.api, model.id, list(model.input), allow_empty, oauth])
    from .anthropic_raw import raw_converter

    raw = remakeable(raw_converter, model, allow_empty, functools.partial(claude_code_name, oauth=oauth))
    messages = _TURNS.convert(key, conversation_messages(context),
                              lambda turn, offset: (_convert_turn(turn, model, allow_empty, oauth), 0), None, raw,
                              independent=True)
    if marker:
        _mark_last_user(messages, marker)
    return messages


_TURNS = TurnCache()


def _convert_turn(turn: list[Any], model: Model, allow_empty: bool, oauth: bool) -> list[dict[str, Any]]:
    messages = transform_messages(conversation(turn), model, lambda i, m, s: sanitize_id(i, 64))
    params: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = message.role
        if role == "toolResult":
            results = []
            while i < len(messages) and messages[i].role == "toolResult":
                r = messages[i]
                results.append({"type": "tool_result", "tool_use_id": r.tool_call_id, "content": _result_content(r),
                                "is_error": r.is_error})
                i += 1
            params.append({"role": "user", "content": results})
            continue
        item = _user(message) if role == "user" else _assistant(message, allow_empty, oauth) \
            if role == "assistant" else None
        if item is not None:
            params.append(item)
        i += 1
    return params


def _mark_last_user(messages: EncodedMessages, marker: dict[str, Any]) -> None:
    last = messages.last()  # the last turn's items are never kept encoded: changing them is safe
    if last is None or last["role"] != "user":
        return
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": marker}]
    elif last["content"] and last["content"][-1]["type"] in ("text", "image", "tool_result"):
        last["content"][-1]["cache_control"] = marker


def convert_tools(context: Context, model: Model, marker: dict[str, Any] | None,
                  oauth: bool = False) -> list[dict[str, Any]]:
    compat = compat_of(model)
    tools = []
    for tool in context.tools or []:
        schema = tool.parameters or {}
        input_schema: dict[str, Any] = {"type": "object", "properties": schema.get("properties") or {},
                                        "required": schema.get("required") or []}
        for key in ("additionalProperties", "$defs", "definitions"):
            if key in schema:
                input_schema[key] = schema[key]
        entry: dict[str, Any] = {"name": claude_code_name(tool.name, oauth), "description": tool.description}
        if compat["supportsEagerToolInputStreaming"]:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = input_schema
        tools.append(entry)
    if tools and marker and compat["supportsCacheControlOnTools"]:
        tools[-1]["cache_control"] = marker
    return tools


# -- payload ---------------------------------------------------------------------------------------
def effort_for(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def build_payload(model: Model, context: Context, options: StreamOptions) -> tuple[dict[str, Any], list[str]]:
    """The request body (pi 1.6's key order) and the beta features to announce."""
    compat = compat_of(model)
    marker = cache_control(model, options)
    level = requested_level(model, options)
    oauth = is_oauth_token(options.api_key)
    max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    budget = 0
    if level and not compat["forceAdaptiveThinking"]:
        max_tokens, budget = adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, level, options)
        max_tokens = clamp_max_tokens(model, context, max_tokens)
        budget = min(budget, max(0, max_tokens - 1024))
    payload: dict[str, Any] = {"model": model.id, "messages": encoded_messages(model, context, marker, oauth),
                               "max_tokens": max_tokens, "stream": True}
    texts = [CLAUDE_CODE_IDENTITY] if oauth else []
    prompt = system_prompt(context)
    if prompt:
        texts.append(sanitize_surrogates(prompt))
    if texts:
        payload["system"] = [{"type": "text", "text": text, **({"cache_control": marker} if marker else {})}
                             for text in texts]
    if options.temperature is not None and not level and compat["supportsTemperature"]:
        payload["temperature"] = options.temperature
    tools = convert_tools(context, model, marker, oauth)
    if tools:
        payload["tools"] = tools
    if model.reasoning and not level and (model.thinking_level_map or {}).get("off", "") is not None:
        payload["thinking"] = {"type": "disabled"}
    elif level and compat["forceAdaptiveThinking"]:
        payload["thinking"] = {"type": "adaptive", "display": "summarized"}
        payload["output_config"] = {"effort": effort_for(model, level)}
    elif level:
        payload["thinking"] = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        payload["metadata"] = {"user_id": user_id}
    if options.tool_choice is not None:
        choice = options.tool_choice
        payload["tool_choice"] = {"type": choice} if isinstance(choice, str) else choice
    betas = list(CLAUDE_CODE_BETAS) if oauth else []
    if tools and not compat["supportsEagerToolInputStreaming"]:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if level and not compat["forceAdaptiveThinking"]:
        betas.append(INTERLEAVED_THINKING_BETA)
    return payload, betas


def request_headers(model: Model, options: StreamOptions, betas: list[str]) -> dict[str, str]:
    given = {k.lower() for k in merge_headers(model.headers, options.headers)}
    header_auth = bool(given & {"authorization", "x-api-key", "cf-aig-authorization"})
    if not options.api_key and not header_auth:
        raise MissingApiKeyError(model.provider)
    base = {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true",
            "anthropic-version": VERSION}
    if is_oauth_token(options.api_key):
        base.update({"authorization": f"Bearer {options.api_key}", "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}",
                     "x-app": "cli"})
    elif options.api_key and not header_auth:
        base["x-api-key"] = options.api_key
    extra_betas = (options.auth.extra.get("anthropic_betas") if options.auth is not None else None) or []
    betas = [*betas, *(b for b in extra_betas if b not in betas)]
    if betas:
        base["anthropic-beta"] = ",".join(betas)
    compat = compat_of(model)
    if options.session_id and compat["sendSessionAffinityHeaders"] and not is_oauth_token(options.api_key):
        # pi's names: OpenRouter's x-session-id, else x-session-affinity (a subscription sign-in sends none)
        name = "x-session-id" if compat["sessionAffinityFormat"] == "openrouter" else "x-session-affinity"
        base[name] = options.session_id
    return merge_headers(base, model.headers, options.headers)


# -- streaming ---------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, writer: StreamWriter, model: Model, context: Context | None = None,
                 oauth: bool = False) -> None:
        self.writer, self.model = writer, model
        self.context, self.oauth = context, oauth
        self.open: dict[int, int] = {}  # provider block index -> content index
        self.started = self.stopped = False

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            handler(data)

    def _message_start(self, data: dict[str, Any]) -> None:
        self.started = True
        message = data.get("message") or {}
        self.writer.message.response_id = message.get("id")
        usage = message.get("usage") or {}
        self.writer.set_usage(input=usage.get("input_tokens") or 0, output=usage.get("output_tokens") or 0,
                              cache_read=usage.get("cache_read_input_tokens") or 0,
                              cache_write=usage.get("cache_creation_input_tokens") or 0, reasoning=None)

    def _content_block_start(self, data: dict[str, Any]) -> None:
        block, writer = data.get("content_block") or {}, self.writer
        kind = block.get("type")
        if kind == "text":
            index = writer.text_start(block.get("text") or "")
        elif kind == "thinking":
            index = writer.thinking_start(block.get("thinking") or "", signature=block.get("signature") or "")
        elif kind == "redacted_thinking":
            index = writer.thinking_start("[Reasoning redacted]", signature=block.get("data"), redacted=True)
        elif kind == "tool_use":
            name = block.get("name") or ""
            if self.context is not None:
                name = tool_name_from_reply(name, self.context, self.oauth)
            index = writer.toolcall_start(block.get("id") or "", name, block.get("input") or {})
        else:
            return  # server tools and other block types are not part of pi's message model
        self.open[data.get("index", 0)] = index

    def plain_text_delta(self, event: Any) -> bool:
        """An event from :func:`_plain_decoder`, if it is a text delta of an open block (what
        :meth:`_content_block_delta` would do with it); ``False``, doing nothing, for any other."""
        delta = event.delta
        if event.type != "content_block_delta" or delta is None or delta.type != "text_delta" \
                or type(event.index) is not int or not (delta.text is None or type(delta.text) is str):
            return False
        index = self.open.get(event.index)
        if index is not None:
            self.writer.text_delta(index, delta.text or "")
        return True

    def _content_block_delta(self, data: dict[str, Any]) -> None:
        index = self.open.get(data.get("index", 0))
        if index is None:
            return
        delta, writer = data.get("delta") or {}, self.writer
        kind = delta.get("type")
        if kind == "text_delta":
            writer.text_delta(index, delta.get("text") or "")
        elif kind == "thinking_delta":
            writer.thinking_delta(index, delta.get("thinking") or "")
        elif kind == "input_json_delta":
            writer.toolcall_delta(index, delta.get("partial_json") or "")
        elif kind == "signature_delta":
            writer.thinking_signature(index, delta.get("signature") or "")

    def _content_block_stop(self, data: dict[str, Any]) -> None:
        index = self.open.pop(data.get("index", 0), None)
        if index is None:
            return
        kind = self.writer.open_blocks.get(index)
        if kind == "text":
            self.writer.text_end(index)
        elif kind == "thinking":
            self.writer.thinking_end(index)
        elif kind == "toolCall":
            self.writer.toolcall_end(index)

    def _message_delta(self, data: dict[str, Any]) -> None:
        message = self.writer.message
        delta = data.get("delta") or {}
        reason = delta.get("stop_reason")
        if reason:
            message.raw_stop_reason = reason
            mapped = STOP_REASONS.get(reason)
            if mapped is None:
                message.stop_reason = "error"
                details = delta.get("stop_details") or {}
                message.error_message = (details.get("explanation") or "The model refused to complete the request"
                                         if reason == "refusal" else f"Provider stopped with: {reason}")
            else:
                message.stop_reason = mapped  # type: ignore[assignment]
        usage = data.get("usage") or {}
        u = message.usage
        thinking = (usage.get("output_tokens_details") or {}).get("thinking_tokens")
        self.writer.set_usage(  # proxies omit fields: keep what message_start reported
            input=_keep(usage.get("input_tokens"), u.input), output=_keep(usage.get("output_tokens"), u.output),
            cache_read=_keep(usage.get("cache_read_input_tokens"), u.cache_read),
            cache_write=_keep(usage.get("cache_creation_input_tokens"), u.cache_write),
            reasoning=thinking if thinking is not None else u.reasoning)

    def _message_stop(self, data: dict[str, Any]) -> None:
        self.stopped = True


def _keep(value: Any, current: int) -> int:
    return current if value is None else int(value)


async def stream_anthropic(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``anthropic-messages`` stream function."""
    payload, betas = build_payload(model, context, options)
    headers = request_headers(model, options, betas)
    payload = await options.apply_on_payload(payload)
    if isinstance(payload, dict):
        payload["stream"] = True
    url = model.base_url.rstrip("/") + "/v1/messages?beta=true"
    parser = _Parser(writer, model, context, is_oauth_token(options.api_key))
    async with post_stream(url, payload, headers, style="anthropic", client=options.client,
                           read_timeout=options.read_timeout, observer=options.observer) as response:
        writer.start()
        await _read_events(iter_sse_batches(response.aiter_bytes(), writer.drain), parser, options)
    _finish(writer, parser)


async def _read_events(batches: Any, parser: _Parser, options: StreamOptions) -> None:
    observe = options.stream_observer()
    plain = _plain_decoder() if observe is None else None  # an observer sees every event as a dict
    async for batch in batches:
        for event in batch:
            if event.event == "error":
                raise ProviderError(event.data)
            if event.event not in MESSAGE_EVENTS:
                continue  # ping and unknown events
            if plain is not None and event.event == "content_block_delta":
                try:
                    shape = plain(event.data)
                except Exception:  # noqa: BLE001 - not the common shape: the general path below decides
                    shape = None
                if shape is not None and parser.plain_text_delta(shape):
                    continue
            try:
                data = _event_json(event.data)
            except ValueError as exc:
                raise ProviderError(f"Could not parse Anthropic SSE event {event.event}: {exc}; data={event.data}")
            if not isinstance(data, dict):
                continue
            if observe is not None:
                await observe(data)
            parser.event(data)


_plain: Any = None


def _plain_decoder() -> Any:
    """A msgspec decoder of what :meth:`_Parser.plain_text_delta` reads from a ``content_block_delta`` event,
    into structs (other fields are skipped without being built): most events of an answer are one text
    delta. What it cannot decode goes the general way."""
    global _plain
    if _plain is None:
        import msgspec

        # defstruct: this module's annotations are strings, which msgspec cannot resolve for local classes
        delta = msgspec.defstruct("Delta", [("type", Any, None), ("text", Any, None)])
        event = msgspec.defstruct("Event", [("type", Any, None), ("index", Any, 0), ("delta", delta | None, None)])
        _plain = msgspec.json.Decoder(event).decode
    return _plain


_decode: Any = None


def _event_json(data: str) -> Any:
    """One event's JSON: msgspec first (several times the standard parser's speed, which a stream of many
    small deltas feels), then the strict parser that mends raw control characters and says what is wrong
    (``ValueError``)."""
    global _decode
    if _decode is None:
        import msgspec

        _decode = msgspec.json.Decoder().decode
    try:
        return _decode(data)
    except Exception:  # noqa: BLE001 - msgspec's errors are not ValueErrors; the strict parser decides
        return parse_json_with_repair(data)


def _finish(writer: StreamWriter, parser: _Parser) -> None:
    message = writer.message
    if parser.started and not parser.stopped:
        raise ProviderError("Anthropic stream ended before message_stop")
    if message.stop_reason == "pending":
        raise ProviderError("Anthropic stream ended without a stop reason")
    if message.stop_reason == "error":
        raise ProviderError(message.error_message or "An unknown error occurred")
    writer.finish(message.stop_reason)


@hookimpl
def register_providers(register: Any) -> None:
    from .anthropic_auth import anthropic_auth

    register(ApiProvider(api=API, stream=stream_anthropic))
    anthropic = catalog_provider("anthropic", API)
    anthropic.auth, anthropic.display_name = anthropic_auth(), "Anthropic"
    register(anthropic)
    for name in ("vercel-ai-gateway", "minimax-cn"):
        register(catalog_provider(name, API))
    register(catalog_provider("minimax", API))


__all__ = ["API", "build_payload", "convert_messages", "stream_anthropic"]
