"""The system prompt: pi 1.6's section structure, rules by tool, prompt files, and the stored message."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pi_core import Tool, ToolResult
from pi_core.ai.types import SystemMessage
from pi_core.runtime.resources import ContextFile, Skill
from pi_core.runtime.system_prompt import (
    DocsLocation,
    SystemPromptOptions,
    build_system_prompt,
    default_docs_location,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runtime"


@dataclass
class FakeTool:
    name: str
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)


BUILTINS = [
    FakeTool("read", "Show a file", ["Prefer read over cat."]),
    FakeTool("bash", "Run a shell command", ["PI_* variables describe the session."]),
    FakeTool("edit", "Change parts of a file", ["One edit call per file."]),
    FakeTool("write", "Create or replace a file", ["Write only new files or full rewrites."]),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path]:
    agent, cwd, docs_root = tmp_path / "agent", tmp_path / "project", tmp_path / "pkg"
    for d in (agent, cwd / ".pi", docs_root / "docs", docs_root / "examples"):
        d.mkdir(parents=True)
    (docs_root / "README.md").write_text("readme")
    (docs_root / "docs" / "plugins.md").write_text("plugins")
    return {"agent": agent, "cwd": cwd, "docs": docs_root}


def options(env: dict[str, Path], **kw: object) -> SystemPromptOptions:
    root = env["docs"]
    base: dict[str, object] = {"cwd": env["cwd"], "agent_dir": env["agent"], "tools": BUILTINS,
                               "docs": DocsLocation(root / "README.md", root / "docs", root / "examples")}
    base.update(kw)
    return SystemPromptOptions(**base)  # type: ignore[arg-type]


def fixture_entry(name: str) -> tuple[str, dict]:
    raw = (FIXTURES / f"{name}_system_entry.jsonl").read_text().strip()
    return raw, json.loads(raw)


def test_default_prompt_has_pi_1_6_sections(env: dict[str, Path]) -> None:
    prompt = build_system_prompt(options(env))
    _, entry = fixture_entry("b_json_tools")
    assert list(prompt.sections) == list(entry["message"]["sections"]) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert prompt.sections["cwd"] == str(env["cwd"])
    assert prompt.warnings == ()


def test_text_is_untagged_preamble_then_tagged_sections(env: dict[str, Path]) -> None:
    prompt = build_system_prompt(options(env))
    parts = prompt.text.split("\n\n<")
    assert parts[0] == prompt.sections["preamble"] and not parts[0].startswith("<")
    assert [re.match(r"(\w+)>", p).group(1) for p in parts[1:]] == ["tools", "rules", "docs", "cwd"]  # type: ignore[union-attr]
    assert prompt.text.endswith(f"<cwd>\n{env['cwd']}\n</cwd>")
    assert prompt.rendered_sections["tools"] == f"<tools>\n{prompt.sections['tools']}\n</tools>"
    assert not re.search(r"\b\d{4}-\d{2}-\d{2}\b", prompt.text)  # no date line


def test_system_message_matches_pi_1_6_byte_for_byte(env: dict[str, Path]) -> None:
    for name in ("b_json_tools", "b2_all_tools"):
        raw, entry = fixture_entry(name)
        recorded = entry["message"]
        names = [t["name"] for t in recorded["toolsAdded"]]
        # pi 1.6 marks read/bash/edit/write for constrained sampling, not grep/find/ls
        tools = [{"name": t["name"], "description": t["description"], "parameters": t["parameters"],
                  **({} if "constrainedSampling" in t else {"constrainedSampling": None})}
                 for t in recorded["toolsAdded"]]
        prompt = build_system_prompt(options(env, tools=[FakeTool(n, "x") for n in names]))
        message = prompt.to_system_message(tools, timestamp=recorded["timestamp"]).to_json()
        assert list(message["sections"]) == list(recorded["sections"])
        message["sections"] = recorded["sections"]  # pi's prose is replaced by placeholders
        ours = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        assert raw[raw.index('"message":') + len('"message":'):-1] == ours


def test_system_message_text_is_the_prompt_text(env: dict[str, Path]) -> None:
    prompt = build_system_prompt(options(env))
    tool = Tool(name="hello", description="Say hello", parameters={"type": "object", "properties": {}},
                execute=lambda params, ctx: ToolResult.text("hi"))
    message = prompt.to_system_message([tool])
    assert message.content == "" and message.text() == prompt.text
    assert message.tools_added is not None and message.tools_added[0].to_json() == {
        "name": "hello", "description": "Say hello", "parameters": {"type": "object", "properties": {}},
        "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}
    again = SystemMessage.model_validate(json.loads(json.dumps(message.to_json())))
    assert again.text() == prompt.text
    tool.constrained_sampling = None  # type: ignore[attr-defined]  # a tool may opt out, as pi's grep does
    assert "constrainedSampling" not in prompt.to_system_message([tool]).to_json()["toolsAdded"][0]
    assert "toolsAdded" not in prompt.to_system_message([]).to_json()


def test_tools_lists_only_tools_with_a_snippet(env: dict[str, Path]) -> None:
    tools = [*BUILTINS[:2], FakeTool("hidden"), FakeTool("custom", "Does   custom\nthings")]
    section = build_system_prompt(options(env, tools=tools)).sections["tools"]
    listed, note = section.split("\n\n")
    assert listed.split("\n") == ["- read: Show a file", "- bash: Run a shell command", "- custom: Does custom things"]
    assert note and "hidden" not in section
    assert build_system_prompt(options(env, tools=[])).sections["tools"].startswith("(none)\n\n")


def rules(env: dict[str, Path], tools: list[FakeTool], **kw: object) -> list[str]:
    section = build_system_prompt(options(env, tools=tools, **kw)).sections["rules"]
    assert all(line.startswith("- ") for line in section.split("\n"))
    return [line[2:] for line in section.split("\n")]


def test_rules_follow_the_active_tools(env: dict[str, Path]) -> None:
    default = rules(env, BUILTINS)
    shell_rule = default[0]
    assert "bash" in shell_rule and "find" in shell_rule
    assert default[1:5] == ["Prefer read over cat.", "PI_* variables describe the session.",
                            "One edit call per file.", "Write only new files or full rewrites."]
    assert len(default) == 7  # plus the two closing rules
    with_search = rules(env, [*BUILTINS, FakeTool("grep", "Search"), FakeTool("ls", "List")])
    assert shell_rule not in with_search and with_search[:4] == default[1:5]
    assert rules(env, [FakeTool("read", "r")])[-2:] == default[-2:]
    assert shell_rule not in rules(env, [FakeTool("read", "r")])
    both = rules(env, [FakeTool("bash"), FakeTool("powershell")])
    assert "PowerShell" in both[0] and "bash" in both[0]


def test_rules_deduplicate_and_add_extra_guidelines(env: dict[str, Path]) -> None:
    tools = [FakeTool("a", "x", ["Same rule.", " Same rule. "]), FakeTool("b", None, ["Same rule.", "Other."])]
    got = rules(env, tools, guidelines=["Extra.", "Other."])
    assert got[:3] == ["Same rule.", "Other.", "Extra."] and len(got) == 5


def test_custom_base_prompt_sources(env: dict[str, Path]) -> None:
    agent, cwd = env["agent"], env["cwd"]
    text_prompt = build_system_prompt(options(env, custom_prompt="You review code."))
    assert list(text_prompt.sections) == ["preamble", "cwd"] and text_prompt.sections["preamble"] == "You review code."
    (cwd / "mine.md").write_text("From a file.")
    assert build_system_prompt(options(env, custom_prompt="mine.md")).sections["preamble"] == "From a file."
    (agent / "SYSTEM.md").write_text("Global system.")
    (cwd / ".pi" / "SYSTEM.md").write_text("\ufeffProject system.")
    assert build_system_prompt(options(env, trusted=True)).sections["preamble"] == "Project system."
    assert build_system_prompt(options(env, trusted=False)).sections["preamble"] == "Global system."
    assert build_system_prompt(options(env, trusted=True, custom_prompt="CLI wins")).sections["preamble"] == "CLI wins"


def test_missing_prompt_file_is_warned_about(env: dict[str, Path]) -> None:
    prompt = build_system_prompt(options(env, custom_prompt="typo.md"))
    assert prompt.sections["preamble"] == "typo.md"
    assert len(prompt.warnings) == 1 and "typo.md" in prompt.warnings[0]


def test_append_sources(env: dict[str, Path]) -> None:
    agent, cwd = env["agent"], env["cwd"]
    (cwd / "extra.txt").write_text("From file.")
    cli = build_system_prompt(options(env, append_prompt=["First.", "extra.txt"]))
    assert cli.sections["addendum"] == "First.\n\nFrom file."
    assert list(cli.sections)[-2:] == ["addendum", "cwd"]
    (agent / "APPEND_SYSTEM.md").write_text("Global append.")
    (cwd / ".pi" / "APPEND_SYSTEM.md").write_text("Project append.")
    assert build_system_prompt(options(env, trusted=True)).sections["addendum"] == "Project append."
    assert build_system_prompt(options(env, trusted=False)).sections["addendum"] == "Global append."
    assert build_system_prompt(options(env, append_prompt="Only.")).sections["addendum"] == "Only."


def test_project_context_section(env: dict[str, Path]) -> None:
    files = [ContextFile(Path("/g/AGENTS.md"), "Global rules.\n"), ContextFile(Path("/r/CLAUDE.md"), "Repo rules.")]
    section = build_system_prompt(options(env, context_files=files)).sections["project_context"]
    intro, first, second = section.split("\n\n")
    assert intro and not intro.startswith("<")
    assert first == '<project_instructions path="/g/AGENTS.md">\nGlobal rules.\n</project_instructions>'
    assert second == '<project_instructions path="/r/CLAUDE.md">\nRepo rules.\n</project_instructions>'


def make_skill(name: str, description: str, hidden: bool = False) -> Skill:
    path = Path(f"/skills/{name}/SKILL.md")
    return Skill(name=name, description=description, file_path=path, base_dir=path.parent, source="user",
                 disable_model_invocation=hidden)


def test_skills_section(env: dict[str, Path]) -> None:
    skills = [make_skill("pdf", "Fill <forms> & sign"), make_skill("secret", "Manual only", hidden=True)]
    prompt = build_system_prompt(options(env, skills=skills, context_files=[ContextFile(Path("/a"), "x")]))
    assert list(prompt.sections) == ["preamble", "tools", "rules", "docs", "project_context", "skills", "cwd"]
    section = prompt.sections["skills"]
    assert "read tool" in section
    listing = section[section.index("<available_skills>"):]
    assert listing == ("<available_skills>\n  <skill>\n    <name>pdf</name>\n"
                       "    <description>Fill &lt;forms&gt; &amp; sign</description>\n"
                       "    <location>/skills/pdf/SKILL.md</location>\n  </skill>\n</available_skills>")
    bash_only = build_system_prompt(options(env, skills=skills, tools=[FakeTool("bash", "b")])).sections["skills"]
    assert "bash" in bash_only and "read tool" not in bash_only
    assert "skills" not in build_system_prompt(options(env, skills=skills, tools=[FakeTool("edit", "e")])).sections
    only_hidden = [make_skill("secret", "x", hidden=True)]
    assert "skills" not in build_system_prompt(options(env, skills=only_hidden)).sections


def test_docs_section_names_the_paths_and_existing_topics(env: dict[str, Path]) -> None:
    root = env["docs"]
    section = build_system_prompt(options(env)).sections["docs"]
    for path in (root / "README.md", root / "docs", root / "examples"):
        assert str(path) in section
    assert "docs/plugins.md, examples/" in section and "docs/configuration.md" not in section
    (root / "docs" / "configuration.md").write_text("c")
    assert "docs/configuration.md" in build_system_prompt(options(env)).sections["docs"]
    assert "docs" not in build_system_prompt(options(env, docs=None)).sections


def test_default_docs_location_is_this_repository() -> None:
    location = default_docs_location()
    repo = Path(__file__).resolve().parents[2]
    assert location == DocsLocation(repo / "README.md", repo / "docs", repo / "examples")


def test_extra_sections_come_last_and_names_are_checked(env: dict[str, Path]) -> None:
    prompt = build_system_prompt(options(env, sections={"team_notes": "Be kind.", "empty": ""}))
    assert list(prompt.sections)[-2:] == ["cwd", "team_notes"]
    assert prompt.text.endswith("<team_notes>\nBe kind.\n</team_notes>")
    for bad in ("preamble", "Bad Name", "1x"):
        with pytest.raises(ValueError, match="section name"):
            build_system_prompt(options(env, sections={bad: "x"}))


def test_diff_against_stored_sections(env: dict[str, Path]) -> None:
    first = build_system_prompt(options(env))
    stored = first.to_system_message().sections
    assert first.diff(stored) is None
    second = build_system_prompt(options(env, tools=BUILTINS[:1], docs=None))
    patch = second.diff(stored)
    assert patch == {"tools": second.rendered_sections["tools"], "rules": second.rendered_sections["rules"],
                     "docs": None}
    assert first.diff(None) == first.rendered_sections
