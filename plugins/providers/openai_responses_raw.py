"""OpenAI Responses items straight from raw views (:mod:`pi_core.ai.raw_views`).

The first request on a long session converts every stored message; this converter takes a turn's raw
views through the handoff rules (:func:`pi_core.ai.raw_handoff`) and then through the usual converter's
own item builder (:func:`plugins.providers.openai_responses.items_of_message`, which tells raw views apart
by ``role`` and ``type`` as it does views), numbering messages as the usual way does. It declines (so the
turn is converted the usual way) images and a tool call id the protocol renames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from pi_core.ai import (
    NO_RESULT,
    DeclineTurn,
    Model,
    RawText,
    RawToolCall,
    RawToolResult,
    raw_handoff,
    raw_json_text,
)

from .openai_responses import items_of_message, normalize_tool_call_id


def raw_converter(model: Model) -> Callable[[list[Any], int], Any]:
    """``raw_turn`` for :meth:`pi_core.ai.TurnCache.convert`."""
    texts: dict[int, str] = {}  # the turn's tool calls' arguments as JSON text, by id() of the call

    def assistant(message: Any) -> tuple[Any, list[Any]]:
        if not (message.provider == model.provider and message.api == model.api and message.model == model.id):
            blocks: list[Any] = []  # another model's: thinking dropped, texts without signatures, ids checked
            for block in message.content:
                if type(block) is RawToolCall:
                    if normalize_tool_call_id(block.id, model, message) != block.id:
                        raise DeclineTurn
                    blocks.append(block)
                elif type(block) is RawText:
                    blocks.append(RawText(text=block.text))
            message = msgspec.structs.replace(message, content=blocks)
        calls = [block for block in message.content if type(block) is RawToolCall]
        for call in calls:
            text = raw_json_text(call.arguments)
            if text is None:
                raise DeclineTurn
            texts[id(call)] = text
        return message, calls

    def no_images(message: Any) -> Any:
        if not isinstance(message.content, str) and not all(type(b) is RawText for b in message.content):
            raise DeclineTurn
        return message

    def arguments(call: Any) -> str:
        return texts[id(call)]  # decoded once, by assistant()

    def convert(turn: list[Any], offset: int) -> tuple[list[dict[str, Any]], int] | None:
        texts.clear()  # the calls of the turn before may be gone, and their ids taken again
        walked = raw_handoff(turn, assistant, no_images, no_images, _missing)
        if walked is None:
            return None
        items: list[dict[str, Any]] = []
        for index, (_, message) in enumerate(walked, offset):
            items += items_of_message(message, model, index, arguments)
        return items, len(walked)

    return convert


def _missing(call: Any) -> Any:
    return RawToolResult(tool_call_id=call.id, tool_name=call.name, content=[RawText(text=NO_RESULT)], is_error=True)
