"""API ``openai-responses``: OpenAI's Responses API (OpenAI and xAI models of the catalog).

``POST {baseUrl}/responses`` with ``stream: true`` and ``store: false`` (stateless). Reasoning items come
back with ``encrypted_content`` (requested through ``include``) and are kept whole, as JSON, in the
thinking block's signature, so the next request can replay them verbatim. Tool-call ids are
``<call_id>|<item_id>``; text blocks remember their message id (and phase) in ``text_signature``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pi_core import hookimpl, parse_json
from pi_core.ai import (
    ApiProvider,
    AssistantMessage,
    Context,
    EncodedMessages,
    MissingApiKeyError,
    Model,
    ProviderError,
    StreamOptions,
    StreamWriter,
    TurnCache,
    catalog_provider,
    clamp_max_tokens,
    conversation,
    conversation_messages,
    data_uri,
    is_loopback_url,
    iter_sse,
    js_json,
    mapped_level,
    merge_headers,
    post_stream,
    requested_level,
    sampling_params,
    sanitize_surrogates,
    short_hash,
    system_prompt,
    transform_messages,
)

API = "openai-responses"
MIN_OUTPUT_TOKENS = 16
#: Providers whose ``call|item`` ids are kept (item ids pass validation there).
TOOL_CALL_PROVIDERS = {"openai", "openai-codex", "opencode", "azure-openai-responses", "azure"}
SERVICE_TIER_MULTIPLIER = {"flex": 0.5, "priority": 2.0}
#: Headers that authenticate a request by themselves (a key is then not required).
AUTH_HEADERS = ("authorization", "api-key", "cf-aig-authorization", "x-api-key")
OPENAI_BASE_URL = "https://api.openai.com/v1"
CHATGPT_USAGE_URL = "https://chatgpt.com/settings/usage"
CHATGPT_WORKSPACE_LIMIT_HINT = ("You've reached your ChatGPT workspace's usage limit. Ask your workspace admin to "
                                "increase it at admin.openai.com \u2192 Workspace \u2192 Usage limits.")


def is_chatgpt_sign_in(model: Model, api_key: str | None) -> bool:
    """A Sign in with ChatGPT token sent straight to OpenAI (pi's rule: OpenAI API keys start with ``sk-``;
    another credential for the ``openai`` provider at OpenAI's own address is such a token)."""
    return (model.provider == "openai" and model.base_url == OPENAI_BASE_URL and bool(api_key)
            and not str(api_key).startswith("sk-"))


def _id_part(part: str) -> str:
    import re

    clean = re.sub(r"[^A-Za-z0-9_-]", "_", part)[:64]
    return clean.rstrip("_")


def normalize_tool_call_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    """Ids of other providers made valid here: sanitised; item ids must start with ``fc_``."""
    if model.provider not in TOOL_CALL_PROVIDERS or "|" not in call_id:
        return _id_part(call_id)
    call, _, item = call_id.partition("|")
    if source.provider != model.provider or source.api != model.api:
        item = f"fc_{short_hash(item)}"[:64]
    else:
        item = _id_part(item)
    if not item.startswith("fc_"):
        item = _id_part(f"fc_{item}")
    return f"{_id_part(call)}|{item}"


def _text_signature(signature: str | None) -> dict[str, Any] | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("v") == 1 and isinstance(data.get("id"), str):
            return {"id": data["id"], **({"phase": data["phase"]} if data.get("phase") in
                                          ("commentary", "final_answer") else {})}
    return {"id": signature}


# Messages are models or the read-only views of stored ones (pi_core.ai.views): told apart by role
# and block type, never by class.
def _tool_output(model: Model, result: Any) -> Any:
    text = "\n".join(b.text for b in result.content if b.type == "text")
    images = [b for b in result.content if b.type == "image"]
    if not images or "image" not in model.input:
        return sanitize_surrogates(text if text.strip() else "(see attached image)" if images else "(no tool output)")
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": sanitize_surrogates(text)}] if text.strip() else []
    parts += [{"type": "input_image", "detail": "auto", "image_url": data_uri(b)} for b in images]
    return parts


def _assistant_items(message: Any, model: Model, index: int, arguments: Callable[[Any], str]) -> list[dict[str, Any]]:
    same_api = message.provider == model.provider and message.api == model.api
    other_model = same_api and message.model != model.id
    items: list[dict[str, Any]] = []
    text_count = 0
    for block in message.content:
        kind = block.type
        if kind == "thinking":
            if block.thinking_signature:
                try:
                    items.append(json.loads(block.thinking_signature))
                except ValueError:
                    pass  # not a Responses reasoning item (another API's signature)
        elif kind == "text":
            parsed = _text_signature(block.text_signature)
            msg_id = parsed["id"] if parsed else (f"msg_pi_{index}" if text_count == 0 else f"msg_pi_{index}_{text_count}")
            if len(msg_id) > 64:
                msg_id = f"msg_{short_hash(msg_id)}"
            text_count += 1
            item: dict[str, Any] = {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": sanitize_surrogates(block.text), "annotations": []}],
                "status": "completed", "id": msg_id}
            if parsed and parsed.get("phase"):
                item["phase"] = parsed["phase"]
            items.append(item)
        elif kind == "toolCall":
            call, _, item_id = block.id.partition("|")
            entry: dict[str, Any] = {"type": "function_call"}
            if item_id.startswith("fc_") and not other_model:
                entry["id"] = item_id
            entry.update({"call_id": call, "name": block.name, "arguments": arguments(block)})
            items.append(entry)
    return items


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    """The ``input`` items for ``context`` (after handoff), as a plain list."""
    return list(encoded_input(model, context))


def encoded_input(model: Model, context: Context) -> EncodedMessages:
    """The ``input`` items, converted turn by turn (a turn starts at an assistant message: nothing
    before it depends on what follows); the turns of the previous request that are the same are reused
    as they were encoded (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long session costs
    what is new in it. Assistant text items without an id of their own are numbered by their place in
    the conversation: a turn starts at the number of messages before it."""
    head: list[dict[str, Any]] = []
    prompt = system_prompt(context)
    if prompt:
        role = "developer" if model.reasoning and (model.compat or {}).get("supportsDeveloperRole") is not False \
            else "system"
        head.append({"role": role, "content": sanitize_surrogates(prompt)})
    key = json.dumps([model.provider, model.api, model.id, list(model.input)])
    from .openai_responses_raw import raw_converter

    return _TURNS.convert(key, conversation_messages(context),
                          lambda turn, offset: _convert_turn(turn, model, offset), head, raw_converter(model))


_TURNS = TurnCache()


def _convert_turn(turn: list[Any], model: Model, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The items of one turn, whose first message is the conversation's message number ``offset``;
    also how many messages it numbered."""
    messages = transform_messages(conversation(turn), model, normalize_tool_call_id)
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages, offset):
        items += items_of_message(message, model, index)
    return items, len(messages)


def items_of_message(message: Any, model: Model, index: int,
                     arguments: Callable[[Any], str] = lambda call: js_json(call.arguments)) -> list[dict[str, Any]]:
    """The items of one message (after handoff), the conversation's message number ``index``;
    ``arguments(call)``: a tool call's arguments as JSON text."""
    role = message.role
    if role == "user":
        if isinstance(message.content, str):
            return [{"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(message.content)}]}]
        if message.content:
            return [{"role": "user", "content": [
                {"type": "input_text", "text": sanitize_surrogates(b.text)} if b.type == "text"
                else {"type": "input_image", "detail": "auto", "image_url": data_uri(b)} for b in message.content]}]
        return []
    if role == "assistant":
        return _assistant_items(message, model, index, arguments)
    if role == "toolResult":
        return [{"type": "function_call_output", "call_id": message.tool_call_id.split("|")[0],
                 "output": _tool_output(model, message)}]
    return []


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    compat = model.compat or {}
    retention = options.cache_retention or "short"
    chatgpt = is_chatgpt_sign_in(model, options.api_key)  # such tokens may not set these fields
    payload: dict[str, Any] = {"model": model.id, "input": encoded_input(model, context), "stream": True}
    if retention != "none" and options.session_id and compat.get("promptCacheKeyMode", "auto") != "disabled":
        payload["prompt_cache_key"] = options.session_id[:64]
    if retention == "long" and compat.get("supportsLongCacheRetention", True) and not chatgpt:
        payload["prompt_cache_retention"] = "24h"
    payload["store"] = False
    if compat.get("supportsMaxOutputTokens", True) and not chatgpt:
        payload["max_output_tokens"] = max(clamp_max_tokens(model, context, options.max_tokens), MIN_OUTPUT_TOKENS)
    if options.temperature is not None and not chatgpt:
        payload["temperature"] = options.temperature
    if options.extra.get("service_tier"):
        payload["service_tier"] = options.extra["service_tier"]
    if context.tools:
        payload["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                             "parameters": t.parameters} for t in context.tools]
        if compat.get("supportsStrictMode"):
            for tool in payload["tools"]:
                tool["strict"] = False
    if options.tool_choice is not None:
        payload["tool_choice"] = options.tool_choice
    _apply_reasoning(payload, model, options)
    payload.update(sampling_params(model, options) or {})  # last: the model's samplingParams win (pi)
    return payload


def _apply_reasoning(payload: dict[str, Any], model: Model, options: StreamOptions) -> None:
    if not model.reasoning:
        return
    level = requested_level(model, options)
    mapping = model.thinking_level_map or {}
    if level:
        payload["reasoning"] = {"effort": mapped_level(model, level),
                                "summary": options.extra.get("reasoning_summary") or "auto"}
        payload["include"] = ["reasoning.encrypted_content"]
    elif mapping.get("off", "") is not None and model.provider != "github-copilot":
        payload["reasoning"] = {"effort": mapping.get("off") or "none"}
    if model.provider == "xai":
        payload["include"] = ["reasoning.encrypted_content"]


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    given = merge_headers(model.headers, options.headers)
    header_auth = any(k.lower() in AUTH_HEADERS for k in given)
    if not options.api_key and not header_auth and not is_loopback_url(model.base_url):
        raise MissingApiKeyError(model.provider)
    base = {"accept": "application/json"}
    if options.api_key:
        base["authorization"] = f"Bearer {options.api_key}"
    base.update(session_affinity_headers(model, options))
    return merge_headers(base, model.headers, options.headers)


def session_affinity_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """pi's session-affinity headers (``compat.sessionAffinityFormat``; only while caching is on):
    ``openai`` (the default) sends ``session-id`` and ``x-client-request-id``, ``openai-nosession`` only the
    latter, ``openrouter`` (OpenRouter's URLs) ``x-session-id``."""
    session = options.session_id
    if not session or (options.cache_retention or "short") == "none":
        return {}
    detected = "openrouter" if model.provider == "openrouter" or "openrouter.ai" in model.base_url else "openai"
    style = (model.compat or {}).get("sessionAffinityFormat") or detected
    if style == "openrouter":
        return {"x-session-id": session}
    if style == "openai-nosession":
        return {"x-client-request-id": session}
    return {"session-id": session, "x-client-request-id": session}


# -- streaming ---------------------------------------------------------------------------------------
class _Parser:
    """Responses events → writer calls, one slot per ``output_index``."""

    def __init__(self, writer: StreamWriter, model: Model, options: StreamOptions) -> None:
        self.writer, self.model, self.options = writer, model, options
        self.slots: dict[int, tuple[str, int]] = {}
        self.terminal = False

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type", "")
        handler = getattr(self, "_" + kind.replace(".", "_"), None)
        if handler is not None:
            handler(data)

    def _slot(self, data: dict[str, Any], kind: str) -> int | None:
        slot = self.slots.get(data.get("output_index", -1))
        return slot[1] if slot and slot[0] == kind else None

    def _response_created(self, data: dict[str, Any]) -> None:
        self.writer.message.response_id = (data.get("response") or {}).get("id")

    def _response_output_item_added(self, data: dict[str, Any]) -> None:
        self._create(data.get("output_index", -1), data.get("item") or {})

    def _create(self, output_index: int, item: dict[str, Any]) -> None:
        writer, kind = self.writer, item.get("type")
        if kind == "reasoning":
            self.slots[output_index] = ("thinking", writer.thinking_start())
        elif kind == "message":
            if item.get("phase") == "final_answer":
                writer.message.stop_reason = "stop"
            self.slots[output_index] = ("text", writer.text_start())
        elif kind == "function_call":
            index = writer.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name") or "")
            if item.get("arguments"):
                writer.toolcall_delta(index, item["arguments"])
            self.slots[output_index] = ("toolCall", index)

    def _response_reasoning_summary_text_delta(self, data: dict[str, Any]) -> None:
        index = self._slot(data, "thinking")
        if index is not None:
            self.writer.thinking_delta(index, data.get("delta") or "")

    def _response_reasoning_summary_part_done(self, data: dict[str, Any]) -> None:
        index = self._slot(data, "thinking")
        if index is not None:
            self.writer.thinking_delta(index, "\n\n")

    _response_reasoning_text_delta = _response_reasoning_summary_text_delta

    def _response_output_text_delta(self, data: dict[str, Any]) -> None:
        index = self._slot(data, "text")
        if index is not None:
            self.writer.text_delta(index, data.get("delta") or "")

    _response_refusal_delta = _response_output_text_delta

    def _response_function_call_arguments_delta(self, data: dict[str, Any]) -> None:
        index = self._slot(data, "toolCall")
        if index is not None:
            self.writer.toolcall_delta(index, data.get("delta") or "")

    def _response_function_call_arguments_done(self, data: dict[str, Any]) -> None:
        index = self._slot(data, "toolCall")
        full = data.get("arguments")
        if index is not None and isinstance(full, str):
            seen = self.writer.toolcall_arguments_text(index)
            if full.startswith(seen) and len(full) > len(seen):
                self.writer.toolcall_delta(index, full[len(seen):])

    def _response_output_item_done(self, data: dict[str, Any]) -> None:
        item, output_index = data.get("item") or {}, data.get("output_index", -1)
        if item.get("type") == "message" and item.get("phase") == "final_answer":
            self.writer.message.stop_reason = "stop"
        if output_index not in self.slots:
            self._create(output_index, item)
        kind, index = self.slots.pop(output_index, (None, -1))
        writer = self.writer
        if kind == "thinking" and item.get("type") == "reasoning":
            summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            content = "\n\n".join(c.get("text", "") for c in item.get("content") or [])
            current = writer.message.content[index].thinking
            writer.thinking_end(index, summary or content or current, signature=js_json(item))
        elif kind == "text" and item.get("type") == "message":
            text = "".join(c.get("text", "") if c.get("type") == "output_text" else c.get("refusal", "")
                           for c in item.get("content") or [])
            signature = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            writer.text_end(index, text, signature=js_json(signature))
        elif kind == "toolCall" and item.get("type") == "function_call":
            writer.toolcall_end(index, item.get("arguments") or writer.toolcall_arguments_text(index))

    def _response_completed(self, data: dict[str, Any]) -> None:
        self._finalize(data.get("response") or {})

    _response_incomplete = _response_completed

    def _finalize(self, response: dict[str, Any]) -> None:
        self.terminal = True
        message, writer = self.writer.message, self.writer
        if response.get("id"):
            message.response_id = response["id"]
        usage = response.get("usage")
        if usage:
            details = usage.get("input_tokens_details") or {}
            cached, written = details.get("cached_tokens") or 0, details.get("cache_write_tokens") or 0
            writer.set_usage(input=max(0, (usage.get("input_tokens") or 0) - cached - written),
                             output=usage.get("output_tokens") or 0, cache_read=cached, cache_write=written,
                             reasoning=(usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
                             total_tokens=usage.get("total_tokens") or 0)
        self._service_tier(response.get("service_tier") or self.options.extra.get("service_tier"))
        status = response.get("status")
        reason = (response.get("incomplete_details") or {}).get("reason")
        message.raw_stop_reason = f"{status}.{reason}" if reason else status
        if status == "incomplete":
            if reason == "max_output_tokens":
                message.stop_reason = "length"
            else:
                message.stop_reason = "error"
                message.error_message = f"Response incomplete: {reason}" if reason else \
                    "Response incomplete without a provider reason"
        elif status in ("failed", "cancelled"):
            message.stop_reason = "error"
        else:
            message.stop_reason = "stop"
        if message.stop_reason == "stop" and message.tool_calls():
            message.stop_reason = "toolUse"

    def _service_tier(self, tier: str | None) -> None:
        factor = SERVICE_TIER_MULTIPLIER.get(tier or "")
        if factor:
            cost = self.writer.message.usage.cost
            cost.input, cost.output = cost.input * factor, cost.output * factor
            cost.cache_read, cost.cache_write = cost.cache_read * factor, cost.cache_write * factor
            cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write

    def _error(self, data: dict[str, Any]) -> None:
        raise ProviderError(f"Error Code {data.get('code')}: {data.get('message')}")

    def _response_failed(self, data: dict[str, Any]) -> None:
        self.terminal = True
        response = data.get("response") or {}
        self.writer.message.raw_stop_reason = response.get("status")
        error, details = response.get("error"), response.get("incomplete_details") or {}
        if error:
            raise ProviderError(f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}")
        if details.get("reason"):
            raise ProviderError(f"incomplete: {details['reason']}")
        raise ProviderError("Unknown error (no error details in response)")


async def stream_responses(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``openai-responses`` stream function."""
    headers = request_headers(model, options)
    payload = await options.apply_on_payload(build_payload(model, context, options))
    try:
        await run_responses(model.base_url.rstrip("/") + "/responses", headers, payload, model, options, writer)
    except ProviderError as exc:
        hint = _chatgpt_limit_hint(str(exc))
        if hint is None:
            raise
        raise ProviderError(f"{exc}\n{hint}", status=exc.status, retry_after_ms=exc.retry_after_ms) from exc


def _chatgpt_limit_hint(text: str) -> str | None:
    """What to do about a Sign in with ChatGPT usage limit (the subscription's, or a Business workspace's)."""
    if "subscription_sharing_usage_limit_exceeded" in text:
        return f"Check your ChatGPT usage: {CHATGPT_USAGE_URL}"
    if "subscription_sharing_workplace_individual_usage_limit_exceeded" in text:
        return CHATGPT_WORKSPACE_LIMIT_HINT
    return None


async def run_responses(url: str, headers: dict[str, str], payload: Any, model: Model, options: StreamOptions,
                        writer: StreamWriter, *, label: str = "OpenAI Responses",
                        map_event: Any = None) -> None:
    """POST a Responses request and stream its events into ``writer`` (shared by the Responses dialects:
    Azure, Codex). ``map_event(data)`` may rewrite or drop (``None``) each event first."""
    parser = _Parser(writer, model, options)
    async with post_stream(url, payload, headers, style="openai", client=options.client,
                           read_timeout=options.read_timeout, observer=options.observer) as response:
        writer.start()
        async for event in iter_sse(response.aiter_bytes(), writer.drain):
            if event.data == "[DONE]":
                break
            try:
                data = parse_json(event.data)  # ValueError for a chunk nested too deeply too
            except ValueError:
                continue
            await options.observe(data)
            if isinstance(data, dict) and map_event is not None:
                data = map_event(data)
            if isinstance(data, dict):
                parser.event(data)
    if not parser.terminal:
        raise ProviderError(f"{label} stream ended before a terminal response event")
    message = writer.message
    if message.stop_reason == "error":
        raise ProviderError(message.error_message or "An unknown error occurred")
    unfinished = [i for i, kind in writer.open_blocks.items() if kind == "toolCall"]
    if message.stop_reason == "toolUse" and unfinished:
        call = message.content[unfinished[0]]
        raise ProviderError(f"{label} stream completed with an unfinished tool call: {call.name} ({call.id})")
    writer.finish(message.stop_reason)


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_responses))
    from pi_core.ai import ProviderAuth

    from .account_logins import MetaLogin, xai_login
    from .openai_chatgpt import ChatGPTOAuth

    openai = catalog_provider("openai", API)
    openai.display_name = openai.display_name or "OpenAI"
    openai.auth = ProviderAuth(oauth=ChatGPTOAuth(), api_key_label="OpenAI API key")
    register(openai)
    xai = catalog_provider("xai", API)
    xai.display_name, xai.auth = "xAI", ProviderAuth(oauth=xai_login(), api_key_label="xAI API key")
    register(xai)
    meta = catalog_provider("meta", API)
    meta.display_name, meta.auth = "Meta", ProviderAuth(oauth=MetaLogin(), api_key_label="Meta API key")
    register(meta)


__all__ = ["API", "OPENAI_BASE_URL", "build_payload", "convert_input", "is_chatgpt_sign_in", "normalize_tool_call_id",
           "request_headers", "run_responses", "session_affinity_headers", "stream_responses"]
