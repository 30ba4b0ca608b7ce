"""Property-based: random sequences of appends, branches, edits, summaries, compactions and reopens,
checked against a deliberately simple reference model of the tree and its projection."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pi_core import EntryNotFoundError, SessionManager

TEXT = st.text(alphabet="abcxyz é\n\"\\", min_size=0, max_size=8)


@dataclass
class Node:
    id: str
    parent: str | None
    kind: str
    role: str | None = None
    text: str | None = None
    target: str | None = None
    first_kept: str | None = None
    replacement: Any = "unset"


@dataclass
class Model:
    """The tree as a list of nodes in append order, and the leaf."""

    nodes: list[Node] = field(default_factory=list)
    leaf: str | None = None

    def get(self, node_id: str | None) -> Node | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def path(self) -> list[Node]:
        out, node = [], self.get(self.leaf)
        while node is not None:
            out.insert(0, node)
            node = self.get(node.parent)
        return out

    def context(self) -> list[tuple[str, str]]:
        path = self.path()
        compactions = [i for i, n in enumerate(path) if n.kind == "compaction"]
        if compactions:
            c = compactions[-1]
            ids = [n.id for n in path[:c]]
            start = ids.index(path[c].first_kept) if path[c].first_kept in ids else c
            window = [path[c], *path[start:c], *path[c + 1:]]
        else:
            window = path
        edits = {n.target: n.replacement for n in window if n.kind == "edit"}
        out = []
        for i, node in enumerate(window):
            said = self.says(node, first=(i == 0))
            if said is None:
                continue
            if node.id in edits:
                if edits[node.id] is None:
                    continue
                if said[0] in ("user", "assistant", "custom"):
                    said = (said[0], edits[node.id])
            out.append(said)
        return out

    @staticmethod
    def says(node: Node, first: bool) -> tuple[str, str] | None:
        if node.kind == "message":
            return (node.role or "", node.text or "")
        if node.kind == "custom_message":
            return ("custom", node.text or "")
        if node.kind == "branch_summary":
            return ("branchSummary", node.text or "") if node.text else None
        if node.kind == "compaction" and first:
            return ("compactionSummary", node.text or "")
        return None


def said(raw: dict[str, Any]) -> tuple[str, str]:
    role = raw["role"]
    if role in ("branchSummary", "compactionSummary"):
        return (role, raw["summary"])
    content = raw["content"]
    return (role, content if isinstance(content, str) else content[0]["text"])


class SessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="pi-session-prop-"))
        self.session = SessionManager.create("/work/p", self.dir)
        self.model = Model()

    def teardown(self) -> None:
        self.session.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def pick(self, index: int) -> Node | None:
        return self.model.nodes[index % len(self.model.nodes)] if self.model.nodes else None

    def added(self, node_id: str, **node: Any) -> None:
        self.model.nodes.append(Node(id=node_id, parent=self.model.leaf, **node))
        self.model.leaf = node_id

    @rule(role=st.sampled_from(["user", "assistant"]), text=TEXT)
    def append_message(self, role: str, text: str) -> None:
        message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
        if role == "assistant":
            message.update(provider="p", model="m", stopReason="stop")
        self.added(self.session.append_message(message), kind="message", role=role, text=text)

    @rule(text=TEXT)
    def append_custom_message(self, text: str) -> None:
        self.added(self.session.append_custom_message_entry("k", text), kind="custom_message", text=text)

    @rule(index=st.integers(0), label=st.one_of(st.none(), TEXT))
    def label(self, index: int, label: str | None) -> None:
        target = self.pick(index)
        if target is not None:
            self.added(self.session.append_label_change(target.id, label), kind="label")

    @rule(index=st.integers(0), text=st.one_of(st.none(), TEXT))
    def edit(self, index: int, text: str | None) -> None:
        target = self.pick(index)
        if target is None:
            return
        replacement = None if text is None else {"content": text}
        on_branch = target in self.model.path()
        editable = target.kind == "custom_message" or (target.kind == "message")
        if on_branch and editable:
            entry = self.session.append_context_edit(target.id, replacement)
            self.added(entry, kind="edit", target=target.id, replacement=text)
        elif not on_branch:
            with pytest.raises(EntryNotFoundError):
                self.session.append_context_edit(target.id, replacement)
        else:
            with pytest.raises(ValueError):
                self.session.append_context_edit(target.id, replacement)

    @rule(index=st.integers(0, 3), text=st.one_of(st.none(), TEXT))
    def edit_on_branch(self, index: int, text: str | None) -> None:
        """Edits of recent entries of the current branch, so targets are often edited twice."""
        editable = [n for n in self.model.path() if n.kind in ("message", "custom_message")]
        if editable:
            target = editable[-1 - index % len(editable)]
            replacement = None if text is None else {"content": text}
            entry = self.session.append_context_edit(target.id, replacement)
            self.added(entry, kind="edit", target=target.id, replacement=text)

    @rule(index=st.integers(0))
    def branch(self, index: int) -> None:
        target = self.pick(index)
        if target is not None:
            self.session.branch(target.id)
            self.model.leaf = target.id

    @rule()
    def reset_leaf(self) -> None:
        self.session.reset_leaf()
        self.model.leaf = None

    @rule(index=st.integers(0), to_root=st.booleans(), text=TEXT)
    def branch_with_summary(self, index: int, to_root: bool, text: str) -> None:
        target = None if to_root else self.pick(index)
        self.model.leaf = target.id if target else None
        self.added(self.session.branch_with_summary(self.model.leaf, text), kind="branch_summary",
                   text=text)

    @rule(index=st.integers(0), keep_none=st.booleans(), text=TEXT)
    def compact(self, index: int, keep_none: bool, text: str) -> None:
        path = self.model.path()
        first = None if keep_none or not path else path[index % len(path)].id
        entry = self.session.append_compaction(text, first, 10)
        self.added(entry, kind="compaction", text=text, first_kept=first or entry)

    @precondition(lambda self: any(n.role in ("user", "assistant") for n in self.model.nodes))
    @rule()
    def reopen(self) -> None:
        path = self.session.session_file
        self.session.close()
        self.session = SessionManager.open(path)
        self.model.leaf = self.model.nodes[-1].id  # the leaf comes back as the last entry

    @invariant()
    def same_leaf_branch_and_context(self) -> None:
        assert self.session.get_leaf_id() == self.model.leaf
        assert [e["id"] for e in self.session.get_raw_branch()] == [n.id for n in self.model.path()]
        assert [said(m) for m in self.session.build_session_context().raw_messages] == \
            self.model.context()

    @invariant()
    def tree_has_every_entry_once(self) -> None:
        seen: list[str] = []
        stack = list(self.session.get_tree())
        while stack:
            node = stack.pop()
            seen.append(node.id)
            assert [c.parent_id for c in node.children] == [node.id] * len(node.children)
            stack.extend(node.children)
        assert sorted(seen) == sorted(n.id for n in self.model.nodes)

    @invariant()
    def file_holds_what_memory_holds(self) -> None:
        path = self.session.session_file
        if path.exists():
            view = SessionManager.open(path, read_only=True)
            assert view.raw_entries() == self.session.raw_entries()
            assert view.diagnostics == []


TestSessionMachine = SessionMachine.TestCase
TestSessionMachine.settings = settings(max_examples=50, stateful_step_count=25, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])
