"""API ``mistral-conversations``: Mistral's own chat API, as pi 1.6 speaks it (the ``mistral`` provider).

``POST {baseUrl}/v1/chat/completions`` (``https://api.mistral.ai``) with ``stream: true`` and
``Authorization: Bearer``; the answer is SSE ``data:`` lines of completion chunks ending in ``[DONE]``.
Mistral's dialect, beside the OpenAI one: assistant messages carry ``prefix: false`` and a list of content
chunks, thinking as ``{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}`` (so it can be
replayed); images are ``{"type": "image_url", "image_url": "data:..."}``; tool results are ``role: tool``
messages with ``tool_call_id``, ``name`` and text (and image) chunks, ``[tool error]`` marking failures;
tool-call ids are nine letters and digits (longer ones are hashed, collisions avoided). Thinking: a model
with a thinking-level map sends ``reasoning_effort`` (``none`` when off, if the map says so); other
reasoning models send ``prompt_mode: "reasoning"``. The session id goes out as ``prompt_cache_key`` and
the ``x-affinity`` header (unless a header sets it). Streamed chunks carry ``content`` as a string or a list
of ``text``/``thinking`` chunks, ``tool_calls`` (arguments as a string or an object), ``usage`` with cached
prompt tokens under one of several names, and the finish reasons ``stop``, ``length``/``model_length``,
``tool_calls`` and ``error`` (a server error, retried).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from pi_core import JSONInputError, parse_json
from pi_core.ai import (
    ApiProvider,
    Context,
    EncodedMessages,
    MissingApiKeyError,
    Model,
    ProviderError,
    ProviderHTTPError,
    StreamOptions,
    StreamWriter,
    catalog_provider,
    clamp_max_tokens,
    conversation,
    conversation_messages,
    data_uri,
    iter_sse,
    js_json,
    merge_headers,
    post_stream,
    requested_level,
    sanitize_surrogates,
    short_hash,
    system_prompt,
    transform_messages,
    TurnCache,
)

API = "mistral-conversations"
TOOL_CALL_ID_LENGTH = 9
MAX_ERROR_BODY = 4000
FINISH_REASONS = {"stop": "stop", "length": "length", "model_length": "length", "tool_calls": "toolUse"}


# -- tool-call ids ---------------------------------------------------------------------------------------
def _derive_id(call_id: str, attempt: int) -> str:
    clean = "".join(c for c in call_id if c.isascii() and c.isalnum())
    if attempt == 0 and len(clean) == TOOL_CALL_ID_LENGTH:
        return clean
    seed = clean or call_id
    return short_hash(seed if attempt == 0 else f"{seed}:{attempt}", TOOL_CALL_ID_LENGTH)


class ToolCallIds:
    """Maps each tool-call id of a conversation to a distinct nine-character Mistral id."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.owners: dict[str, str] = {}

    def __call__(self, call_id: str, *_: Any) -> str:
        if call_id in self.ids:
            return self.ids[call_id]
        attempt = 0
        while True:
            candidate = _derive_id(call_id, attempt)
            if self.owners.get(candidate, call_id) == call_id:
                self.ids[call_id], self.owners[candidate] = candidate, call_id
                return candidate
            attempt += 1

    def count(self) -> int:  # not __len__: an empty map must stay true (handoff checks ``if normalize``)
        return len(self.ids)

    def truncate(self, count: int) -> None:
        """Forget all but the first ``count`` ids mapped (each mapping added one entry to both dicts)."""
        if count < len(self.ids):
            self.ids = dict(itertools.islice(self.ids.items(), count))
            self.owners = dict(itertools.islice(self.owners.items(), count))


# -- messages --------------------------------------------------------------------------------------------
def _tool_result_text(text: str, has_images: bool, images_ok: bool, is_error: bool) -> str:
    prefix = "[tool error] " if is_error else ""
    if text.strip():
        suffix = "\n[tool image omitted: model does not support images]" if has_images and not images_ok else ""
        return f"{prefix}{text.strip()}{suffix}"
    if has_images:
        if images_ok:
            return f"{prefix}(see attached image)"
        return f"{prefix}(image omitted: model does not support images)"
    return f"{prefix}(no tool output)"


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """The ``messages`` array (after cross-provider handoff, with Mistral tool-call ids), as a plain list."""
    return list(encoded_messages(model, context))


def encoded_messages(model: Model, context: Context) -> EncodedMessages:
    """The ``messages`` array, converted turn by turn (a turn starts at an assistant message); the turns
    of the previous request whose messages are the same are reused as they were encoded
    (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long session costs what is new in it.

    Tool-call ids are mapped across the conversation (a collision takes another id): one
    :class:`ToolCallIds` per conversation is kept beside its turns, each turn counting the ids it mapped
    (its ``consumed``), so that converting from turn ``k`` on starts from the ids mapped before it — exactly
    what converting the whole conversation at once gives."""
    head: list[dict[str, Any]] = []
    prompt = system_prompt(context)
    if prompt:
        head.append({"role": "system", "content": sanitize_surrogates(prompt)})
    key = json.dumps([model.provider, model.api, model.id, list(model.input)])
    found = _IDS.pop(key, None)
    ids = _IDS[key] = ToolCallIds() if found is None else found  # used last: kept longest, as the turns are
    while len(_IDS) > _TURNS.size:
        del _IDS[next(iter(_IDS))]

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int]:
        ids.truncate(offset)  # the ids mapped before this turn (a branch drops those of the turns left)
        before = ids.count()
        return _convert_turn(turn, model, ids), ids.count() - before

    return _TURNS.convert(key, conversation_messages(context), convert, head)


# The tool-call ids of a conversation live beside its turns; no stored turns on disk (a new process could
# not know the ids they gave out).
_TURNS = TurnCache(store=None)
_IDS: dict[str, ToolCallIds] = {}


def _convert_turn(turn: list[Any], model: Model, ids: ToolCallIds) -> list[dict[str, Any]]:
    images_ok = "image" in model.input
    out: list[dict[str, Any]] = []
    for message in transform_messages(_results_renamed(conversation(turn), ids), model, ids):
        role = message.role
        if role == "user":
            if isinstance(message.content, str):
                out.append({"role": "user", "content": sanitize_surrogates(message.content)})
                continue
            had_images = any(b.type == "image" for b in message.content)
            parts = [{"type": "text", "text": sanitize_surrogates(b.text)} if b.type == "text"
                     else {"type": "image_url", "image_url": data_uri(b)}
                     for b in message.content if b.type == "text" or images_ok]
            if parts:
                out.append({"role": "user", "content": parts})
            elif had_images:
                out.append({"role": "user", "content": "(image omitted: model does not support images)"})
        elif role == "assistant":
            parts, calls = [], []
            for block in message.content:
                if block.type == "text":
                    if block.text.strip():
                        parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif block.type == "thinking":
                    if block.thinking.strip():
                        parts.append({"type": "thinking",
                                      "thinking": [{"type": "text", "text": sanitize_surrogates(block.thinking)}]})
                elif block.type == "toolCall":
                    calls.append({"id": block.id, "type": "function", "index": 0,
                                  "function": {"name": block.name, "arguments": js_json(block.arguments or {})}})
            if parts or calls:
                item: dict[str, Any] = {"role": "assistant", "prefix": False}
                if parts:
                    item["content"] = parts
                if calls:
                    item["tool_calls"] = calls
                out.append(item)
        elif role == "toolResult":
            text = "\n".join(sanitize_surrogates(b.text) for b in message.content if b.type == "text")
            has_images = any(b.type == "image" for b in message.content)
            content: list[dict[str, Any]] = [{"type": "text", "text": _tool_result_text(
                text, has_images, images_ok, bool(message.is_error))}]
            if images_ok:
                content += [{"type": "image_url", "image_url": data_uri(b)} for b in message.content
                            if b.type == "image"]
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "name": message.tool_name,
                        "content": content})
    return out


def _results_renamed(messages: list[Any], ids: ToolCallIds) -> list[Any]:
    """``messages`` with the tool results of calls renamed in an earlier turn renamed alike (a result
    stored after another answer: converting the conversation at once renames it too)."""
    if not ids.ids:
        return messages
    out = []
    for message in messages:
        if message.role == "toolResult":
            new = ids.ids.get(message.tool_call_id)
            if new is not None and new != message.tool_call_id:
                message = message.model_copy(update={"tool_call_id": new})
        out.append(message)
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "any", "required"):
        return choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        return {"type": "function", "function": {"name": name}}
    return None


def _caching(options: StreamOptions) -> bool:
    return options.cache_retention != "none" and bool(options.session_id)


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    payload: dict[str, Any] = {"model": model.id, "stream": True, "messages": encoded_messages(model, context)}
    if context.tools:
        strict = bool((model.compat or {}).get("supportsStrictMode", False))
        payload["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                              "parameters": t.parameters, "strict": strict}}
                            for t in context.tools]
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    payload["max_tokens"] = clamp_max_tokens(model, context, options.max_tokens)
    choice = _tool_choice(options.tool_choice) if options.tool_choice else None
    if choice is not None:
        payload["tool_choice"] = choice
    if model.reasoning:
        level = requested_level(model, options)
        mapping = model.thinking_level_map
        if mapping:
            effort = (mapping.get(level) or "high") if level else mapping.get("off")
            if effort:
                payload["reasoning_effort"] = effort
        elif level:
            payload["prompt_mode"] = "reasoning"
    if _caching(options):
        payload["prompt_cache_key"] = options.session_id
    return payload


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    if not options.api_key:
        raise MissingApiKeyError(model.provider)
    headers = merge_headers({"accept": "text/event-stream", "authorization": f"Bearer {options.api_key}",
                             "content-type": "application/json"}, model.headers, options.headers)
    given = {k.lower() for k in {**(model.headers or {}), **(options.headers or {})}}
    if _caching(options) and "x-affinity" not in given:
        headers["x-affinity"] = options.session_id or ""
    return headers


# -- streaming -------------------------------------------------------------------------------------------
def _cached_tokens(usage: dict[str, Any], prompt: int) -> int:
    for outer, inner in (("promptTokensDetails", "cachedTokens"), ("prompt_tokens_details", "cached_tokens"),
                         ("promptTokenDetails", "cachedTokens"), ("prompt_token_details", "cached_tokens")):
        details = usage.get(outer)
        if isinstance(details, dict) and inner in details:
            value = details[inner]
            break
    else:
        value = usage.get("numCachedTokens", usage.get("num_cached_tokens", 0))
    value = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    return int(min(prompt, max(0, value)))


class _Parser:
    """Completion chunks → writer calls: one open text or thinking block at a time, tool calls by index."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.current: tuple[str, int] | None = None
        self.tools: dict[Any, int] = {}
        self.finished = False

    def _close(self) -> None:
        if self.current is not None:
            kind, index = self.current
            (self.writer.text_end if kind == "text" else self.writer.thinking_end)(index)
            self.current = None

    def _append(self, kind: str, text: str) -> None:
        text = sanitize_surrogates(text)
        if not text:  # empty deltas around thinking and tool calls would split blocks
            return
        if self.current is None or self.current[0] != kind:
            self._close()
            self.current = (kind, self.writer.text_start() if kind == "text" else self.writer.thinking_start())
        index = self.current[1]
        (self.writer.text_delta if kind == "text" else self.writer.thinking_delta)(index, text)

    def chunk(self, data: dict[str, Any]) -> None:
        message = self.writer.message
        if not message.response_id and data.get("id"):
            message.response_id = data["id"]
        usage = data.get("usage")
        if isinstance(usage, dict):
            prompt = usage.get("prompt_tokens") or 0
            cached = _cached_tokens(usage, prompt)
            self.writer.set_usage(input=max(0, prompt - cached), output=usage.get("completion_tokens") or 0,
                                  cache_read=cached, total_tokens=usage.get("total_tokens") or None)
        choice = data["choices"][0] if data["choices"] else None
        if not isinstance(choice, dict):
            return
        reason = choice.get("finish_reason")
        if reason:
            message.raw_stop_reason = reason
            message.stop_reason = FINISH_REASONS.get(reason, "error")  # type: ignore[assignment]
            if message.stop_reason == "error":
                message.error_message = ("Provider stopped with: error (server error)" if reason == "error"
                                         else f"Provider stopped with: {reason}")
            self.finished = True
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content is not None:
            for item in [content] if isinstance(content, str) else content:
                if isinstance(item, str):
                    self._append("text", item)
                elif isinstance(item, dict) and item.get("type") == "thinking":
                    self._append("thinking", "".join(p.get("text") or "" for p in item.get("thinking") or []
                                                     if isinstance(p, dict)))
                elif isinstance(item, dict) and item.get("type") == "text":
                    self._append("text", item.get("text") or "")
        for call in delta.get("tool_calls") or []:
            self._tool_call(call)

    def _tool_call(self, call: dict[str, Any]) -> None:
        self._close()
        given = call.get("id")
        call_id = given if given and given != "null" else _derive_id(f"toolcall:{call.get('index') or 0}", 0)
        key = call.get("index") if call.get("index") is not None else call_id
        function = call.get("function") or {}
        index = self.tools.get(key)
        if index is None:
            index = self.writer.toolcall_start(call_id, function.get("name") or "")
            self.tools[key] = index
        arguments = function.get("arguments")
        self.writer.toolcall_delta(index, arguments if isinstance(arguments, str) else js_json(arguments or {}))

    def finish(self) -> None:
        self._close()
        self.writer.close_open_blocks()


async def stream_mistral(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``mistral-conversations`` stream function."""
    headers = request_headers(model, options)
    payload = await options.apply_on_payload(build_payload(model, context, options))
    url = model.base_url.rstrip("/") + "/v1/chat/completions"
    parser = _Parser(writer)
    try:
        async with post_stream(url, payload, headers, style="openai", client=options.client,
                               read_timeout=options.read_timeout, observer=options.observer) as response:
            writer.start()
            async for event in iter_sse(response.aiter_bytes(), writer.drain):
                if event.data.strip() == "[DONE]":
                    break
                if not event.data.strip():
                    continue
                data = parse_json(event.data)
                if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                    raise ProviderError("Invalid Mistral streaming event")
                await options.observe(data)
                parser.chunk(data)
    except ProviderHTTPError as exc:
        body = exc.body.strip()
        text = body[:MAX_ERROR_BODY] + ("…" if len(body) > MAX_ERROR_BODY else "") if body else str(exc)
        raise ProviderError(f"Mistral API error ({exc.status}): {text}", status=exc.status,
                            retry_after_ms=exc.retry_after_ms) from exc
    except JSONInputError as exc:  # malformed, or nested too deeply
        raise ProviderError(f"Invalid Mistral streaming event: {exc}") from exc
    parser.finish()
    message = writer.message
    if not parser.finished:
        raise ProviderError("Mistral stream ended without a finish reason")
    if message.stop_reason == "error":
        raise ProviderError(message.error_message or "An unknown error occurred")
    writer.finish(message.stop_reason)


def register_providers(register: Any) -> None:
    """Registered by the ``openai-completions`` plugin (its entry point), which served Mistral before."""
    register(ApiProvider(api=API, stream=stream_mistral))
    config = catalog_provider("mistral", API)
    config.display_name = "Mistral"
    register(config)


__all__ = ["API", "ToolCallIds", "build_payload", "convert_messages", "request_headers", "stream_mistral"]
