"""The footer under the editor, laid out as pi's: the folder (with its git branch) and the session's
name; then token totals (↑ input, ↓ output, R cache read, W cache write), cost and how full the
context is, with the model and thinking level on the right; then plugin statuses and a transient hint."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .render import Stats
from .style import Palette, clip, display_width

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession


def format_tokens(count: int) -> str:
    """``950``, ``1.2k``, ``12k``, ``1.5M`` — as pi's footer shows token counts."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if count < 1_000_000:
        return f"{_round(count / 1000)}k"
    if count < 10_000_000:
        return f"{count / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"
    return f"{_round(count / 1_000_000)}M"


def _round(value: float) -> int:
    return int(value + 0.5)  # half up, as JavaScript's Math.round (Python rounds half to even)


def folder_label(cwd: Path | str, home: Path | None = None) -> str:
    home = home or Path.home()
    path = Path(cwd)
    try:
        rest = path.relative_to(home)
    except ValueError:
        return str(path)
    return "~" if str(rest) == "." else f"~/{rest}"


class GitBranch:
    """The branch of the repository around ``cwd``, read from ``.git/HEAD`` (no git process), and read
    again only when that file changes."""

    def __init__(self, cwd: Path | str) -> None:
        self.head = _find_head(Path(cwd))
        self._stamp: float | None = None
        self._branch: str | None = None

    def get(self) -> str | None:
        if self.head is None:
            return None
        try:
            stamp = self.head.stat().st_mtime
            if stamp != self._stamp:
                self._stamp = stamp
                text = self.head.read_text(encoding="utf-8", errors="replace").strip()
                self._branch = text[16:] if text.startswith("ref: refs/heads/") else (text[:7] or None)
        except OSError:
            return None
        return self._branch


def _find_head(cwd: Path) -> Path | None:
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git / "HEAD"
        if dot_git.is_file():  # a worktree: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[7:].strip())
                return (target if target.is_absolute() else folder / target) / "HEAD"
    return None


def context_part(stats: Stats, model: Any) -> str:
    window = getattr(model, "context_window", 0) or 0
    if not stats.context_known:
        return f"?/{format_tokens(window)}" if window else "?"
    if not window:
        return format_tokens(stats.context_tokens)
    return f"{stats.context_tokens * 100 / window:.1f}%/{format_tokens(window)}"


def footer_rows(palette: Palette, session: AgentSession, stats: Stats, statuses: dict[str, str], hint: str | None,
                width: int, *, branch: str | None = None, auto_compact: bool = True) -> list[str]:
    """The footer's rows for ``width`` columns."""
    where = folder_label(session.cwd)
    if branch:
        where += f" ({branch})"
    name = session.session.get_session_name()
    if name:
        where += f" {palette.glyphs.bullet} {name}"
    rows = [palette(clip(where, width, palette.glyphs.ellipsis), "dimText")]
    parts = []
    for label, value in (("↑", stats.input_tokens), ("↓", stats.output_tokens), ("R", stats.cache_read),
                         ("W", stats.cache_write)):
        if value:
            parts.append(f"{label}{format_tokens(value)}")
    if stats.cost:
        parts.append(f"${stats.cost:.3f}")
    context = context_part(stats, session.model) + (" (auto)" if auto_compact else "")
    percent = stats.context_tokens * 100 / (session.model.context_window or 1) if stats.context_known else 0
    left = " ".join(parts + [context])
    model = session.model
    level = session.thinking_level
    right = model.id + ((" " + palette.glyphs.bullet + (" thinking off" if level == "off" else f" {level}"))
                        if getattr(model, "reasoning", False) else "")
    with_provider = f"({model.provider}) {right}"
    if display_width(left) + 2 + display_width(with_provider) <= width:
        right = with_provider
    gap = width - display_width(left) - display_width(right)
    if gap >= 2:
        line = palette(left[:-len(context)], "dimText") + _context_colour(palette, context, percent) + \
            palette(" " * gap + right, "dimText")
    else:
        line = palette(clip(f"{left}  {right}", width, palette.glyphs.ellipsis), "dimText")
    rows.append(line)
    if statuses:
        sep = f" {palette.glyphs.bullet} "
        line = sep.join(" ".join(text.split()) for _, text in sorted(statuses.items()))
        rows.append(palette(clip(line, width, palette.glyphs.ellipsis), "dimText"))
    if hint:
        rows.append(palette(clip(hint, width, palette.glyphs.ellipsis), "warning"))
    return rows


def _context_colour(palette: Palette, text: str, percent: float) -> str:
    if percent > 90:
        return palette(text, "error")
    if percent > 70:
        return palette(text, "warning")
    return palette(text, "dimText")


__all__ = ["GitBranch", "context_part", "folder_label", "footer_rows", "format_tokens"]
