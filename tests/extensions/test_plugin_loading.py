"""Building a plugin host: sources, order, isolation of broken plugins, trust, conflicts."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fakedist import make_dist

from pi_core import Tool, ToolResult, TurnStartEvent, build_plugin_host, hookimpl
from pi_core.extensions.discovery import scan_entry_points
from pi_core.extensions.dispatch import StrictPluginError
from pi_core.extensions.trust import TrustStore

TOOL_PLUGIN = """
from pi_core import hookimpl, Tool, ToolResult

@hookimpl
def register_tools(register):
    register(Tool(name={name!r}, description="test tool", parameters={{"type": "object"}},
                  execute=lambda params, ctx: ToolResult.text({name!r})))
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".pi" / "extensions").mkdir(parents=True)
    return root


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site directory on sys.path whose distributions discovery will find."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    scan_entry_points.cache_clear()
    yield directory
    scan_entry_points.cache_clear()


def names(host: Any, source: str) -> list[str]:
    return [r.name for r in host.records.values() if r.source == source]


# -- extension files ------------------------------------------------------------------------------


def test_broken_extension_next_to_a_good_one(project: Path, agent_dir: Path) -> None:
    ext = project / ".pi" / "extensions"
    write(ext / "aa_broken.py", "import does_not_exist_anywhere\n")
    write(ext / "bb_good.py", TOOL_PLUGIN.format(name="hello"))
    write(ext / "cc_exits.py", "raise SystemExit(2)\n")
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True)
    assert "hello" in host.tools and host.tools.plugin_of("hello") == "project:bb_good"
    failed = {r.name: r.error for r in host.failed()}
    assert "ModuleNotFoundError" in failed["project:aa_broken"]
    assert failed["project:cc_exits"] == "failed to import: SystemExit(2)"
    assert any("aa_broken" in d.message for d in host.diagnostics if d.level == "error")


def test_untrusted_project_is_skipped_with_a_notice_and_loaded_when_approved(project: Path, agent_dir: Path) -> None:
    write(project / ".pi" / "extensions" / "hello.py", TOOL_PLUGIN.format(name="hello"))
    host = build_plugin_host(project, agent_dir=agent_dir)
    assert "hello" not in host.tools
    [notice] = [d for d in host.diagnostics if d.level == "warning"]
    assert "not trusted" in notice.message and "--approve" in notice.message
    assert "hello" in build_plugin_host(project, agent_dir=agent_dir, approve=True).tools


def test_remembered_trust_decisions_use_pis_trust_json(project: Path, agent_dir: Path) -> None:
    write(project / ".pi" / "extensions" / "hello.py", TOOL_PLUGIN.format(name="hello"))
    TrustStore(agent_dir).set(project.parent, True)  # a parent decision applies to children
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project.parent.resolve()): True}
    assert "hello" in build_plugin_host(project, agent_dir=agent_dir).tools
    TrustStore(agent_dir).set(project, False)  # the nearest decision wins
    assert "hello" not in build_plugin_host(project, agent_dir=agent_dir).tools
    assert "hello" not in build_plugin_host(project, agent_dir=agent_dir, approve=False).tools


def test_trust_prompt_answer_is_remembered(project: Path, agent_dir: Path) -> None:
    write(project / ".pi" / "extensions" / "hello.py", TOOL_PLUGIN.format(name="hello"))
    asked: list[Path] = []

    def prompt(cwd: Path) -> tuple[bool, bool]:
        asked.append(cwd)
        return True, True

    assert "hello" in build_plugin_host(project, agent_dir=agent_dir, trust_prompt=prompt).tools
    assert "hello" in build_plugin_host(project, agent_dir=agent_dir, trust_prompt=prompt).tools
    assert asked == [project.resolve()]


def test_extension_modules_are_isolated(project: Path, agent_dir: Path) -> None:
    ext = project / ".pi" / "extensions"
    write(ext / "json.py", """
        from __future__ import annotations
        import json as real_json
        from dataclasses import InitVar, dataclass
        from pi_core import hookimpl

        @dataclass
        class Config:
            seed: InitVar[int]

        DUMPED = real_json.dumps({"ok": True})

        @hookimpl
        def turn_start(event):
            event.turn_index = 99
    """)
    path_before = list(sys.path)
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True)
    assert host.failed() == []
    assert sys.path == path_before
    assert json.dumps([1]) == "[1]"  # the real json module is untouched
    module = host.pm.get_plugin("project:json")
    assert module.__name__.startswith("pi_ext_") and sys.modules[module.__name__] is module
    assert module.DUMPED == '{"ok": true}'
    event = asyncio.run(host.dispatch.call("turn_start", TurnStartEvent()))
    assert event.turn_index == 99


def test_extension_package_and_cli_extension(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    write(project / ".pi" / "extensions" / "pkg" / "__init__.py", "from .impl import *\n")
    write(project / ".pi" / "extensions" / "pkg" / "impl.py", TOOL_PLUGIN.format(name="from_pkg"))
    cli_file = write(tmp_path / "elsewhere" / "tool.py", TOOL_PLUGIN.format(name="from_cli"))
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True, extension_paths=[cli_file])
    # the package re-exports a hookimpl from its own sub-module: that counts as the package's
    assert host.tools.plugin_of("from_pkg") == "project:pkg"
    assert "from_cli" in host.tools and host.tools.plugin_of("from_cli") == f"cli:{cli_file}"
    missing = build_plugin_host(project, agent_dir=agent_dir, extension_paths=[tmp_path / "nope.py"])
    assert any("nope.py" in d.message and "does not exist" in d.message for d in missing.diagnostics)


def test_unknown_hook_is_reported_with_a_suggestion(project: Path, agent_dir: Path) -> None:
    write(project / ".pi" / "extensions" / "typo.py", """
        from pi_core import hookimpl
        @hookimpl
        def befor_tool_call(event, ctx):
            pass
    """)
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True)
    [record] = host.failed()
    assert "unknown hook 'befor_tool_call'" in record.error and "before_tool_call" in record.error
    assert host.pm.get_plugin("project:typo") is None


def test_global_extensions_load_before_project_ones(project: Path, agent_dir: Path) -> None:
    calls_file = project / "calls.txt"
    source = """
        from pi_core import hookimpl
        @hookimpl
        def turn_start(event):
            with open({path!r}, "a") as f:
                f.write({label!r} + "\\n")
    """
    write(agent_dir / "extensions" / "zz_global.py", source.format(path=str(calls_file), label="global"))
    write(project / ".pi" / "extensions" / "aa_project.py", source.format(path=str(calls_file), label="project"))
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True)
    asyncio.run(host.dispatch.call("turn_start", TurnStartEvent()))
    assert calls_file.read_text().split() == ["global", "project"]
    assert build_plugin_host(project, agent_dir=agent_dir, approve=True, discover_extensions=False).records.keys() \
        .isdisjoint({"global:zz_global", "project:aa_project"})


# -- entry points ---------------------------------------------------------------------------------


def test_third_party_entry_points_load_and_a_broken_one_is_isolated(site: Path, agent_dir: Path,
                                                                     tmp_path: Path) -> None:
    make_dist(site, "pi-good", modules={"pi_good_plugin": TOOL_PLUGIN.format(name="good_tool")},
              entry_points={"good": "pi_good_plugin"}, version="2.3")
    make_dist(site, "pi-broken", modules={"pi_broken_plugin": "raise RuntimeError('Do not hide me!')\n"},
              entry_points={"broken": "pi_broken_plugin"})
    host = build_plugin_host(tmp_path, agent_dir=agent_dir)
    good = host.records["good"]
    assert (good.source, good.dist, good.version) == ("entrypoint", "pi-good", "2.3")
    assert host.tools.plugin_of("good_tool") == "good"
    assert "Do not hide me!" in host.records["broken"].error
    assert any("pi-broken" in d.message for d in host.diagnostics)


def test_no_plugins_and_disabled_plugins(site: Path, agent_dir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "pi-good", modules={"pi_good_plugin": TOOL_PLUGIN.format(name="good_tool")},
              entry_points={"good": "pi_good_plugin"})
    assert "good" not in build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False).records
    monkeypatch.setenv("PI_DISABLE_PLUGINS", "good, other")
    host = build_plugin_host(tmp_path, agent_dir=agent_dir)
    assert host.records["good"].disabled and "good_tool" not in host.tools


def test_strict_mode_makes_load_failures_fatal(site: Path, agent_dir: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site, "pi-broken", modules={"pi_broken_plugin": "raise RuntimeError('bad')\n"},
              entry_points={"broken": "pi_broken_plugin"})
    monkeypatch.setenv("PI_STRICT_PLUGINS", "1")
    with pytest.raises(StrictPluginError, match="broken"):
        build_plugin_host(tmp_path, agent_dir=agent_dir)


def test_duplicate_plugin_name_across_distributions(site: Path, agent_dir: Path, tmp_path: Path) -> None:
    make_dist(site, "pi-first", modules={"first_mod": TOOL_PLUGIN.format(name="t1")},
              entry_points={"same": "first_mod"})
    make_dist(site, "pi-second", modules={"second_mod": TOOL_PLUGIN.format(name="t2")},
              entry_points={"same": "second_mod"})
    host = build_plugin_host(tmp_path, agent_dir=agent_dir)
    assert host.records["same"].dist == "pi-first" and "t1" in host.tools and "t2" not in host.tools
    assert any("already taken" in d.message and "pi-second" in d.message for d in host.diagnostics)


# -- registration -----------------------------------------------------------------------------------


def make_tool(name: str) -> Tool:
    return Tool(name=name, description="", parameters={"type": "object"}, execute=lambda p, c: ToolResult())


class ToolPlugin:
    def __init__(self, name: str, tool: str, replaces: str | None = None) -> None:
        self.__name__, self.tool, self.replaces = name, tool, replaces

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(make_tool(self.tool), replaces=self.replaces)


def test_tool_name_conflict_names_both_plugins_and_first_wins(agent_dir: Path, tmp_path: Path) -> None:
    host = build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False,
                             plugins=[ToolPlugin("alpha", "search"), ToolPlugin("beta", "search")])
    assert host.tools.plugin_of("search") == "sdk:alpha"
    [conflict] = host.conflicts()
    assert (conflict.winner, conflict.loser) == ("sdk:alpha", "sdk:beta")
    assert "sdk:alpha" in str(conflict) and "sdk:beta" in str(conflict) and "replaces=" in str(conflict)


def test_explicit_replacement_is_allowed_and_recorded(agent_dir: Path, tmp_path: Path) -> None:
    host = build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False,
                             plugins=[ToolPlugin("alpha", "search"), ToolPlugin("beta", "search", replaces="search")])
    assert host.tools.plugin_of("search") == "sdk:beta"
    assert host.conflicts() == []
    [replacement] = host.replacements()
    assert (replacement.by, replacement.previous) == ("sdk:beta", "sdk:alpha")


def test_raising_during_registration_rolls_back_and_unregisters(agent_dir: Path, tmp_path: Path) -> None:
    class HalfBroken:
        __name__ = "half"

        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(make_tool("ok_so_far"))

        @hookimpl
        def register_commands(self, register: Any) -> None:
            raise SystemExit("nope")

        @hookimpl
        def turn_start(self, event: Any) -> None:
            raise AssertionError("an unregistered plugin must not be called")

    class WrongType:
        __name__ = "wrong"

        @hookimpl
        def register_tools(self, register: Any) -> None:
            register({"name": "dict-is-not-a-tool"})

    host = build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False, plugins=[HalfBroken(), WrongType()])
    assert "ok_so_far" not in host.tools
    assert "SystemExit('nope')" in host.records["sdk:half"].error
    assert "missing" in host.records["sdk:wrong"].error
    asyncio.run(host.dispatch.call("turn_start", TurnStartEvent()))
    assert host.hook_errors == []


def test_async_registration_handler_works_inside_a_running_loop(agent_dir: Path, tmp_path: Path) -> None:
    class AsyncRegister:
        __name__ = "asyncreg"

        @hookimpl
        async def register_tools(self, register: Any) -> None:
            await asyncio.sleep(0)
            register(make_tool("async_tool"))

    async def build() -> Any:
        return build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False, plugins=[AsyncRegister()])

    assert "async_tool" in asyncio.run(build()).tools


def test_describe_lists_what_each_plugin_registered(agent_dir: Path, tmp_path: Path) -> None:
    host = build_plugin_host(tmp_path, agent_dir=agent_dir, autoload=False, plugins=[ToolPlugin("alpha", "t")])
    [row] = [r for r in host.describe() if r["name"] == "sdk:alpha"]
    assert row["tools"] == ["t"] and row["hooks"] == ["register_tools"] and row["source"] == "sdk"
    assert set(row) >= {"name", "source", "dist", "version", "hooks", "tools", "commands", "providers",
                        "toolsets", "error"}


def test_a_hookimpl_imported_from_another_plugin_is_not_registered_twice(project: Path, agent_dir: Path) -> None:
    ext = project / ".pi" / "extensions"
    write(ext / "aa_base.py", TOOL_PLUGIN.format(name="base_tool"))
    write(ext / "bb_user.py", """
        import importlib, sys
        base = next(m for n, m in sys.modules.items() if n.endswith("_aa_base"))
        register_tools = base.register_tools   # imported marked function
    """)
    host = build_plugin_host(project, agent_dir=agent_dir, approve=True)
    assert host.conflicts() == [] and host.tools.plugin_of("base_tool") == "project:aa_base"
    assert host.records["project:bb_user"].hooks == []


@pytest.mark.parametrize(("answer", "loaded", "remembered"), [
    ("y", True, True), ("o", True, None), ("n", False, False), ("", False, None)])
def test_interactive_trust_question(project: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], answer: str, loaded: bool,
                                    remembered: bool | None) -> None:
    from pi_core.cli import ask_trust

    write(project / ".pi" / "extensions" / "hello.py", TOOL_PLUGIN.format(name="hello"))
    monkeypatch.setattr("builtins.input", lambda: answer)
    host = build_plugin_host(project, agent_dir=agent_dir, trust_prompt=ask_trust)
    assert ("hello" in host.tools) is loaded
    assert "Trust it?" in capsys.readouterr().err
    assert TrustStore(agent_dir).get(project) is remembered
