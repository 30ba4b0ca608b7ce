"""API ``google-generative-ai``: the Gemini API's ``streamGenerateContent`` over SSE.

``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`` with ``x-goog-api-key``. Each SSE event is a
whole ``GenerateContentResponse``; parts with ``thought: true`` are thinking, function calls arrive
complete (one start/delta/end at once). Thought signatures are kept on the block they came with and
replayed only to the same provider and model.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import time
from collections.abc import Callable
from typing import Any

from pi_core import hookimpl, parse_json
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
    catalog_provider,
    clamp_max_tokens,
    clamp_thinking_level,
    conversation,
    conversation_messages,
    iter_sse,
    js_json,
    merge_headers,
    post_stream,
    remakeable,
    requested_level,
    sanitize_id,
    sanitize_surrogates,
    system_prompt,
    transform_messages,
)

API = "google-generative-ai"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_ids = itertools.count(1)
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "CONTINUATION": "length"}
BUDGETS = {"2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
           "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
           "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}}


@functools.lru_cache(maxsize=64)  # asked for every message of a request
def gemini_major(model_id: str) -> int | None:
    match = re.match(r"^gemini(?:-live)?-(\d+)", model_id.lower())
    return int(match.group(1)) if match else None


@functools.lru_cache(maxsize=64)
def requires_tool_call_id(model_id: str) -> bool:
    major = gemini_major(model_id)
    return model_id.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def uses_thinking_level(model: Model) -> bool:
    mid = model.id.lower()
    return bool(re.search(r"gemini-3(?:\.\d+)?-(?:pro|flash)", mid) or re.search(r"gemini-(?:[4-9]|[1-9]\d)", mid)
                or mid in ("gemini-flash-latest", "gemini-flash-lite-latest") or re.search(r"gemma-?4", mid))


def _signature(same: bool, signature: str | None) -> str | None:
    valid = bool(signature) and len(signature) % 4 == 0 and bool(_BASE64.match(signature or ""))
    return signature if same and valid else None


# -- messages -------------------------------------------------------------------------------------
def _view_arguments(call: Any) -> Any:
    return call.arguments


def model_parts(message: Any, model: Model, arguments: Callable[[Any], Any] = _view_arguments) -> list[dict[str, Any]]:
    """The ``parts`` of an assistant message (after handoff); ``arguments(call)``: a tool call's
    arguments as a dict (or ``None``)."""
    same = message.provider == model.provider and message.model == model.id
    parts: list[dict[str, Any]] = []
    for block in message.content:
        kind = block.type
        if kind == "text":
            sig = _signature(same, block.text_signature)
            if block.text.strip() or sig:
                parts.append({"text": sanitize_surrogates(block.text), **({"thoughtSignature": sig} if sig else {})})
        elif kind == "thinking":
            sig = _signature(same, block.thinking_signature)
            if same and (block.thinking.strip() or sig):
                parts.append({"thought": True, "text": sanitize_surrogates(block.thinking),
                              **({"thoughtSignature": sig} if sig else {})})
            elif not same and block.thinking.strip():
                parts.append({"text": sanitize_surrogates(block.thinking)})
        elif kind == "toolCall":
            call: dict[str, Any] = {"name": block.name, "args": arguments(block) or {}}
            if requires_tool_call_id(model.id):
                call["id"] = block.id
            sig = _signature(same, block.thought_signature)
            parts.append({"functionCall": call, **({"thoughtSignature": sig} if sig else {})})
    return parts


def function_response(result: Any, model: Model) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``functionResponse`` of a tool result (after handoff), and the parts of its images that go in
    a content of their own (models before Gemini 3 take no images in a response)."""
    text = "\n".join(b.text for b in result.content if b.type == "text")
    images = [b for b in result.content if b.type == "image"] if "image" in model.input else []
    value = sanitize_surrogates(text) if text.strip() else "(see attached image)" if images else ""
    image_parts = [{"inlineData": {"mimeType": b.mime_type, "data": b.data}} for b in images]
    multimodal = bool(images) and (gemini_major(model.id) or 3) >= 3
    response = response_of(result.tool_name, result.tool_call_id, value, result.is_error, model,
                           image_parts if multimodal else None)
    return response, image_parts if images and not multimodal else []


def response_of(name: str, call_id: str, value: str, is_error: bool, model: Model,
                parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ``functionResponse``: ``value`` as the call's output or error, the id where the model takes one."""
    response: dict[str, Any] = {"name": name, "response": {"error": value} if is_error else {"output": value}}
    if parts:
        response["parts"] = parts
    if requires_tool_call_id(model.id):
        response["id"] = call_id
    return response


def add_function_response(contents: list[dict[str, Any]], response: dict[str, Any]) -> None:
    """Append ``response`` to ``contents``: consecutive results share one ``user`` content."""
    last = contents[-1] if contents else None
    if last and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
        last["parts"].append({"functionResponse": response})
    else:
        contents.append({"role": "user", "parts": [{"functionResponse": response}]})


def user_content(message: Any) -> dict[str, Any] | None:
    """The content of a user message (``None`` for one without blocks)."""
    if isinstance(message.content, str):
        return {"role": "user", "parts": [{"text": sanitize_surrogates(message.content)}]}
    if not message.content:
        return None
    return {"role": "user", "parts": [{"text": sanitize_surrogates(b.text)} if b.type == "text"
                                      else {"inlineData": {"mimeType": b.mime_type, "data": b.data}}
                                      for b in message.content]}


def convert_contents(model: Model, context: Context) -> list[dict[str, Any]]:
    """The ``contents`` for ``context`` (after handoff), as a plain list."""
    return list(encoded_contents(model, context))


def encoded_contents(model: Model, context: Context) -> EncodedMessages:
    """The ``contents``, converted turn by turn (a turn starts at an assistant message: nothing before it
    depends on what follows); the turns of the previous request that are the same are reused as they
    were encoded (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long session costs what is new
    in it. Consecutive tool results share one ``user`` content; results stored after a failed answer
    (which is left out) start one of their own."""
    key = json.dumps([model.provider, model.api, model.id, list(model.input)])
    from .google_raw import raw_converter

    return _TURNS.convert(key, conversation_messages(context), lambda turn, offset: (_convert_turn(turn, model), 0),
                          raw_turn=remakeable(raw_converter, model), independent=True)


_TURNS = TurnCache()


def _convert_turn(turn: list[Any], model: Model) -> list[dict[str, Any]]:
    normalize = (lambda i, m, s: sanitize_id(i, 64)) if requires_tool_call_id(model.id) else None
    contents: list[dict[str, Any]] = []
    for message in transform_messages(conversation(turn), model, normalize):
        role = message.role
        if role == "user":
            content = user_content(message)
            if content is not None:
                contents.append(content)
        elif role == "assistant":
            parts = model_parts(message, model)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            response, image_parts = function_response(message, model)
            add_function_response(contents, response)
            if image_parts:
                contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *image_parts]})
    return contents


# -- payload ----------------------------------------------------------------------------------------
def _google_level(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    return {"xhigh": "high", "max": "high"}.get(resolved, resolved).upper()


def thinking_config(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    if not model.reasoning:
        return None
    level = requested_level(model, options)
    if level is None:
        if not uses_thinking_level(model):
            return {"thinkingBudget": 0}
        fallback = clamp_thinking_level(model, "off")
        return {"thinkingBudget": 0} if fallback == "off" else {"thinkingLevel": _google_level(model, fallback)}
    if uses_thinking_level(model):
        return {"includeThoughts": True, "thinkingLevel": _google_level(model, level)}
    key = "high" if level in ("xhigh", "max") else level
    if options.thinking_budgets and key in options.thinking_budgets:
        budget = options.thinking_budgets[key]
    else:
        family = next((v for k, v in BUDGETS.items() if k in model.id), None)
        budget = family[key] if family else -1  # -1: the model decides
    return {"includeThoughts": True, "thinkingBudget": budget}


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    payload: dict[str, Any] = {"contents": encoded_contents(model, context)}
    prompt = system_prompt(context)
    if prompt:
        payload["systemInstruction"] = {"parts": [{"text": sanitize_surrogates(prompt)}]}
    if context.tools:
        payload["tools"] = [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
            for t in context.tools]}]
        choice = options.tool_choice
        if choice in ("auto", "none", "any"):
            payload["toolConfig"] = {"functionCallingConfig": {"mode": choice.upper()}}
    config: dict[str, Any] = {}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    config["maxOutputTokens"] = clamp_max_tokens(model, context, options.max_tokens)
    thinking = thinking_config(model, options)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    payload["generationConfig"] = config
    return payload


# -- streaming ---------------------------------------------------------------------------------------
class _Parser:
    def __init__(self, writer: StreamWriter, model: Model) -> None:
        self.writer, self.model = writer, model
        self.current: tuple[str, int] | None = None  # ("text"|"thinking", content index)

    def chunk(self, data: dict[str, Any]) -> None:
        message, writer = self.writer.message, self.writer
        if message.response_id is None and data.get("responseId"):
            message.response_id = data["responseId"]
        candidate = (data.get("candidates") or [None])[0] or {}
        for part in (candidate.get("content") or {}).get("parts") or []:
            if "text" in part:
                self._text(part)
            if part.get("functionCall"):
                self._function_call(part)
        reason = candidate.get("finishReason")
        if reason:
            message.raw_stop_reason = reason
            message.stop_reason = FINISH_REASONS.get(reason, "error")  # type: ignore[assignment]
            if message.stop_reason == "stop" and message.tool_calls():
                message.stop_reason = "toolUse"
        usage = data.get("usageMetadata")
        if usage:
            cached, thoughts = usage.get("cachedContentTokenCount") or 0, usage.get("thoughtsTokenCount") or 0
            writer.set_usage(input=(usage.get("promptTokenCount") or 0) - cached,
                             output=(usage.get("candidatesTokenCount") or 0) + thoughts, cache_read=cached,
                             reasoning=thoughts, total_tokens=usage.get("totalTokenCount") or 0)

    def _close(self) -> None:
        if self.current is not None:
            kind, index = self.current
            (self.writer.text_end if kind == "text" else self.writer.thinking_end)(index)
            self.current = None

    def _text(self, part: dict[str, Any]) -> None:
        kind = "thinking" if part.get("thought") is True else "text"
        writer = self.writer
        if self.current is None or self.current[0] != kind:
            self._close()
            self.current = (kind, writer.thinking_start() if kind == "thinking" else writer.text_start())
        index = self.current[1]
        block = writer.message.content[index]
        signature = part.get("thoughtSignature")
        if kind == "thinking":
            if isinstance(signature, str) and signature:  # the last non-empty one wins
                block.thinking_signature = signature
            writer.thinking_delta(index, part.get("text") or "")
        else:
            if isinstance(signature, str) and signature:
                block.text_signature = signature
            writer.text_delta(index, part.get("text") or "")

    def _function_call(self, part: dict[str, Any]) -> None:
        self._close()
        call, writer = part["functionCall"], self.writer
        given = call.get("id")
        taken = {c.id for c in writer.message.tool_calls()}
        call_id = given if given and given not in taken else f"{call.get('name')}_{int(time.time() * 1000)}_{next(_ids)}"
        arguments = call.get("args") or {}
        index = writer.toolcall_start(call_id, call.get("name") or "", arguments,
                                      thought_signature=part.get("thoughtSignature") or None)
        writer.toolcall_delta(index, js_json(arguments))
        writer.toolcall_end(index, arguments=arguments)

    def finish(self) -> None:
        self._close()


def _error_chunk(data: dict[str, Any]) -> ProviderError:
    error = data["error"]
    code = error.get("code") if isinstance(error, dict) else None
    return ProviderError(f"got status: {error.get('status') if isinstance(error, dict) else ''}. {js_json(data)}",
                         status=code if isinstance(code, int) else None)


async def stream_google(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``google-generative-ai`` stream function."""
    if not options.api_key:
        raise MissingApiKeyError(model.provider)
    headers = merge_headers({"x-goog-api-key": options.api_key}, model.headers, options.headers)
    payload = await options.apply_on_payload(build_payload(model, context, options))
    url = f"{model.base_url.rstrip('/')}/models/{model.id}:streamGenerateContent?alt=sse"
    await run_google(url, headers, payload, model, options, writer)


async def run_google(url: str, headers: dict[str, str], payload: Any, model: Model, options: StreamOptions,
                     writer: StreamWriter) -> None:
    """POST a ``streamGenerateContent`` request and stream the reply (shared with Vertex AI)."""
    parser = _Parser(writer, model)
    async with post_stream(url, payload, headers, style="google", client=options.client,
                           read_timeout=options.read_timeout, observer=options.observer) as response:
        writer.start()
        async for event in iter_sse(response.aiter_bytes(), writer.drain):
            try:
                data = parse_json(event.data)  # ValueError for a chunk nested too deeply too
            except ValueError:
                continue
            await options.observe(data)
            if isinstance(data, dict) and data.get("error"):
                raise _error_chunk(data)
            if isinstance(data, dict):
                parser.chunk(data)
    parser.finish()
    message = writer.message
    if message.stop_reason == "pending":
        raise ProviderError("Google stream ended without a finish reason")
    if message.stop_reason == "error":
        raise ProviderError(f"Provider stopped with: {message.raw_stop_reason}" if message.raw_stop_reason
                            else "An unknown error occurred")
    writer.finish(message.stop_reason)


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_google))
    register(catalog_provider("google", API))


__all__ = ["API", "build_payload", "convert_contents", "run_google", "stream_google", "thinking_config"]
