"""The tree navigator on a branched session: the whole tree with its branches, filters, folding,
labels, and continuing from any entry (in a pseudo-terminal for the keys)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (running is a fixture)

from pi_core import SessionManager
from pi_core.modes.interactive.style import Palette
from pi_core.modes.interactive.tree_view import TreeState

pytestmark = pytest.mark.timeout(90)


def _message(entry_id: str, parent: str | None, role: str, text: str, second: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}],
                               "timestamp": 1_790_000_000_000 + second * 1000}
    if role == "assistant":
        message.update({"api": "x", "provider": "faux", "model": "faux-1", "stopReason": "stop",
                        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": f"2026-09-21T12:00:{second:02d}.000Z", "message": message}


def branched_session(path: Path, cwd: Path) -> Path:
    rows = [{"type": "session", "version": 3, "id": "01a20000-0000-7000-8000-0000000000aa",
             "timestamp": "2026-09-21T12:00:00.000Z", "cwd": str(cwd)},
            _message("u1", None, "user", "first question", 1),
            _message("a1", "u1", "assistant", "first answer", 2),
            _message("u2a", "a1", "user", "second question A", 3),
            _message("a2a", "u2a", "assistant", "answer A", 4),
            {"type": "model_change", "id": "m1", "parentId": "a1", "timestamp": "2026-09-21T12:00:05.000Z",
             "provider": "faux", "modelId": "faux-2"},
            _message("u2b", "m1", "user", "second question B", 6),
            _message("a2b", "u2b", "assistant", "answer B", 7)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tree_state_shows_branches_filters_and_folds(tmp_path: Path) -> None:
    manager = SessionManager.open(branched_session(tmp_path / "s.jsonl", tmp_path), read_only=True)
    state = TreeState(manager.get_tree(), manager.get_leaf_id())
    assert [(r.text, r.depth, r.on_path) for r in state.rows] == [
        ("user: first question", 0, True), ("assistant: first answer", 0, True),
        ("user: second question A", 1, False), ("assistant: answer A", 1, False),
        ("user: second question B", 1, True), ("assistant: answer B", 1, True)]  # the model change is hidden
    assert state.selected() == "a2b"  # the cursor starts on the current entry
    state.set_filter("all")
    assert "[model faux/faux-2]" in [r.text for r in state.rows]
    state.set_filter("user-only")
    assert [r.text for r in state.rows] == ["user: first question", "user: second question A",
                                            "user: second question B"]
    state.set_filter("user-only")  # the same filter again goes back to the default
    assert state.filter_mode == "default"
    state.cycle_filter(1)
    assert state.filter_mode == "no-tools"
    state.set_filter("default")
    state.cursor = 1
    state.fold_or_up()  # fold everything under the first answer
    assert [r.text for r in state.rows] == ["user: first question", "assistant: first answer"]
    assert state.rows[1].folded == 5
    state.unfold_or_down()
    assert len(state.rows) == 6
    state.set_query("answer a")
    assert [r.text for r in state.rows] == ["assistant: answer A"]
    rows = state.render(Palette(False), 80, 10)
    assert rows == ["›    assistant: answer A"]  # pointer, one branch indent, not on the current path
    manager.close()


def test_tree_navigator_continues_from_any_entry_and_sets_labels(running, tmp_path: Path) -> None:
    file = branched_session(tmp_path / "sessions" / "branched.jsonl", tmp_path / "project")
    app = running(session=str(file))
    app.type("/tree")
    app.wait_for("Session tree")
    app.wait_for("answer B ← current")
    app.send("L")  # Shift+L: label the selected entry
    app.wait_for("Label (empty removes it)")
    app.type("checkpoint")
    app.wait_for("[checkpoint] assistant: answer B")
    for _ in range(2):
        app.send("\x1b[A")  # up to "answer A"
        app.pump(0.1)
    app.send("\r")
    app.wait_for("Summarise the branch you are leaving?")
    app.send("\r")  # the first choice: No summary (pi's default)
    app.wait_for("Moved to the selected point")
    app.type("continue here")
    app.wait_for("echo: continue here")
    quit_app(app)
    records = [json.loads(line) for line in file.read_text().splitlines()]
    user = next(r for r in records if r.get("message", {}).get("role") == "user"
                and r["message"]["content"][0]["text"] == "continue here")
    by_id = {r.get("id"): r for r in records}
    parent = by_id[user["parentId"]]
    while parent.get("message", {}).get("role") == "system":  # the runtime records the system prompt it sent
        parent = by_id[parent["parentId"]]
    assert parent["id"] == "a2a"
    label = next(r for r in records if r["type"] == "label")
    assert label["targetId"] == "a2b" and label["label"] == "checkpoint"
    assert not any(r["type"] == "branch_summary" for r in records)


def test_choosing_a_user_message_puts_it_back_in_the_editor(running, tmp_path: Path) -> None:
    file = branched_session(tmp_path / "sessions" / "branched.jsonl", tmp_path / "project")
    app = running(session=str(file))
    app.type("/tree")
    app.wait_for("answer B ← current")
    app.send("\x15")  # Ctrl+U: only user messages
    app.wait_for("filter: user-only")
    app.send("\x1b[A")  # "second question A" (the cursor stays on the last row it could)
    app.wait_for(lambda: any(r.startswith("›") and "second question A" in r for r in app.display()))
    app.send("\r")
    app.wait_for("Summarise the branch you are leaving?")
    app.send("\r")
    app.wait_for("the message is in the editor")
    app.wait_for(lambda: any(r.startswith("› second question") for r in app.display()))
    app.send("\x15")
    quit_app(app)


def test_ctrl_x_copies_the_selected_entry_shift_t_shows_label_times_and_tree_keys_remap(running,
                                                                                       tmp_path: Path) -> None:
    file = branched_session(tmp_path / "sessions" / "branched.jsonl", tmp_path / "project")
    with file.open("a") as handle:
        handle.write(json.dumps({"type": "label", "id": "l1", "parentId": "a2b", "targetId": "a2a",
                                 "label": "keep", "timestamp": "2026-09-21T12:00:09.000Z"}) + "\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xclip").write_text(f"#!/bin/sh\ncat > {tmp_path / 'copied.txt'}\n")
    (bin_dir / "xclip").chmod(0o755)
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps({"app.tree.filter.userOnly": "ctrl+k"}))
    app = running(session=str(file), env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":0",
                                          "WAYLAND_DISPLAY": ""})
    app.type("/tree")
    app.wait_for("Session tree")
    for _ in range(6):  # down to the last answer (the label entry at the end is the current position)
        app.send("\x1b[B")
        app.pump(0.05)
    app.wait_for(lambda: any(r.startswith("›") and "answer B" in r for r in app.display()))
    app.send("\x18")  # Ctrl+X: the selected entry's text, the navigator stays
    app.wait_for("Copied selected message to clipboard")
    assert (tmp_path / "copied.txt").read_text() == "answer B"
    app.wait_for(lambda: "[keep] assistant: answer A" in "\n".join(app.display()))
    app.send("T")  # Shift+T: the labels' times
    app.wait_for(lambda: "[keep 2026-09-21T12:00] assistant: answer A" in "\n".join(app.display()))
    app.send("\x15")  # Ctrl+U is no filter now: keybindings.json moved user-only to Ctrl+K
    app.pump(0.3)
    assert "filter: default" in "\n".join(app.display())
    app.send("\x0b")  # Ctrl+K
    app.wait_for("filter: user-only")
    app.send("\x1b")
    app.wait_for(lambda: "Session tree" not in "\n".join(app.display()))
    quit_app(app)
