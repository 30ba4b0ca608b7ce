"""``get_tree`` data as JSON text, built without recursion.

A session's tree is as deep as its longest branch (thousands of entries in a long session), deeper
than Python's recursion limit, which ``json.dumps`` of nested dicts runs into. The text is written
with an explicit stack instead; each entry itself is small and encoded normally.
"""

from __future__ import annotations

import json
from typing import Any


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tree_data_json(roots: list[Any], leaf_id: str | None) -> str:
    """``{"tree": [{entry, children, label?, labelTimestamp?}, ...], "leafId": ...}`` as text."""
    parts: list[str] = ['{"tree":[']
    # stack items: a node to open, or the closing text of a node whose children are done
    stack: list[Any] = [("node", node, index > 0) for index, node in reversed(list(enumerate(roots)))]
    while stack:
        kind, item, comma = stack.pop()
        if kind == "close":
            parts.append(item)
            continue
        parts.append(("," if comma else "") + '{"entry":' + _dumps(item.raw) + ',"children":[')
        stack.append(("close", "]" + _label_fields(item) + "}", False))
        children = item.children
        stack.extend(("node", child, i > 0) for i, child in reversed(list(enumerate(children))))
    parts.append('],"leafId":' + _dumps(leaf_id) + "}")
    return "".join(parts)


def _label_fields(node: Any) -> str:
    text = ""
    if node.label is not None:
        text += ',"label":' + _dumps(node.label)
    if node.label_timestamp is not None:
        text += ',"labelTimestamp":' + _dumps(node.label_timestamp)
    return text


__all__ = ["tree_data_json"]
