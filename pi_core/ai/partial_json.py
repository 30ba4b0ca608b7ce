"""Tolerant JSON for tool-call arguments that are still streaming.

Providers stream a tool call's arguments as raw JSON fragments. After each fragment the buffer so far is
parsed best-effort, so a UI can show ``{"path": "src/ma`` as ``{"path": "src/ma"}``. The partial parser
is pydantic-core's (jiter, the one the vendor SDKs use) in ``trailing-strings`` mode. Models sometimes put
raw newlines or tabs inside JSON strings; those are escaped before giving up.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_core import from_json

from ..safejson import JSONInputError, json_safe, parse_json

_CONTROL = re.compile(r"[\x00-\x1f]")


def repair_json(text: str) -> str:
    """Escape raw control characters that appear inside JSON strings (models emit literal newlines)."""
    if not _CONTROL.search(text):
        return text
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            elif ord(ch) < 0x20:
                out.append(json.dumps(ch)[1:-1])
                continue
        elif ch == '"':
            in_string = True
        out.append(ch)
    return "".join(out)


def _strict(text: str) -> Any:
    try:
        return parse_json(text)
    except JSONInputError:
        repaired = repair_json(text)
        if repaired is text:
            raise
        return parse_json(repaired)


def parse_json_with_repair(text: str) -> Any:
    """Strict JSON, retried once with raw control characters inside strings escaped; raises ``ValueError``."""
    return _strict(text)


def parse_partial_json(text: str) -> Any:
    """Best-effort value of a possibly incomplete JSON document; ``{}`` when nothing can be made of it."""
    if not text or text.isspace():
        return {}
    try:
        return from_json(text, allow_partial="trailing-strings")
    except ValueError:
        pass
    repaired = repair_json(text)
    if repaired is not text:
        try:
            return from_json(repaired, allow_partial="trailing-strings")
        except ValueError:
            pass
    return {}


def parse_streaming_arguments(text: str) -> dict[str, Any]:
    """Arguments of a tool call whose JSON is still arriving: always a dict, at worst ``{}``."""
    value = parse_partial_json(text)
    return value if isinstance(value, dict) else {}


def parse_tool_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Final arguments of a completed tool call and, if the JSON was not a valid object, why not.

    A broken document still yields what could be salvaged (the partial parse), so nothing is lost.
    """
    if not text or text.isspace():
        return {}, None
    try:
        value = _strict(text)
    except ValueError as exc:
        return json_safe(parse_streaming_arguments(text)), f"Invalid JSON in tool arguments: {exc}"
    if not isinstance(value, dict):
        return {}, f"Tool arguments must be a JSON object, got {type(value).__name__}"
    return value, None


__all__ = ["parse_json_with_repair", "parse_partial_json", "parse_streaming_arguments", "parse_tool_arguments", "repair_json"]
