"""What the start-up header lists under the version line, as pi's does: the context files, skills, prompt
templates and extensions this session loaded, a section each (``[Context]``, ``[Skills]``, ``[Prompts]``,
``[Extensions]``) with its entries on one dimmed row."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .style import Palette

if TYPE_CHECKING:
    from ...runtime.agent_session import AgentSession

HIDDEN_SOURCES = ("builtin",)
"""Plugins of these sources are part of pi itself, not something the user loaded."""


def loaded_resource_rows(palette: Palette, session: AgentSession) -> list[str]:
    """The sections for what ``session`` loaded (none for what it did not), each followed by a blank row."""
    cwd = Path(session.cwd)
    resources = getattr(session, "resources", None)
    context = [display_path(f.path, cwd) for f in getattr(resources, "context_files", [])]
    skills = sorted(s.name for s in getattr(session, "skills", []))
    prompts = sorted(f"/{t.name}" for t in getattr(session, "templates", []))
    extensions = sorted(_extensions(getattr(session, "host", None)))
    rows: list[str] = []
    for name, entries in (("Context", context), ("Skills", skills), ("Prompts", prompts),
                          ("Extensions", extensions)):
        if entries:
            rows += [palette(f"[{name}]", "mdHeading"), palette("  " + ", ".join(entries), "dim"), ""]
    return rows


def display_path(path: Path | str, cwd: Path) -> str:
    """``path`` relative to the project when inside it, else with the home folder as ``~``."""
    target = Path(path)
    try:
        return str(target.relative_to(cwd))
    except ValueError:
        home = str(Path.home())
        text = str(target)
        return "~" + text[len(home):] if text.startswith(home + "/") else text


def _extensions(host: Any) -> list[str]:
    records = getattr(host, "records", {}) or {}
    names: list[str] = []
    for record in records.values():
        if record.source in HIDDEN_SOURCES or record.error or record.disabled:
            continue
        path = record.path
        if path is not None:
            names.append(path.parent.name if path.name == "__init__.py" else path.stem)
        else:  # an installed plugin or an object a host passed: its name, without the "sdk:" of the latter
            names.append(record.name.removeprefix(f"{record.source}:"))
    return names


__all__ = ["display_path", "loaded_resource_rows"]
