"""API ``openai-completions``: OpenAI Chat Completions and every server that speaks it.

``POST {baseUrl}/chat/completions`` with ``stream: true``. Serves OpenAI-compatible providers of the
catalog (Groq, Cerebras, OpenRouter, Mistral, DeepSeek, z.ai, Hugging Face, Together, Fireworks, NVIDIA,
Moonshot, Kimi) and local servers configured in ``models.json`` (Ollama, vLLM, llama.cpp, LM Studio).
Server dialects differ; ``Model.compat`` flags (auto-detected from provider and URL, overridable per
model) select them — see ``docs/providers.md`` for the list.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
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
    catalog_provider,
    catalog_providers,
    clamp_max_tokens,
    conversation_messages,
    data_uri,
    is_loopback_url,
    iter_sse_batches,
    js_json,
    mapped_level,
    sampling_params,
    merge_headers,
    message_items,
    message_views,
    post_stream,
    remakeable,
    requested_level,
    sanitize_id,
    sanitize_surrogates,
    short_hash,
    system_prompt,
    transform_messages,
)

API = "openai-completions"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


# -- compat -------------------------------------------------------------------------------------
def detect_compat(model: Model) -> dict[str, Any]:
    """Dialect flags guessed from the provider name and base URL (pi's rules)."""
    provider, url = model.provider, model.base_url
    zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    together = provider == "together" or "api.together." in url
    moonshot = provider.startswith("moonshotai") or "api.moonshot." in url
    openrouter = provider == "openrouter" or "openrouter.ai" in url
    workers_ai = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    ai_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in url
    ant_ling = provider == "ant-ling" or "api.ant-ling.com" in url
    cerebras = provider == "cerebras" or "cerebras.ai" in url
    deepseek = provider == "deepseek" or "deepseek.com" in url.lower()
    grok = provider == "xai" or "api.x.ai" in url
    nonstandard = nvidia or cerebras or grok or together or "chutes.ai" in url or deepseek or zai or moonshot \
        or provider == "opencode" or "opencode.ai" in url or workers_ai or ai_gateway or ant_ling
    return {
        "supportsStore": not nonstandard,
        "supportsDeveloperRole": provider == "openai" or "api.openai.com" in url,
        "supportsReasoningEffort": not (grok or zai or moonshot or together or ai_gateway or nvidia or ant_ling),
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens" if ("chutes.ai" in url or deepseek or moonshot or ai_gateway or together
                                           or nvidia or ant_ling or zai) else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresNonNullAssistantContent": False,
        "requiresToolsWithToolHistory": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": "deepseek" if deepseek else "zai" if zai else "together" if together
        else "ant-ling" if ant_ling else "openrouter" if openrouter else "openai",
        "vercelGatewayRouting": {},
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "supportsStrictMode": False,
        "cacheControlFormat": "anthropic" if openrouter and model.id.startswith("anthropic/") else None,
        "sendSessionAffinityHeaders": openrouter,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsLongCacheRetention": not (together or workers_ai or ai_gateway or nvidia or ant_ling),
        "toolCallIdFormat": None,
        "thinkingTokenBudgetField": None,
        "promptCacheKeyMode": None,
        "vllmPriority": None,
    }


def get_compat(model: Model) -> dict[str, Any]:
    """Detected flags, overridden field by field by ``model.compat``."""
    compat = detect_compat(model)
    for key, value in (model.compat or {}).items():
        if value is not None:
            compat[key] = value
    return compat


# -- tool-call ids --------------------------------------------------------------------------------
def _tool_call_id(call_id: str, model: Model, compat: dict[str, Any]) -> str:
    if compat.get("toolCallIdFormat") == "mistral":
        return call_id if len(call_id) == 9 and call_id.isalnum() else short_hash(call_id, 9)
    if "|" in call_id:  # OpenAI Responses ids are "call|item"
        call, _, item = call_id.partition("|")
        combined = sanitize_id(f"{call}_{item}" if item else call, 10_000)
        return combined if len(combined) <= 40 else f"{sanitize_id(call, 10_000)[:31]}_{short_hash(call_id)}"
    if model.provider == "openai" and len(call_id) > 40:
        return call_id[:40]
    return call_id


# -- messages -------------------------------------------------------------------------------------
# Messages are models or the read-only views of stored ones (pi_core.ai.views): told apart by role
# and block type, never by class.
def _user(message: Any) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts = [{"type": "text", "text": sanitize_surrogates(b.text)} if b.type == "text"
             else {"type": "image_url", "image_url": {"url": data_uri(b)}}
             for b in message.content if not (b.type == "text" and not b.text)]
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: Any, compat: dict[str, Any], model: Model) -> dict[str, Any] | None:
    empty = "" if compat["requiresAssistantAfterToolResult"] or compat["requiresNonNullAssistantContent"] else None
    out: dict[str, Any] = {"role": "assistant", "content": empty}
    texts = [sanitize_surrogates(b.text) for b in message.content if b.type == "text" and b.text.strip()]
    thinking = [b for b in message.content if b.type == "thinking" and b.thinking.strip()]
    calls = [b for b in message.content if b.type == "toolCall"]
    if thinking and compat["requiresThinkingAsText"]:
        out["content"] = [{"type": "text", "text": "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking)},
                          *({"type": "text", "text": t} for t in texts)]
    else:
        if texts:
            out["content"] = "".join(texts)
        field = thinking[0].thinking_signature if thinking else None
        if field in REASONING_FIELDS:
            out[field] = "\n".join(b.thinking for b in thinking)
    if calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": js_json(c.arguments)}} for c in calls]
    if compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning and "reasoning_content" not in out:
        out["reasoning_content"] = ""
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


def _tool_results(results: list[Any], compat: dict[str, Any], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for result in results:
        text = "\n".join(b.text for b in result.content if b.type == "text")
        has_images = any(b.type == "image" for b in result.content)
        body = text if text.strip() else "(see attached image)" if has_images else "(no tool output)"
        item: dict[str, Any] = {"role": "tool", "content": sanitize_surrogates(body), "tool_call_id": result.tool_call_id}
        if compat["requiresToolResultName"] and result.tool_name:
            item["name"] = result.tool_name
        out.append(item)
        if has_images and "image" in model.input:
            images += [{"type": "image_url", "image_url": {"url": data_uri(b)}}
                       for b in result.content if b.type == "image"]
    if images:
        if compat["requiresAssistantAfterToolResult"]:
            out.append({"role": "assistant", "content": "I have processed the tool results."})
        out.append({"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"},
                                                *images]})
    return out


def convert_messages(model: Model, context: Context, compat: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``messages`` array for ``context`` (after cross-provider handoff), as a plain list."""
    return list(encoded_messages(model, context, compat))


def encoded_messages(model: Model, context: Context, compat: dict[str, Any]) -> EncodedMessages:
    """The ``messages`` array, converted turn by turn (a turn starts at an assistant message: nothing
    before it depends on what follows); the turns of the previous request whose messages are the same
    are reused as they were encoded (:class:`~pi_core.ai.wire.TurnCache`), so a request on a long
    session costs what is new in it."""
    head: list[dict[str, Any]] = []
    prompt = system_prompt(context)
    if prompt:
        role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
        head.append({"role": role, "content": sanitize_surrogates(prompt)})
    from .openai_completions_raw import raw_converter

    # remakeable: a helper process may convert later turns with its own (pi_core.ai.turn_helper)
    raw = remakeable(raw_converter, model, compat, functools.partial(_tool_call_id, model=model, compat=compat),
                     REASONING_FIELDS)
    return _TURNS.convert(_cache_key(model, compat), conversation_messages(context),
                          lambda turn, offset: (_convert_turn(turn, model, compat), 0), head, raw, independent=True)


_TURNS = TurnCache()


def _cache_key(model: Model, compat: dict[str, Any]) -> str:
    return json.dumps([model.provider, model.api, model.id, model.reasoning, list(model.input), compat],
                      sort_keys=True, default=str)


def _convert_turn(turn: list[Any], model: Model, compat: dict[str, Any]) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    messages = transform_messages(turn, model, lambda i, m, s: _tool_call_id(i, m, compat))
    i, last_role = 0, None
    while i < len(messages):
        message = messages[i]
        role = getattr(message, "role", None)
        if role == "toolResult":
            j = i
            while j < len(messages) and getattr(messages[j], "role", None) == "toolResult":
                j += 1
            items = _tool_results(messages[i:j], compat, model)
            params += items
            last_role, i = ("user" if items[-1]["role"] == "user" else "toolResult"), j
            continue
        if compat["requiresAssistantAfterToolResult"] and last_role == "toolResult" and role == "user":
            params.append({"role": "assistant", "content": "I have processed the tool results."})
        item = _user(message) if role == "user" else _assistant(message, compat, model) if role == "assistant" \
            else None
        if item is not None:
            params.append(item)
        last_role = role
        i += 1
    return params


def convert_tools(context: Context, compat: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for tool in context.tools or []:
        function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        if compat["supportsStrictMode"]:
            function["strict"] = False
        tools.append({"type": "function", "function": function})
    return tools


# -- payload ----------------------------------------------------------------------------------------
def _apply_reasoning(payload: dict[str, Any], model: Model, options: StreamOptions, compat: dict[str, Any]) -> None:
    if not model.reasoning:
        return
    level = requested_level(model, options)
    value = mapped_level(model, level) if level else None
    levels = model.thinking_level_map or {}
    fmt = compat["thinkingFormat"]
    effort_ok = compat["supportsReasoningEffort"]
    budget = _thinking_budget(payload, model, options, level)
    if fmt == "zai":
        payload["thinking"] = {"type": "enabled", "clear_thinking": False} if level else {"type": "disabled"}
        if level and effort_ok and isinstance(value, str):
            payload["reasoning_effort"] = value
    elif fmt == "qwen":
        payload["enable_thinking"] = bool(level)
        if level and effort_ok and isinstance(value, str):
            payload["reasoning_effort"] = value
    elif fmt == "qwen-chat-template":
        payload["chat_template_kwargs"] = {"enable_thinking": bool(level), "preserve_thinking": True}
    elif fmt == "chat-template":
        values = _template_values(model, level, compat.get("chatTemplateKwargs") or {}, budget)
        if values:
            payload["chat_template_kwargs"] = values
    elif fmt == "baseten":
        values = _template_values(model, level, compat.get("chatTemplateArgs") or {}, budget)
        if values:
            payload["chat_template_args"] = values
        if effort_ok:
            key = level or "off"
            effort = levels[key] if key in levels else level
            if isinstance(effort, str):
                payload["reasoning_effort"] = effort
    elif fmt == "deepseek":
        if level:
            payload["thinking"] = {"type": "enabled"}
        elif levels.get("off", "") is not None:
            payload["thinking"] = {"type": "disabled"}
        if level and effort_ok and isinstance(value, str):
            payload["reasoning_effort"] = value
    elif fmt == "openrouter":
        if level:
            payload["reasoning"] = {"effort": value}
        elif levels.get("off", "") is not None:
            payload["reasoning"] = {"effort": levels.get("off") or "none"}
    elif fmt == "ant-ling":
        if level and isinstance(levels.get(level), str):  # only levels the model maps (pi's rule)
            payload["reasoning"] = {"effort": levels[level]}
    elif fmt == "together":
        payload["reasoning"] = {"enabled": bool(level)}
        if level and effort_ok and isinstance(value, str):
            payload["reasoning_effort"] = value
    elif fmt == "string-thinking":
        if level:
            payload["thinking"] = value
        elif levels.get("off", "") is not None:
            payload["thinking"] = levels.get("off") or "none"
    elif level and effort_ok and isinstance(value, str):
        payload["reasoning_effort"] = value
    elif not level and effort_ok and isinstance(levels.get("off"), str):
        payload["reasoning_effort"] = levels["off"]
    budget_field = compat.get("thinkingTokenBudgetField") or (
        "thinking_token_budget" if compat.get("supportsThinkingTokenBudget") else None)
    if budget_field and budget is not None:
        payload[budget_field] = budget


def _thinking_budget(payload: dict[str, Any], model: Model, options: StreamOptions, level: str | None) -> int | None:
    """The level's token budget, leaving room for an answer under the request's output limit."""
    if not level:
        return None
    ceiling = payload.get("max_tokens") or payload.get("max_completion_tokens") or model.max_tokens
    budget = min(options.budget_for(level), max(0, ceiling - 1024))
    return budget if budget > 0 else None


def _template_values(model: Model, level: str | None, values: dict[str, Any], budget: int | None) -> dict[str, Any]:
    """``chatTemplateKwargs``/``chatTemplateArgs`` with their ``{"$var": ...}`` placeholders filled in: literal
    values as they are; ``thinking.enabled`` (a bool), ``thinking.budget`` (the token budget), else the level's
    effort as the model maps it; ``omitWhenOff`` drops an entry while thinking is off."""
    levels = model.thinking_level_map or {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            out[key] = value
            continue
        if not level and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            resolved: Any = bool(level)
        elif var == "thinking.budget":
            resolved = budget
        else:
            mapped_key = level or "off"
            mapped = levels[mapped_key] if mapped_key in levels else level
            resolved = mapped if isinstance(mapped, str) else None
        if resolved is not None:
            out[key] = resolved
    return out


def _cache_control(payload: dict[str, Any], options: StreamOptions) -> None:
    """OpenRouter's Anthropic models: ``cache_control`` on the system prompt, last tool and last message."""
    if options.cache_retention == "none":
        return
    marker = {"type": "ephemeral"}

    def mark(message: dict[str, Any]) -> bool:
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
            return True
        texts = [p for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]
        if texts:
            texts[-1]["cache_control"] = marker
            return True
        return False

    for message in payload["messages"]:
        if message["role"] in ("system", "developer"):
            mark(message)
            break
    if payload.get("tools"):
        payload["tools"][-1]["cache_control"] = marker
    for message in reversed(payload["messages"]):
        if message["role"] in ("user", "assistant", "tool") and mark(message):
            break


def _has_tool_history(context: Context) -> bool:
    items = message_items(context.messages)
    if any(getattr(m, "role", None) == "toolResult" for m in items):
        return True
    return any(m is not None and m.role == "assistant" and m.tool_calls() for m in message_views(context.messages))


def build_payload(model: Model, context: Context, options: StreamOptions,
                  compat: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body, in pi 1.6's key order."""
    compat = compat or get_compat(model)
    payload: dict[str, Any] = {"model": model.id, "messages": encoded_messages(model, context, compat), "stream": True}
    retention = _cache_retention(options)
    long_cache = retention == "long" and compat.get("supportsLongCacheRetention") is not False
    mode = compat.get("promptCacheKeyMode") or "auto"
    keyed = mode == "enabled" or (mode == "auto" and ("api.openai.com" in model.base_url or long_cache))
    if options.session_id and retention != "none" and keyed:
        payload["prompt_cache_key"] = options.session_id[:64]
    if long_cache:
        payload["prompt_cache_retention"] = "24h"
    if compat["supportsUsageInStreaming"] is not False:
        payload["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        payload["store"] = False
    payload[compat["maxTokensField"]] = clamp_max_tokens(model, context, options.max_tokens)
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    tools = convert_tools(context, compat)
    if tools:
        payload["tools"] = tools
        if compat.get("zaiToolStream"):
            payload["tool_stream"] = True
    elif compat["requiresToolsWithToolHistory"] and _has_tool_history(context):
        payload["tools"] = []
    if compat.get("cacheControlFormat") == "anthropic":
        payload["messages"] = copy.deepcopy(payload["messages"])  # the markers must not reach the turn cache
        _cache_control(payload, options)
    if options.tool_choice is not None:
        payload["tool_choice"] = options.tool_choice
    if compat.get("vllmPriority") is not None:
        payload["priority"] = compat["vllmPriority"]
    _apply_reasoning(payload, model, options, compat)
    if (model.compat or {}).get("openRouterRouting"):
        payload["provider"] = model.compat["openRouterRouting"]  # type: ignore[index]
    gateway = {k: v for k, v in ((model.compat or {}).get("vercelGatewayRouting") or {}).items()
               if k in ("only", "order") and v}
    if gateway:
        payload["providerOptions"] = {"gateway": gateway}
    payload.update(sampling_params(model, options) or {})  # last: the model's samplingParams win (pi)
    return payload


def _cache_retention(options: StreamOptions) -> str:
    return options.cache_retention or ("long" if options.getenv("PI_CACHE_RETENTION") == "long" else "short")


def request_headers(model: Model, options: StreamOptions, compat: dict[str, Any]) -> dict[str, str]:
    key = options.api_key
    header_auth = any(k.lower() in ("authorization", "api-key", "cf-aig-authorization")
                      for k in merge_headers(model.headers, options.headers))
    if not key and not header_auth and not is_loopback_url(model.base_url):  # local servers usually need no key
        raise MissingApiKeyError(model.provider)
    base = {"accept": "application/json"}
    if key:
        base["authorization"] = f"Bearer {key}"
    base.update(_affinity_headers(options.session_id, compat))
    return merge_headers(base, model.headers, options.headers)


def _affinity_headers(session_id: str | None, compat: dict[str, Any]) -> dict[str, str]:
    """pi's session-affinity headers when ``sendSessionAffinityHeaders`` is on, by ``sessionAffinityFormat``:
    ``openrouter`` sends ``x-session-id``; the others ``x-client-request-id`` and ``x-session-affinity``, and
    ``openai`` (the default) ``session_id`` too."""
    if not session_id or not compat.get("sendSessionAffinityHeaders"):
        return {}
    style = compat.get("sessionAffinityFormat") or "openai"
    if style == "openrouter":
        return {"x-session-id": session_id}
    headers = {"session_id": session_id} if style == "openai" else {}
    return {**headers, "x-client-request-id": session_id, "x-session-affinity": session_id}


# -- streaming --------------------------------------------------------------------------------------
def usage_fields(raw: dict[str, Any]) -> dict[str, int]:
    """``set_usage`` keywords from a Chat Completions ``usage`` object (cached tokens are not input)."""
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens", raw.get("cached_tokens", 0))
    cached = cached or 0
    write = details.get("cache_write_tokens") or 0
    prompt = raw.get("prompt_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or raw.get("reasoning_tokens") or 0
    return {"input": max(0, prompt - cached - write), "output": raw.get("completion_tokens") or 0,
            "cache_read": cached, "cache_write": write, "reasoning": reasoning}


FINISH_REASONS = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse",
                  "function_call": "toolUse"}


class _Parser:
    """Chat Completions chunks → writer calls: one text slot, one thinking slot, tool calls by index."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.message = writer.message
        self.text: int | None = None
        self.thinking: int | None = None
        self.tools: dict[Any, int] = {}
        self.finished = False

    def chunk(self, data: dict[str, Any]) -> None:
        message = self.message
        if message.response_id is None and data.get("id"):
            message.response_id = data["id"]
        usage = data.get("usage")
        choices = data.get("choices")
        choice = choices[0] if choices else None
        if not usage and choice:
            usage = choice.get("usage")
        if usage:
            self.writer.set_usage(**usage_fields(usage))
        if not choice:
            return
        reason = choice.get("finish_reason")
        if reason:
            self._finish_reason(reason)
        delta = choice.get("delta")
        if delta:
            self._delta(delta)

    def plain(self, chunk: Any) -> bool:
        """A chunk from :func:`_plain_decoder`, if it is a text delta or carries nothing (what :meth:`chunk`
        would do with it); ``False``, doing nothing, for any other chunk."""
        choice = chunk.choices[0] if chunk.choices else None
        if choice is None or chunk.error is not None or chunk.usage is not None or choice.usage is not None \
                or choice.finish_reason is not None or choice.delta is None:
            return False
        delta = choice.delta
        content = delta.content
        if (content is not None and type(content) is not str) or delta.tool_calls is not None \
                or delta.reasoning_content is not None or delta.reasoning is not None or delta.reasoning_text is not None:
            return False
        message = self.message
        if message.response_id is None and chunk.id:
            message.response_id = chunk.id
        if content:
            if self.text is None:
                self.text = self.writer.text_start()
            self.writer.text_delta(self.text, content)
        return True

    def _finish_reason(self, reason: str) -> None:
        message = self.message
        message.raw_stop_reason = reason
        message.stop_reason = FINISH_REASONS.get(reason, "error")  # type: ignore[assignment]
        if message.stop_reason == "error":
            message.error_message = f"Provider finish_reason: {reason}"
        self.finished = True

    def _delta(self, delta: dict[str, Any]) -> None:
        writer = self.writer
        for field in REASONING_FIELDS:
            value = delta.get(field)
            if isinstance(value, str) and value:
                if self.thinking is None:
                    self.thinking = writer.thinking_start(signature=field)
                writer.thinking_delta(self.thinking, value)
                break
        content = delta.get("content")
        if content:
            if self.text is None:
                self.text = writer.text_start()
            writer.text_delta(self.text, content)
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._tool_call(call)

    def _tool_call(self, call: dict[str, Any]) -> None:
        writer = self.writer
        key = call.get("index")
        key = key if isinstance(key, int) else call.get("id") or len(self.tools)
        function = call.get("function") or {}
        index = self.tools.get(key)
        if index is None:
            index = writer.toolcall_start(call.get("id") or "", function.get("name") or "")
            self.tools[key] = index
        block = self.message.content[index]
        if not block.id and call.get("id"):
            block.id = call["id"]
        if not block.name and function.get("name"):
            block.name = function["name"]
        writer.toolcall_delta(index, function.get("arguments") or "")


def _stream_error(data: dict[str, Any]) -> ProviderError:
    error = data["error"]
    if isinstance(error, dict):
        text = error.get("message") if isinstance(error.get("message"), str) else js_json(error)
        raw = (error.get("metadata") or {}).get("raw") if isinstance(error.get("metadata"), dict) else None
        if raw and str(raw) not in text:
            text += f"\n{raw}"
        return ProviderError(text)
    return ProviderError(str(error))


async def stream_completions(model: Model, context: Context, options: StreamOptions, writer: StreamWriter) -> None:
    """The ``openai-completions`` stream function."""
    compat = get_compat(model)
    headers = request_headers(model, options, compat)
    payload = await options.apply_on_payload(build_payload(model, context, options, compat))
    if isinstance(payload, dict):
        payload["stream"] = True
    url = model.base_url.rstrip("/") + "/chat/completions"
    parser = _Parser(writer)
    async with post_stream(url, payload, headers, style="openai", client=options.client,
                           read_timeout=options.read_timeout, observer=options.observer) as response:
        writer.start()
        events = iter_sse_batches(response.aiter_bytes(), writer.drain)
        try:
            await _read_chunks(events, parser, options)
        except asyncio.CancelledError:
            # aborted: like pi's openai-completions, end the blocks that were open (text_end, ...) before
            # the aborted message
            if options.signal is not None and options.signal.aborted:
                writer.close_open_blocks()
            raise
    _finish(writer, parser, compat)


async def _read_chunks(batches: Any, parser: _Parser, options: StreamOptions) -> None:
    observe = options.stream_observer()
    plain = _plain_decoder() if observe is None else None  # an observer sees every chunk as a dict
    decode = _decode_chunk
    async for batch in batches:
        for event in batch:
            data = event.data
            if data == "[DONE]":
                await _read_to_end(batches)
                return
            if plain is not None:
                try:
                    shape = plain(data)
                except Exception:  # noqa: BLE001 - not the common shape: the general path below decides
                    shape = None
                if shape is not None and parser.plain(shape):
                    continue
            try:
                chunk = decode(data)
            except ValueError:
                continue
            if not isinstance(chunk, dict):
                continue
            if observe is not None:
                await observe(chunk)
            if chunk.get("error"):
                raise _stream_error(chunk)
            parser.chunk(chunk)


_plain: Any = None


def _plain_decoder() -> Any:
    """A msgspec decoder of the fields :meth:`_Parser.chunk` reads, into structs (the others are skipped
    without being built): most chunks of an answer are one text delta, and this is about twice as fast as
    decoding each into dicts. What it cannot decode goes the general way."""
    global _plain
    if _plain is None:
        import msgspec

        # defstruct: this module's annotations are strings, which msgspec cannot resolve for local classes
        delta = msgspec.defstruct("Delta", [(name, Any, None) for name in ("content", "tool_calls", *REASONING_FIELDS)])
        choice = msgspec.defstruct("Choice", [("delta", delta | None, None), ("finish_reason", Any, None),
                                              ("usage", Any, None)])
        chunk = msgspec.defstruct("Chunk", [("id", Any, None), ("usage", Any, None), ("error", Any, None),
                                            ("choices", list[choice] | None, None)])  # type: ignore[valid-type]
        _plain = msgspec.json.Decoder(chunk).decode
    return _plain


_msgspec_decode: Any = None


def _decode_chunk(data: str) -> Any:
    """One stream chunk: msgspec (a few times the standard parser's speed, which a stream of many
    small deltas feels), the standard parser for what msgspec refuses (it says what is wrong); a chunk
    nested too deeply for it is a ``ValueError`` too (skipped like any chunk that is not JSON), not the
    ``RecursionError`` that ended the run."""
    global _msgspec_decode
    if _msgspec_decode is None:
        import msgspec

        _msgspec_decode = msgspec.json.Decoder().decode
    try:
        return _msgspec_decode(data)
    except Exception:  # noqa: BLE001 - msgspec's errors are not ValueErrors
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError("a stream chunk nested too deeply") from None


async def _read_to_end(events: Any) -> None:
    """Read what little follows ``[DONE]`` so the connection goes back to the pool for the next
    request (closing a response that was not read to its end closes its connection too)."""
    async def rest() -> None:
        async for _ in events:
            pass

    try:
        await asyncio.wait_for(rest(), 0.25)
    except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - the answer is complete either way
        pass


def _finish(writer: StreamWriter, parser: _Parser, compat: dict[str, Any]) -> None:
    message = writer.message
    writer.close_open_blocks()
    if not parser.finished and not compat["supportsFinishReason"]:
        message.stop_reason = "toolUse" if message.tool_calls() else "stop"
    elif message.stop_reason == "error":
        raise ProviderError(message.error_message or "Provider returned an error stop reason")
    elif not parser.finished:
        raise ProviderError("Stream ended without finish_reason")
    writer.finish(message.stop_reason)


# -- registration -----------------------------------------------------------------------------------
#: Catalog providers registered by the plugins of their main API, not here.
#: Catalog providers another plugin registers (their own sign-in, endpoints or request shape).
OTHER_PLUGINS = ("anthropic", "openai", "google", "xai", "minimax", "github-copilot", "azure",
                 "cloudflare-ai-gateway", "cloudflare-workers-ai")
#: OpenCode routes a conversation by this header (its value: the session id).
OPENCODE_SESSION_HEADER = "x-opencode-session"


def _attach_login(config: Any) -> None:
    """OpenRouter and Kimi Code also have account sign-ins (plugins/providers/account_logins.py);
    OpenRouter's catalog is narrowed to the user's key (plugins/providers/openrouter_models.py)."""
    from pi_core.ai import ProviderAuth

    from .account_logins import KimiLogin, OpenRouterLogin
    from .openrouter_models import fetch_openrouter_models

    if config.name == "openrouter":
        config.display_name, config.auth = "OpenRouter", ProviderAuth(oauth=OpenRouterLogin(),
                                                                      api_key_label="OpenRouter API key")
        config.fetch_models = fetch_openrouter_models  # the models, limits and prices of the user's key
    elif config.name == "kimi-coding":
        config.display_name, config.auth = "Kimi For Coding", ProviderAuth(oauth=KimiLogin(),
                                                                           api_key_label="Kimi API key")


def opencode_headers(context: Context, options: StreamOptions) -> dict[str, str]:
    return {OPENCODE_SESSION_HEADER: options.session_id} if options.session_id else {}


@hookimpl
def register_providers(register: Any) -> None:
    register(ApiProvider(api=API, stream=stream_completions))
    for name in catalog_providers(API):
        if name not in OTHER_PLUGINS:
            config = catalog_provider(name, API)
            if name.startswith("opencode"):
                config.request_headers = opencode_headers
            _attach_login(config)
            register(config)
    # Mistral's own API (pi's mistral-conversations) is registered with this plugin, which served it before
    from .mistral import register_providers as register_mistral

    register_mistral(register)


__all__ = ["API", "build_payload", "convert_messages", "detect_compat", "get_compat", "stream_completions"]
