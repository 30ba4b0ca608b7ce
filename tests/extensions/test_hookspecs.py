"""The hook contract is complete and documented: every spec has a mode, a docstring and a docs entry."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import hookspecs

REPO = Path(__file__).resolve().parents[2]
SPECS = {name: fn for name, fn in vars(hookspecs).items()
         if callable(fn) and hasattr(fn, f"{hookspecs.PROJECT}_spec")}

REQUIRED = {
    "register_tools", "register_commands", "register_providers", "register_toolsets", "register_flags",
    "context", "context_with_system", "before_provider_request", "before_tool_call", "after_tool_call",
    "session_before_compact", "session_compact", "session_before_tree", "session_tree", "input",
    "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
    "message_update", "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
    "model_select", "session_start", "session_before_switch", "session_before_fork", "session_shutdown",
}


def test_every_required_hook_is_specified_with_a_mode() -> None:
    assert REQUIRED <= set(SPECS)
    assert set(SPECS) == set(hookspecs.DISPATCH_MODES)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_docstring_names_every_parameter(name: str) -> None:
    fn = SPECS[name]
    doc = inspect.getdoc(fn) or ""
    summary = doc.splitlines()[0] if doc else ""
    assert summary.endswith(".") and len(summary) < 110, f"{name}: one-line summary"
    for param in inspect.signature(fn).parameters:
        assert f":param {param}:" in doc, f"{name}: :param {param}: missing"


PLUGINS_MD = REPO / "docs" / "plugins.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_hook_is_documented_for_plugin_authors(name: str) -> None:
    docs = PLUGINS_MD.read_text()
    signature = f"{name}({', '.join(inspect.signature(SPECS[name]).parameters)})"
    assert f"| `{signature}` | {hookspecs.DISPATCH_MODES[name]} |" in docs, f"the hook table lacks `{signature}`"
    assert f"**`{signature}`**" in docs, f"docs/plugins.md has no section **`{signature}`**"
    examples = [block for block in python_blocks(docs) if re.search(rf"^(async )?def {name}\(", block, re.M)]
    assert examples, f"docs/plugins.md has no example defining {name}(...)"
    assert any("@hookimpl" in block for block in examples), f"the example of {name} is not marked @hookimpl"


def test_every_python_example_in_the_plugin_docs_parses() -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # fragments may await at the top
    for number, block in enumerate(python_blocks(PLUGINS_MD.read_text()), 1):
        try:
            compile(block, f"docs/plugins.md python block {number}", "exec", flags=flags)
        except SyntaxError as exc:
            pytest.fail(f"{exc}\n{block}")


def test_every_context_and_ui_member_has_a_reference_row() -> None:
    from pi_core import UI, CommandContext, ExtensionContext

    docs = PLUGINS_MD.read_text()
    reference = docs[docs.index("### Every member, one line each"):]
    rows = set(re.findall(r"^\| `(\w+)", reference, re.M)) | set(re.findall(r" / `(\w+)\(", reference))
    members = {"cwd", "mode", "ui", "events"}  # set in ExtensionContext.__init__
    for cls in (ExtensionContext, CommandContext, UI):
        members |= {n for n in vars(cls) if not n.startswith("_")}
    assert sorted(members - rows) == [], "add a row (member | what it does | example) to docs/plugins.md"


def test_hook_events_with_decisions_apply_them() -> None:
    from pi_core import events

    for cls in (events.BeforeToolCallEvent, events.SessionBeforeCompactEvent, events.SessionBeforeTreeEvent,
                events.SessionBeforeSwitchEvent, events.SessionBeforeForkEvent, events.InputEvent):
        assert cls._apply is not events._Event._apply, cls.__name__
