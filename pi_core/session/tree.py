"""The entry tree for navigation (``/tree``): nodes with children, labels and typed entries on demand."""

from __future__ import annotations

from typing import Any

from .entries import entry_from_json
from .ids import iso_to_ms

Raw = dict[str, Any]


class SessionTreeNode:
    """One entry in the tree. ``raw`` is the record as stored; ``entry`` its typed view (made on demand)."""

    __slots__ = ("raw", "children", "label", "label_timestamp", "_entry")

    def __init__(self, raw: Raw, label: str | None = None, label_timestamp: str | None = None) -> None:
        self.raw = raw
        self.children: list[SessionTreeNode] = []
        self.label = label
        self.label_timestamp = label_timestamp
        self._entry: Any = None

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def parent_id(self) -> str | None:
        return self.raw.get("parentId")

    @property
    def type(self) -> str:
        return self.raw.get("type", "")

    @property
    def entry(self) -> Any:
        """The typed entry (:data:`~pi_core.session.entries.SessionEntry`)."""
        if self._entry is None:
            self._entry = entry_from_json(self.raw)
        return self._entry

    def __repr__(self) -> str:
        return f"SessionTreeNode({self.type} {self.id}, {len(self.children)} children)"


def _time_key(node: SessionTreeNode) -> int:
    stamp = iso_to_ms(node.raw.get("timestamp"))
    return stamp if stamp is not None else 0


def build_tree(entries: list[Raw], labels: dict[str, tuple[str, str | None]]) -> list[SessionTreeNode]:
    """Roots of the tree: entries whose parent is null, themselves, or missing (orphans).

    Children are sorted by entry timestamp, oldest first (ties keep file order), as pi does.
    """
    nodes: dict[str, SessionTreeNode] = {}
    for raw in entries:
        label = labels.get(raw["id"])
        nodes[raw["id"]] = SessionTreeNode(raw, *(label or (None, None)))
    roots: list[SessionTreeNode] = []
    for node in nodes.values():
        parent_id = node.raw.get("parentId")
        parent = nodes.get(parent_id) if parent_id.__class__ is str and parent_id != node.id else None
        (parent.children if parent is not None else roots).append(node)
    stack = list(roots)
    while stack:  # iterative: a long session is a very deep tree
        node = stack.pop()
        if len(node.children) > 1:
            node.children.sort(key=_time_key)
        stack.extend(node.children)
    return roots


__all__ = ["SessionTreeNode", "build_tree"]
