"""pi's examples whose tools draw themselves, in a pseudo-terminal: ``todo`` (its calls and results drawn by the
tool's own renderers, ``/todos`` as a component closed with Escape; the tool and its state across resume and
forks are tested through ``pi --mode json/rpc`` in tests/examples/test_pi_examples.py) and ``minimal-mode``
(the built-in tools drawn as one line each until Ctrl+O expands them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (the fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
TODO = str(EXAMPLES / "todo.py")
pytestmark = pytest.mark.timeout(90)


def todo(action: str, **arguments: Any) -> list[Any]:
    return ["todo", {"action": action, **arguments}]


def test_todo_calls_are_drawn_by_the_tool_and_todos_opens_a_list(running) -> None:  # noqa: F811
    turns = [{"tools": [todo("add", text="Write tests"), todo("add", text="Fix the bug"), todo("toggle", id=1),
                        todo("list")]},
             {"text": "all noted"}]
    app = running(turns, extensions=[TODO], extra_tools=["todo"])
    app.type("plan my day")
    app.wait_for("all noted", 30)
    text = app.text()
    assert 'todo add "Write tests"' in text and "todo toggle #1" in text
    assert "✓ Added #2 Fix the bug" in text and "✓ Todo #1 completed" in text
    assert "2 todo(s):" in text and "✓ #1 Write tests" in text and "○ #2 Fix the bug" in text
    app.type("/todos")
    app.wait_for("Press Escape to close")
    screen = app.text()
    assert "─── Todos ───" in screen and "1/2 completed" in screen
    app.send("\x1b")
    app.wait_for(lambda: "Press Escape to close" not in "\n".join(app.display()))
    quit_app(app)


def test_minimal_mode_draws_the_built_in_tools_in_one_line_until_expanded(running) -> None:  # noqa: F811
    calls = [["read", {"path": "notes.txt", "offset": 2}], ["ls", {}], ["find", {"pattern": "*.txt"}],
             ["grep", {"pattern": "o", "path": "notes.txt"}], ["bash", {"command": "echo hidden-output"}]]
    turns = [{"tools": calls}, {"text": "looked around"},
             {"tools": [["grep", {"pattern": "o", "path": "notes.txt"}], ["bash", {"command": "echo shown-output"}]]},
             {"text": "looked again"}]
    app = running(turns, extensions=[str(EXAMPLES / "minimal_mode.py")], extra_tools=["find", "grep"])
    app.type("look")
    app.wait_for("looked around", 30)
    text = app.text()
    assert "read notes.txt:2" in text and "$ echo hidden-output" in text
    rows = [row.strip() for row in text.split("\n")]
    for call, count in (("ls .", "→ 1 entries"), ("find *.txt in .", "→ 1 files"), ("grep /o/ in notes.txt", "→ 2 matches")):
        assert rows[rows.index(call) + 1] == count, text   # the count under its call, no output
    assert "notes.txt:1: one" not in text and text.count("hidden-output") == 1   # the command, not its output
    app.settle(0.5)
    app.send("\x0f")                                           # Ctrl+O: expanded from now on
    app.wait_for("Tool output: expanded")
    app.type("again")
    app.wait_for("looked again", 30)
    text = app.text()
    assert "notes.txt:1: one" in text and "notes.txt:2: two" in text and text.count("shown-output") == 2
    quit_app(app)
