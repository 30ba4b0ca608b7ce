"""Gemini ``contents`` straight from raw views (:mod:`pi_core.ai.raw_views`).

The first request on a long session converts every stored message; this converter takes a turn's raw
views through the handoff rules (:func:`pi_core.ai.raw_handoff`, and what
:func:`~pi_core.ai.transform_messages` does to another model's answer) and then through the usual
converter's own builders (:mod:`plugins.providers.google`: ``model_parts``, ``function_response``,
``response_of``, ``user_content``), so that both ways make each content alike. It declines (so the turn is converted the
usual way) images and a tool call id the protocol renames.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import msgspec

from pi_core.ai import (
    NO_RESULT,
    DeclineTurn,
    Model,
    RawText,
    RawThinking,
    RawToolCall,
    raw_handoff,
    raw_object,
    sanitize_id,
)

from .google import (add_function_response, function_response, model_parts, requires_tool_call_id, response_of,
                     user_content)


def raw_converter(model: Model) -> Callable[[list[Any], int], Any]:
    """``raw_turn`` for :meth:`pi_core.ai.TurnCache.convert`."""
    renames = requires_tool_call_id(model.id)  # ids of other models go through sanitize_id then

    def assistant(message: Any) -> tuple[dict[str, Any] | None, list[Any]]:
        same = message.provider == model.provider and message.api == model.api and message.model == model.id
        blocks: list[Any] = []
        arguments: dict[int, Any] = {}
        for block in message.content:
            kind = type(block)
            if kind is RawToolCall:
                value = raw_object(block.arguments)
                if value is None or not same and renames and sanitize_id(block.id, 64) != block.id:
                    raise DeclineTurn
                if not same:
                    block = msgspec.structs.replace(block, thought_signature=None)
                arguments[id(block)] = value
            elif kind is RawThinking:
                if not (same and (block.redacted or block.thinking_signature or block.thinking.strip())):
                    continue  # another model's thinking, and blank unsigned thinking, are dropped
            elif kind is RawText and not same:
                block = RawText(text=block.text)  # another model's text loses its signature
            blocks.append(block)
        calls = [block for block in blocks if type(block) is RawToolCall]
        if len(blocks) != len(message.content) or any(map(operator.is_not, blocks, message.content)):
            message = msgspec.structs.replace(message, content=blocks)
        parts = model_parts(message, model, lambda call: arguments[id(call)])
        return ({"role": "model", "parts": parts} if parts else None), calls

    def user(message: Any) -> dict[str, Any] | None:
        if not isinstance(message.content, str) and not all(type(b) is RawText for b in message.content):
            raise DeclineTurn  # an image
        return user_content(message)

    def result(message: Any) -> dict[str, Any]:
        if not all(type(b) is RawText for b in message.content):
            raise DeclineTurn  # an image
        return function_response(message, model)[0]

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int] | None:
        walked = raw_handoff(turn, assistant, user, result,
                             lambda call: response_of(call.name, call.id, NO_RESULT, True, model))
        if walked is None:
            return None
        contents: list[dict[str, Any]] = []
        for is_result, item in walked:
            if item is None:
                continue
            if is_result:
                add_function_response(contents, item)
            else:
                contents.append(item)
        return contents, 0

    return convert
