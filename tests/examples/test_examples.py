"""The examples in examples/ are product code: they load through the real plugin host and work."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from pi_core import BeforeToolCallEvent, ContextEvent, ToolContext, UserMessage, build_plugin_host

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def example_plugin(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(EXAMPLES / "pi-example-plugin"))
    import pi_example_plugin

    yield pi_example_plugin
    sys.modules.pop("pi_example_plugin", None)


def test_example_plugin_registers_and_gates(example_plugin, tmp_path: Path, agent_dir: Path) -> None:  # type: ignore[no-untyped-def]
    host = build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False, plugins=[example_plugin])
    assert host.failed() == [] and host.conflicts() == []
    assert host.toolsets.get("writing").tools == ["read", "write", "word_count"]

    (tmp_path / "essay.txt").write_text("one two  three\nfour")
    tool = host.tools.get("word_count")
    result = asyncio.run(tool.run({"path": "essay.txt"}, ToolContext("c1", tmp_path)))
    assert result.text_content() == "4 words" and result.details["words"] == 4

    for command, blocked in (("rm -rf /", True), ("git push --force origin main", True), ("ls -la", False)):
        event = asyncio.run(host.dispatch.call("before_tool_call", BeforeToolCallEvent("bash", "c", {"command": command})))
        assert (event.blocked is not None) is blocked, command


def test_example_plugin_missing_file_is_a_clear_tool_error(example_plugin, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pi_core import ToolError

    with pytest.raises(ToolError, match="cannot read nope.txt"):
        asyncio.run(example_plugin.WORD_COUNT.run({"path": "nope.txt"}, ToolContext("c1", tmp_path)))


def test_project_extension_example(tmp_path: Path, agent_dir: Path) -> None:
    shutil.copytree(EXAMPLES / "project-extension", tmp_path / "repo")
    repo = tmp_path / "repo"
    untrusted = build_plugin_host(repo, agent_dir=agent_dir)
    assert "note" not in untrusted.commands
    host = build_plugin_host(repo, agent_dir=agent_dir, approve=True)
    assert host.failed() == [] and "note" in host.commands
    history = [UserMessage(content="hi")]
    event = asyncio.run(host.dispatch.call("context", ContextEvent(messages=list(history))))
    assert [m.content for m in event.messages] == ["hi", "[project note] Prefer small, reviewable changes."]
    assert len(history) == 1
