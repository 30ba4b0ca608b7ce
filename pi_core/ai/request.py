"""Helpers for building provider requests: system prompt, token estimates and limits, thinking levels,
surrogate clean-up. Shared by the built-in wire protocols and available to third-party ones."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from .message_list import MessageList, message_items, message_views
from .options import DEFAULT_THINKING_BUDGETS, StreamOptions
from .types import Context, ImageContent, Model

_SURROGATES = re.compile("[\ud800-\udfff]")
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800
CONTEXT_SAFETY_TOKENS = 4096
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_MARGIN = 32768
MIN_ANSWER_TOKENS = 1024
EXTENDED_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def sanitize_surrogates(text: str) -> str:
    """Remove unpaired UTF-16 surrogates (a JSON ``"\\ud83d"`` decodes to one); providers reject them."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # a few times faster than the pattern; fails only on a lone surrogate
    except UnicodeEncodeError:
        return _SURROGATES.sub("", text)
    return text


def system_prompt(context: Context) -> str | None:
    """``context.system_prompt``, else the text of the first system message of the transcript."""
    if context.system_prompt is not None:
        return context.system_prompt
    for n, item in enumerate(message_items(context.messages)):
        if getattr(item, "role", None) == "system":
            message = message_views(context.messages, n, n + 1)[0]
            if message is not None:
                return message.text() or None
    return None


def conversation(context: Context | Sequence[Any]) -> list[Any]:
    """The user, assistant and tool-result messages of ``context`` (or of a list of messages: the turn a
    :class:`~pi_core.ai.wire.TurnCache` hands its converter), in order; the system prompt travels
    separately, and a message of any other role is not sent."""
    messages = context.messages if isinstance(context, Context) else context
    return [m for m in messages if getattr(m, "role", None) in _CONVERSATION_ROLES]


# A stored message that turns out not to validate reads as an ``invalid:...`` role: never sent.
_CONVERSATION_ROLES = frozenset({"user", "assistant", "toolResult"})


def conversation_messages(context: Context) -> Any:
    """:func:`conversation` without typing anything: a :class:`~pi_core.ai.MessageList` stays one
    (read it with :func:`~pi_core.ai.message_list.message_views`, or hand it to a
    :class:`~pi_core.ai.wire.TurnCache`)."""
    messages = context.messages
    if isinstance(messages, MessageList):
        return messages.without_role("system")
    return [m for m in messages if getattr(m, "role", None) != "system"]


def data_uri(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def _message_chars(message: Any) -> int:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "image":
            chars += IMAGE_CHARS
        elif kind == "toolCall":
            chars += len(block.name) + len(json.dumps(block.arguments))
        else:
            chars += len(getattr(block, "text", None) or getattr(block, "thinking", None) or "")
    return chars


_BACKWARDS = 256  # messages read at once while looking for the last reply


def _last_usage(messages: Any) -> tuple[int, int]:
    """``(tokens, index after it)`` of the last successful reply that reported usage, else ``(0, 0)``."""
    items = message_items(messages)
    hi = len(items)
    while hi > 0:
        lo = max(0, hi - _BACKWARDS)
        wanted = [i for i in range(hi - 1, lo - 1, -1) if getattr(items[i], "role", None) == "assistant"]
        if wanted:
            views = message_views(messages, lo, hi)
            for i in wanted:
                m = views[i - lo]
                if m is not None and m.stop_reason not in ("error", "aborted"):
                    u = m.usage
                    used = u.input + u.output + u.cache_read + u.cache_write
                    if used > 0:
                        return used, i + 1
        hi = lo
    return 0, 0


def estimate_context_tokens(context: Context) -> int:
    """Prompt size estimate: the last successful reply's reported usage plus chars/4 of what followed."""
    messages = context.messages
    base, start = _last_usage(messages)
    chars = sum(_message_chars(m) for m in message_views(messages, start) if m is not None)
    if start == 0:
        chars += len(context.system_prompt or "") + len(json.dumps([t.to_json() for t in context.tools or []]))
    return base + math.ceil(chars / CHARS_PER_TOKEN)


def clamp_max_tokens(model: Model, context: Context, max_tokens: int | None) -> int:
    """The output limit to request: ``max_tokens`` (default the model's), lowered so that prompt plus
    output fit the context window with a safety margin."""
    wanted = max_tokens or model.max_tokens
    if model.context_window <= 0:
        return max(1, wanted)
    prompt = estimate_context_tokens(context)
    margin = max(CONTEXT_SAFETY_TOKENS, math.ceil(prompt * CONTEXT_SAFETY_RATIO))
    room = model.context_window - prompt - margin
    if room < MIN_OUTPUT_WITH_MARGIN:
        room = min(MIN_OUTPUT_WITH_MARGIN, model.context_window - prompt - CONTEXT_SAFETY_TOKENS)
    return min(wanted, max(1, room))


def supported_levels(model: Model) -> list[str]:
    """Thinking levels a model offers (``thinking_level_map`` ``None`` entries remove a level; ``xhigh``
    and ``max`` exist only when mapped)."""
    if not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels = []
    for level in EXTENDED_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in ("xhigh", "max") and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """The nearest level the model supports, preferring stronger ones (pi's ``clampThinkingLevel``)."""
    levels = supported_levels(model)
    if level in levels:
        return level
    if level not in EXTENDED_LEVELS:
        return levels[0]
    i = EXTENDED_LEVELS.index(level)
    for candidate in EXTENDED_LEVELS[i:]:
        if candidate in levels:
            return candidate
    for candidate in reversed(EXTENDED_LEVELS[:i]):
        if candidate in levels:
            return candidate
    return levels[0]


def requested_level(model: Model, options: StreamOptions) -> str | None:
    """The thinking level to send for this request, or ``None`` for none."""
    level = options.thinking
    if level is None or not model.reasoning:
        return None
    level = clamp_thinking_level(model, level)
    return None if level == "off" else level


def sampling_params(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    """The model's ``samplingParams`` with those of the request's (clamped) thinking level over them;
    ``None`` when the model sets none. Merged into the body last, so they win over named fields."""
    level = clamp_thinking_level(model, options.thinking or "off")
    by_level = (model.sampling_params_by_thinking_level or {}).get(level)
    if not model.sampling_params and not by_level:
        return None
    return {**(model.sampling_params or {}), **(by_level or {})}


def mapped_level(model: Model, level: str) -> str | None:
    """The provider's value for ``level`` (``thinking_level_map``), defaulting to the level itself."""
    mapping = model.thinking_level_map or {}
    return mapping[level] if level in mapping else level


def thinking_budget(level: str, options: StreamOptions) -> int:
    return options.budget_for(level)


def adjust_max_tokens_for_thinking(base: int | None, model_max: int, level: str,
                                   options: StreamOptions) -> tuple[int, int]:
    """``(max_tokens, budget)``: room for a thinking budget on top of the answer, capped by the model,
    leaving at least 1024 answer tokens when the cap bites."""
    budget = thinking_budget(level, options)
    max_tokens = model_max if base is None else min(base + budget, model_max)
    if max_tokens <= budget:
        budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    return max_tokens, budget


__all__ = [
    "DEFAULT_THINKING_BUDGETS",
    "adjust_max_tokens_for_thinking",
    "clamp_max_tokens",
    "clamp_thinking_level",
    "conversation",
    "conversation_messages",
    "data_uri",
    "estimate_context_tokens",
    "mapped_level",
    "requested_level",
    "sampling_params",
    "sanitize_surrogates",
    "supported_levels",
    "system_prompt",
]
