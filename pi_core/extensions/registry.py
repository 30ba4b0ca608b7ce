"""Name-keyed registries of what plugins contributed, with conflicts reported, never silent.

Rules: a name belongs to the first plugin (in load order) that registers it. A later plugin
registering the same name is a *conflict*: it loses, and both plugins are named in the report.
A later plugin that passes ``replaces=<name>`` takes the name over on purpose: a *replacement*,
shown to the user.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Registered(Generic[T]):
    item: T
    plugin: str
    replaced: str | None = None
    """The plugin whose item this one replaced (``replaces=``), if any."""


@dataclass(frozen=True)
class Conflict:
    kind: str
    name: str
    winner: str
    loser: str

    def __str__(self) -> str:
        return (f"{self.kind} {self.name!r} is registered by both {self.winner!r} and {self.loser!r}; "
                f"{self.winner!r} keeps it (first in load order). Pass replaces={self.name!r} in "
                f"{self.loser!r} to take it over on purpose.")


@dataclass(frozen=True)
class Replacement:
    kind: str
    name: str
    by: str
    previous: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name!r} of {self.previous!r} is replaced by {self.by!r}"


@dataclass
class Registry(Generic[T]):
    """Items of one kind (``tool``, ``command``, ...), each remembering its plugin."""

    kind: str
    name_of: Callable[[T], str]
    entries: dict[str, Registered[T]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    replacements: list[Replacement] = field(default_factory=list)

    def add(self, item: T, plugin: str, *, replaces: str | None = None) -> bool:
        """Record ``item`` for ``plugin``; return whether it is now the registered one."""
        name = self.name_of(item)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} registered by {plugin!r} has no name")
        if replaces is not None and replaces != name:
            raise ValueError(f"{self.kind} {name!r}: replaces={replaces!r} must name the item itself")
        current = self.entries.get(name)
        if current is None:
            self.entries[name] = Registered(item, plugin)
            return True
        if replaces == name and current.plugin != plugin:
            self.entries[name] = Registered(item, plugin, replaced=current.plugin)
            self.replacements.append(Replacement(self.kind, name, plugin, current.plugin))
            return True
        self.conflicts.append(Conflict(self.kind, name, current.plugin, plugin))
        return False

    def remove_plugin(self, plugin: str) -> None:
        """Forget everything ``plugin`` registered (it failed and was unregistered)."""
        for name in [n for n, r in self.entries.items() if r.plugin == plugin]:
            del self.entries[name]

    def get(self, name: str) -> T | None:
        entry = self.entries.get(name)
        return entry.item if entry else None

    def plugin_of(self, name: str) -> str | None:
        entry = self.entries.get(name)
        return entry.plugin if entry else None

    def names(self) -> list[str]:
        return list(self.entries)

    def by_plugin(self, plugin: str) -> list[str]:
        return [n for n, r in self.entries.items() if r.plugin == plugin]

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[T]:
        return (r.item for r in self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)


__all__ = ["Conflict", "Registered", "Registry", "Replacement"]
