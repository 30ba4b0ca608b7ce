"""Reading stored entries as another program may have written them.

Session files are edited by hand and written by other tools, so a field of a stored dict can hold
anything JSON can: ``"usage": "x"``, ``"content": 42``, ``{"type": "text", "text": 5}``. Code that reads
the raw dicts (estimates, listings, exports, statistics) goes through these helpers, which give a value
of the expected type or an empty one, never an exception.
"""

from __future__ import annotations

import math
from typing import Any


def raw_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one."""
    return value if value.__class__ is dict else {}


def raw_list(value: Any) -> list[Any]:
    """``value`` if it is an array, else an empty one."""
    return value if value.__class__ is list else []


def raw_number(value: Any) -> float:
    """``value`` if it is a finite number (not a boolean), else 0."""
    return value if (value.__class__ is int or value.__class__ is float) and math.isfinite(value) else 0


def raw_text(content: Any, separator: str = "") -> str:
    """The text of a message's ``content``: the string itself, or its text blocks joined (blocks whose
    ``text`` is not a string are left out)."""
    if content.__class__ is str:
        return content
    return separator.join(block["text"] for block in raw_list(content)
                          if block.__class__ is dict and block.get("type") == "text"
                          and block.get("text").__class__ is str)


def raw_message(entry: Any) -> dict[str, Any]:
    """The ``message`` of a ``message`` entry (an empty dict for any other entry or a bad message)."""
    return raw_dict(entry.get("message")) if entry.__class__ is dict and entry.get("type") == "message" else {}


__all__ = ["raw_dict", "raw_list", "raw_message", "raw_number", "raw_text"]
