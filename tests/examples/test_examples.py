"""The examples in examples/ are product code: they load through the real plugin host and work."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from pi_core import ContextEvent, ToolContext, UserMessage, build_plugin_host
from pi_core.testing import PiTestSession, tool_call

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


def test_example_plugin_in_a_session(example_plugin, pi_session: PiTestSession, pi_project: Path) -> None:  # type: ignore[no-untyped-def]
    (pi_project / "essay.txt").write_text("one two  three\nfour")
    pi_session.script(tool_call("word_count", {"path": "essay.txt"}), "The essay has 4 words.")
    pi_session.start(plugins=[example_plugin])
    assert pi_session.prompt("How long is essay.txt?") == "The essay has 4 words."
    result = pi_session.assert_tool_result("word_count", contains="4 words", is_error=False)
    assert result.details["words"] == 4
    pi_session.assert_model_saw("4 words")  # the result went back to the model

    for command in ("rm -rf /", "git push --force origin main"):
        pi_session.script(tool_call("bash", {"command": command}), "Understood.")
        pi_session.prompt(f"run {command}")
    assert len([r for r in pi_session.tool_results("bash") if r.tool_call_id not in pi_session.executed]) == 2
    pi_session.assert_blocked("bash")
    pi_session.script(tool_call("bash", {"command": "ls -la"}), "Listed.")
    pi_session.prompt("list")
    pi_session.assert_not_blocked("bash")


def test_example_plugin_missing_file_is_a_clear_tool_error(example_plugin, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pi_core import ToolError

    with pytest.raises(ToolError, match="cannot read nope.txt"):
        asyncio.run(example_plugin.WORD_COUNT.run({"path": "nope.txt"}, ToolContext("c1", tmp_path)))


def test_project_extension_example_in_a_session(pi_session: PiTestSession, pi_project: Path) -> None:
    shutil.copytree(EXAMPLES / "project-extension" / ".pi", pi_project / ".pi")
    pi_session.script("Noted.")
    pi_session.prompt("hi")
    pi_session.assert_model_saw("[project note] Prefer small, reviewable changes.")


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
