"""Shaping a listing-style tool result (grep, find, ls): count arguments, the byte cap, footer notices."""

from __future__ import annotations

import math
from typing import Any

from ..agent.tools import ToolResult
from .truncate import DEFAULT_MAX_BYTES, format_size, truncate_head


def count_argument(value: Any, default: int, minimum: int) -> int:
    """A count argument as an int: missing or non-finite gives ``default``; below ``minimum`` is raised."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if not math.isfinite(number):
        return default
    return max(minimum, int(number))


def capped_listing(text: str, notices: list[str], details: dict[str, Any]) -> ToolResult:
    """``text`` cut at the byte limit (whole lines), with the notices as one bracketed footer.

    ``notices`` and ``details`` say what the caller already limited (a result count, long lines); the byte
    cap is added to both when it applies.
    """
    truncation = truncate_head(text, max_lines=10**12)
    if truncation.truncated:
        notices = [*notices, f"Output cut at the {format_size(DEFAULT_MAX_BYTES)} limit"]
        details = {**details, "truncation": truncation.details()}
    footer = f"\n\n[{'. '.join(notices)}]" if notices else ""
    return ToolResult.text(truncation.content + footer, details=details or None)


__all__ = ["capped_listing", "count_argument"]
