"""Events as pi 1.6's JSON event stream shows them (JSON mode and RPC mode share this)."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from pydantic import BaseModel

from ..agent.tools import ToolResult
from ..safejson import json_safe

_UNSAFE = re.compile("[\u2028\u2029\ud800-\udfff]")

# Fields that are part of the in-process event but not of pi's JSON line.
_DROP: dict[str, set[str]] = {
    "turn_start": {"turn_index", "timestamp"},
    "turn_end": {"turn_index", "message_entry_id", "tool_result_entry_ids", "outcome", "entries", "continue_"},
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, ToolResult):
        return value.to_json()
    if hasattr(value, "to_json") and not isinstance(value, type):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_camel(f.name): to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not None}
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "__fspath__"):
        return str(value)
    return value


def event_to_json(event: Any) -> dict[str, Any]:
    """One event as a JSON-ready dict with ``type`` first."""
    kind = event.type
    if kind == "message_update":
        message = event.message
        data: dict[str, Any] = {"type": kind}
        usage = getattr(message, "usage", None)
        if usage is not None:
            data["usage"] = usage.to_json()
        data["assistantMessageEvent"] = _stream_event(event.assistant_message_event)
        return data
    data = {"type": kind}
    drop = _DROP.get(kind, set())
    for f in dataclasses.fields(event):
        if f.name == "type" or f.name in drop:
            continue
        value = getattr(event, f.name)
        if value is None:
            continue
        data[_camel(f.name)] = to_jsonable(value)
    return data


def _stream_event(event: Any) -> Any:
    if event is None:
        return None
    if hasattr(event, "to_json"):
        return event.to_json()
    return {"type": getattr(event, "type", "unknown")}


def dumps(event: Any) -> str:
    """One JSON line (no newline). U+2028/U+2029 are escaped so line-based readers never split a record,
    and lone surrogates as ``JSON.stringify`` does, so the line is always valid UTF-8."""
    data = event_to_json(event) if not isinstance(event, dict) else event
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a non-finite float (a model's 1e400): JSON.stringify writes null
        text = json.dumps(json_safe(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if text.isascii():
        return text
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["dumps", "event_to_json", "to_jsonable"]
