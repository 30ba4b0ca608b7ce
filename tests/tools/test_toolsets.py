"""The built-in toolsets and the tool entry points, seen through the plugin hooks."""

from __future__ import annotations

import importlib

from conftest import load_tool

from pi_core import Toolset

TOOLS = ("read", "write", "edit", "bash", "grep", "find", "ls")


def registered_toolsets() -> dict[str, Toolset]:
    module = importlib.import_module("plugins.tools.toolsets")
    found: list[Toolset] = []
    module.register_toolsets(lambda item, replaces=None: found.append(item))
    return {t.name: t for t in found}


def test_builtin_toolsets() -> None:
    sets = registered_toolsets()
    assert sets["default"].tools == ["read", "bash", "edit", "write"]
    assert sets["readonly"].tools == ["read", "grep", "find", "ls"]
    assert sorted(sets["all"].tools) == sorted(TOOLS)
    assert all(isinstance(t, Toolset) and t.description for t in sets.values())


def test_readonly_toolset_holds_only_tools_that_do_not_write() -> None:
    for name in registered_toolsets()["readonly"].tools:
        caps = load_tool(name).capabilities
        assert caps.reads and not caps.writes and not caps.executes


def test_every_tool_has_prompt_text_and_a_label() -> None:
    for name in TOOLS:
        tool = load_tool(name)
        assert tool.label == name and tool.prompt_snippet and "\n" not in tool.prompt_snippet
        assert tool.description and tool.parameters["type"] == "object"


def test_entry_points_name_the_tool_modules() -> None:
    from importlib.metadata import entry_points

    eps = {ep.name: ep.value for ep in entry_points(group="pi") if ep.value.startswith("plugins.tools.")}
    assert eps == {name: f"plugins.tools.{name}" for name in (*TOOLS, "toolsets")}
