"""Which tools a session starts with: ``--tools``, ``--exclude-tools``, ``--no-tools``,
``--no-builtin-tools`` and the ``defaultTools`` setting, combined as pi 1.6 combines them.

* ``--tools a,b`` is an allowlist of names and ``*`` patterns; it replaces the default selection.
* ``--tools +a,-b`` (only ``+name``/``-name`` entries, exact names) edits the default selection.
* ``--exclude-tools`` (names and patterns) removes tools after everything else.
* ``--no-tools`` starts with no tools at all; ``--no-builtin-tools`` drops the default built-in
  selection but leaves tools that plugins register.

The result is a :class:`ToolChoice`: the names to activate now, and the filter that tools
registered later (by plugins, at run time) must pass to be activated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

NoTools = Literal["all", "builtin"]


def is_tool_modifier(entry: object) -> bool:
    """``+name`` or ``-name``: an edit of the default selection rather than a name."""
    return isinstance(entry, str) and entry[:1] in ("+", "-")


def tool_list_error(entries: Sequence[str]) -> str | None:
    """Why a ``--tools`` list is invalid (plain names mixed with edits, a pattern in an edit), or ``None``."""
    modifiers = [e for e in entries if is_tool_modifier(e)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "plain tool names and +name/-name entries cannot be mixed"
    pattern = next((e for e in modifiers if "*" in e), None)
    if pattern:
        return f"+name/-name entries take exact tool names, not patterns ({pattern}); use --exclude-tools for patterns"
    return None


def apply_tool_modifiers(base: Iterable[str], entries: Iterable[str]) -> list[str]:
    """``base`` with each ``+name`` added and each ``-name`` removed, in order; other entries ignored."""
    tools = list(base)
    for entry in entries:
        if not is_tool_modifier(entry):
            continue
        name = entry[1:]
        if entry[0] == "+" and name and name not in tools:
            tools.append(name)
        elif entry[0] == "-" and name in tools:
            tools.remove(name)
    return tools


def _pattern(entry: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in entry.split("*")) + "$")


def tool_matcher(entries: Iterable[str]) -> Callable[[str], bool]:
    """A test for tool names: equal to one of ``entries`` or matching one with ``*`` wildcards."""
    entries = list(entries)
    names = {e for e in entries if "*" not in e}
    patterns = [_pattern(e) for e in entries if "*" in e]
    return lambda name: name in names or any(p.match(name) for p in patterns)


def expand(entries: Iterable[str], available: Sequence[str]) -> list[str]:
    """Entries in order, each pattern replaced by the available names it matches (registry order)."""
    out: list[str] = []
    for entry in entries:
        found = [n for n in available if tool_matcher([entry])(n)] if "*" in entry else [entry]
        out.extend(n for n in found if n not in out)
    return out


@dataclass(frozen=True)
class ToolChoice:
    """The start-up tool selection.

    :param initial: names (and patterns) to activate, in order; expand with :meth:`active`.
    :param allowed: when set, only tools it names or matches may be active (``--tools`` allowlist,
        ``--no-tools``: empty); ``None`` admits any tool.
    :param excluded: names or patterns never active (``--exclude-tools``).
    :param uses_defaults: the selection is ``defaultTools`` (possibly edited by ``+name``/``-name``).
    """

    initial: tuple[str, ...]
    allowed: tuple[str, ...] | None = None
    excluded: tuple[str, ...] = ()
    uses_defaults: bool = True

    def admits(self, name: str) -> bool:
        """May ``name`` be active (a tool a plugin registers later, say)?"""
        if self.excluded and tool_matcher(self.excluded)(name):
            return False
        return self.allowed is None or tool_matcher(self.allowed)(name)

    def active(self, available: Sequence[str]) -> list[str]:
        """The names to activate among ``available`` (registered tools), in selection order."""
        return [n for n in expand(self.initial, available) if n in available and self.admits(n)]

    def unknown(self, available: Sequence[str]) -> list[str]:
        """Plain names of the selection that no registered tool has (patterns never count)."""
        return [n for n in self.initial if "*" not in n and n not in available]


def choose_tools(defaults: Sequence[str], *, tools: Sequence[str] | None = None,
                 exclude: Sequence[str] | None = None, no_tools: NoTools | None = None) -> ToolChoice:
    """Combine the defaults (``defaultTools`` resolved) with the command-line options.

    Raises :class:`ValueError` for an invalid ``tools`` list (see :func:`tool_list_error`).
    """
    tools = [t.strip() for t in tools or () if t.strip()] if tools is not None else None
    error = tool_list_error(tools) if tools else None
    if error:
        raise ValueError(error)
    base = [] if no_tools else list(defaults)
    excluded = tuple(e.strip() for e in exclude or () if e.strip())
    if tools and is_tool_modifier(tools[0]):
        selected = apply_tool_modifiers(base, tools)
        allowed = tuple(selected) if no_tools == "all" else None
        return ToolChoice(tuple(selected), allowed, excluded, uses_defaults=no_tools is None)
    if tools is not None:
        return ToolChoice(tuple(tools), tuple(tools), excluded, uses_defaults=False)
    allowed = () if no_tools == "all" else None
    return ToolChoice(tuple(base), allowed, excluded, uses_defaults=no_tools is None)


__all__ = ["NoTools", "ToolChoice", "apply_tool_modifiers", "choose_tools", "expand", "is_tool_modifier",
           "tool_list_error", "tool_matcher"]
