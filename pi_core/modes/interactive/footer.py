"""The footer under the input line: model, thinking level, context use and cost, plugin statuses and
a transient hint (e.g. "press Ctrl+C again to exit")."""

from __future__ import annotations

from typing import Any

from .render import Stats
from .style import Palette, clip


def format_tokens(count: int) -> str:
    """``950``, ``12.3k``, ``1.2M`` — as pi's footer shows token counts."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        value = f"{count / 1000:.1f}".rstrip("0").rstrip(".")
        return f"{value}k"
    value = f"{count / 1_000_000:.1f}".rstrip("0").rstrip(".")
    return f"{value}M"


def context_part(stats: Stats, model: Any) -> str:
    window = getattr(model, "context_window", 0) or 0
    used = format_tokens(stats.context_tokens)
    if not window:
        return f"ctx {used}"
    percent = stats.context_tokens * 100 / window
    return f"ctx {used}/{format_tokens(window)} ({percent:.0f}%)"


def footer_rows(palette: Palette, session: Any, stats: Stats, statuses: dict[str, str], hint: str | None,
                width: int) -> list[str]:
    """One line of session state, then plugin statuses (if any), then the hint (if any)."""
    model = session.model
    level = session.thinking_level
    parts = [f"{model.provider}/{model.id}", f"thinking {level}" if level != "off" else "thinking off",
             context_part(stats, model), f"${stats.cost:.3f}"]
    name = session.session.get_session_name()
    if name:
        parts.insert(0, name)
    sep = f" {palette.glyphs.bullet} "
    rows = [palette(clip(sep.join(parts), width, palette.glyphs.ellipsis), "gray")]
    if statuses:
        line = sep.join(text for _, text in sorted(statuses.items()))
        rows.append(palette(clip(line, width, palette.glyphs.ellipsis), "gray"))
    if hint:
        rows.append(palette(clip(hint, width, palette.glyphs.ellipsis), "yellow"))
    return rows


__all__ = ["context_part", "footer_rows", "format_tokens"]
