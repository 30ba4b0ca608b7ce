"""Context files, skills and prompt templates: discovery, precedence, diagnostics and expansion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_core.runtime.resources import (
    FrontMatterError,
    ResourceError,
    expand_prompt_template,
    expand_skill_command,
    load_context_files,
    load_prompt_templates,
    load_skills,
    parse_command_args,
    parse_front_matter,
    substitute_args,
)


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str | None, description: str | None = "Does a thing.", extra: str = "", body: str = "Body.") -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra)
    return "\n".join([*lines, "---", body, ""])


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    repo = tmp_path / "work" / "repo"
    cwd = repo / "pkg" / "sub"
    for d in (agent, cwd, repo / ".git"):
        d.mkdir(parents=True)
    return {"home": home, "agent": agent, "repo": repo, "cwd": cwd, "tmp": tmp_path}


# --- front matter ---------------------------------------------------------------------------------


def test_front_matter_subset_values() -> None:
    text = (
        "---\n"
        "name: my-skill\n"
        "description: >\n  Folded text\n  over lines.\n"
        "tags: [a, \"b, c\", 3]\n"
        "allowed-tools:\n- read\n- bash\n"
        "metadata:\n  author: me\n  version: 1.5\n"
        "disable-model-invocation: true\n"
        "quoted: \"a\\tb \\u00e9\"\n"
        "single: 'it''s'\n"
        "literal: |\n  one\n    two\n"
        "nothing:\n"
        "# a comment\n"
        "url: https://example.org/x # note\n"
        "---\n\nThe body.\n"
    )
    front, body = parse_front_matter(text)
    assert front == {
        "name": "my-skill", "description": "Folded text over lines.\n", "tags": ["a", "b, c", 3],
        "allowed-tools": ["read", "bash"], "metadata": {"author": "me", "version": 1.5},
        "disable-model-invocation": True, "quoted": "a\tb é", "single": "it's", "literal": "one\n  two\n",
        "nothing": None, "url": "https://example.org/x",
    }
    assert body == "The body."


def test_no_or_unclosed_front_matter_is_all_body() -> None:
    assert parse_front_matter("# Title\n\ntext\n") == ({}, "# Title\n\ntext")
    assert parse_front_matter("---\nname: x\nno end") == ({}, "---\nname: x\nno end")
    assert parse_front_matter("\ufeff---\r\nname: x\r\n---\r\nbody\r\n") == ({"name": "x"}, "body")


@pytest.mark.parametrize("bad, where", [
    ("name: a\nname: b", "line 3: duplicate key"),
    ("just words", "line 2: expected 'key: value'"),
    ("  indented: x", "line 2: unexpected indentation"),
    ('q: "never closed', "line 2: unterminated"),
    ("l: [a, b", "line 2: [...] is not closed"),
])
def test_front_matter_errors_name_the_line(bad: str, where: str) -> None:
    with pytest.raises(FrontMatterError, match=where.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        parse_front_matter(f"---\n{bad}\n---\nbody")


# --- context files --------------------------------------------------------------------------------


def test_context_files_global_first_then_root_down_to_cwd(layout: dict[str, Path]) -> None:
    agent, repo, cwd, tmp = layout["agent"], layout["repo"], layout["cwd"], layout["tmp"]
    put(agent / "AGENTS.md", "global")
    put(tmp / "work" / "CLAUDE.md", "work claude")
    put(repo / "AGENTS.md", "repo agents")
    put(repo / "CLAUDE.md", "repo claude is shadowed")
    put(cwd / "AGENTS.MD", "cwd upper")
    (repo / "pkg" / "AGENTS.md").mkdir()  # a directory of that name is not a context file
    result = load_context_files(cwd, agent)
    assert [(f.path, f.content) for f in result] == [
        (agent / "AGENTS.md", "global"), (tmp / "work" / "CLAUDE.md", "work claude"),
        (repo / "AGENTS.md", "repo agents"), (cwd / "AGENTS.MD", "cwd upper"),
    ]
    assert result.diagnostics == [] and result.files == result.items and len(result) == 4
    assert load_context_files(cwd, agent, no_context_files=True).files == []


def test_context_file_reached_twice_is_listed_once(layout: dict[str, Path]) -> None:
    agent = layout["agent"]
    put(agent / "AGENTS.md", "global")
    assert [f.path for f in load_context_files(agent, agent)] == [agent / "AGENTS.md"]


def test_override_file_wins_in_its_directory(layout: dict[str, Path]) -> None:
    cwd = layout["cwd"]
    put(cwd / "AGENTS.md", "normal")
    put(cwd / "AGENTS.override.md", "override")
    assert [f.content for f in load_context_files(cwd, layout["agent"])] == ["override"]


def test_undecodable_context_file_is_kept_and_reported(layout: dict[str, Path]) -> None:
    cwd = layout["cwd"]
    (cwd / "AGENTS.md").write_bytes(b"ok \xff\xfe bytes")
    result = load_context_files(cwd, layout["agent"])
    assert result.items[0].content == "ok \ufffd\ufffd bytes"
    assert "UTF-8" in str(result.diagnostics[0]) and str(cwd / "AGENTS.md") in str(result.diagnostics[0])


# --- skills ---------------------------------------------------------------------------------------


def names(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.name for s in result]


def test_skill_discovery_order_and_sources(layout: dict[str, Path]) -> None:
    home, agent, repo, cwd = layout["home"], layout["agent"], layout["repo"], layout["cwd"]
    put(cwd / ".pi" / "skills" / "alpha" / "SKILL.md", skill_md("alpha"))
    put(repo / "pkg" / ".agents" / "skills" / "beta" / "SKILL.md", skill_md("beta"))
    put(repo / ".agents" / "skills" / "gamma" / "SKILL.md", skill_md("gamma"))
    put(layout["tmp"] / "work" / ".agents" / "skills" / "above-git" / "SKILL.md", skill_md("above-git"))
    put(agent / "skills" / "delta" / "SKILL.md", skill_md("delta"))
    put(home / ".agents" / "skills" / "epsilon" / "SKILL.md", skill_md("epsilon"))
    extra = put(layout["tmp"] / "extra" / "zeta.md", skill_md("zeta"))
    result = load_skills(cwd, agent, trusted=True, extra_paths=[extra], home=home)
    assert names(result) == ["zeta", "alpha", "beta", "gamma", "delta", "epsilon"]
    assert result.skills == result.items
    assert [s.source for s in result] == ["path", "project", "project", "project", "user", "user"]
    alpha = result.items[1]
    assert alpha.file_path == cwd / ".pi" / "skills" / "alpha" / "SKILL.md"
    assert alpha.base_dir == alpha.file_path.parent and alpha.description == "Does a thing."
    assert result.diagnostics == []


def test_project_skills_need_trust(layout: dict[str, Path]) -> None:
    home, agent, repo, cwd = layout["home"], layout["agent"], layout["repo"], layout["cwd"]
    put(cwd / ".pi" / "skills" / "alpha" / "SKILL.md", skill_md("alpha"))
    put(repo / ".agents" / "skills" / "gamma" / "SKILL.md", skill_md("gamma"))
    put(agent / "skills" / "delta" / "SKILL.md", skill_md("delta"))
    assert names(load_skills(cwd, agent, trusted=False, home=home)) == ["delta"]


def test_skill_directory_rules(layout: dict[str, Path]) -> None:
    home, agent = layout["home"], layout["agent"]
    skills = agent / "skills"
    put(skills / "root-skill.md", skill_md(None, "A root file with a description."))
    put(skills / "notes.md", "# just notes, no front matter\n")
    put(skills / "leaf" / "SKILL.md", skill_md(None))
    put(skills / "leaf" / "inner" / "SKILL.md", skill_md("never-seen"))  # below a leaf: not searched
    put(skills / "group" / "deep" / "nested" / "SKILL.md", skill_md("nested"))
    put(skills / "group" / "loose.md", skill_md("loose"))  # .md below the root is not a skill
    put(skills / ".hidden" / "SKILL.md", skill_md("hidden"))
    put(skills / "node_modules" / "dep" / "SKILL.md", skill_md("dep"))
    put(skills / ".gitignore", "build/\n*.tmp.md\n")
    put(skills / "build" / "gen" / "SKILL.md", skill_md("generated"))
    put(skills / "scratch.tmp.md", skill_md("scratch"))
    put(skills / "group" / ".ignore", "/private\n")
    put(skills / "group" / "private" / "SKILL.md", skill_md("private"))
    put(home / ".agents" / "skills" / "root.md", skill_md("agents-root"))  # root .md ignored here
    result = load_skills(layout["cwd"], agent, trusted=True, home=home)
    assert sorted(names(result)) == ["leaf", "nested", "root-skill"]
    assert result.diagnostics == []


def test_skill_symlinks_followed_and_same_file_counted_once(layout: dict[str, Path]) -> None:
    agent, tmp = layout["agent"], layout["tmp"]
    target = put(tmp / "elsewhere" / "linked" / "SKILL.md", skill_md("linked")).parent
    (agent / "skills").mkdir()
    os.symlink(target, agent / "skills" / "linked")
    os.symlink(agent / "skills", agent / "skills" / "loop")  # a loop must not hang the walk
    os.symlink(tmp / "missing", agent / "skills" / "broken")
    result = load_skills(layout["cwd"], agent, trusted=True, extra_paths=[target], home=layout["home"])
    assert names(result) == ["linked"] and result.diagnostics == []


def test_skill_diagnostics(layout: dict[str, Path]) -> None:
    agent, cwd = layout["agent"], layout["cwd"]
    skills = agent / "skills"
    put(skills / "no-desc" / "SKILL.md", skill_md("no-desc", None))
    put(skills / "bad-yaml" / "SKILL.md", '---\nname: x\ndescription: "never closed\n---\n')
    put(skills / "Bad_Name" / "SKILL.md", skill_md(None))
    put(skills / "long" / "SKILL.md", skill_md("long", "x" * 1100))
    first = put(cwd / ".pi" / "skills" / "dup" / "SKILL.md", skill_md("shared"))
    second = put(skills / "dup" / "SKILL.md", skill_md("shared"))
    result = load_skills(cwd, agent, trusted=True, extra_paths=[cwd / "nope"], home=layout["home"])
    assert sorted(names(result)) == ["Bad_Name", "long", "shared"]
    assert next(s for s in result if s.name == "shared").file_path == first
    by_path = {d.path: d for d in result.diagnostics}
    assert "description" in by_path[skills / "no-desc" / "SKILL.md"].message
    assert "front matter line 3: unterminated" in by_path[skills / "bad-yaml" / "SKILL.md"].message
    assert "lowercase" in by_path[skills / "Bad_Name" / "SKILL.md"].message
    assert "1024" in by_path[skills / "long" / "SKILL.md"].message
    assert "does not exist" in by_path[cwd / "nope"].message
    collision = by_path[second]
    assert collision.kind == "collision" and collision.winner == first
    assert all(d.kind == "warning" for d in result.diagnostics if d is not collision)


def test_disable_model_invocation_flag(layout: dict[str, Path]) -> None:
    agent = layout["agent"]
    put(agent / "skills" / "manual" / "SKILL.md", skill_md("manual", extra="disable-model-invocation: true"))
    (skill,) = load_skills(layout["cwd"], agent, trusted=True, home=layout["home"]).items
    assert skill.disable_model_invocation is True
    assert skill.front_matter["disable-model-invocation"] is True


def test_expand_skill_command(layout: dict[str, Path]) -> None:
    agent = layout["agent"]
    path = put(agent / "skills" / "review" / "SKILL.md", skill_md("review", body="Step 1.\nStep 2."))
    skills = load_skills(layout["cwd"], agent, trusted=True, home=layout["home"]).items
    expanded = expand_skill_command("/skill:review  focus on tests ", skills)
    assert expanded is not None
    head, rest = expanded.split("\n", 1)
    assert head == f'<skill name="review" location="{path}">'
    assert str(path.parent) in rest.split("\n", 1)[0]
    assert rest.endswith("\n\nStep 1.\nStep 2.\n</skill>\n\nfocus on tests")
    assert expand_skill_command("/skill:review", skills).endswith("</skill>")  # type: ignore[union-attr]
    assert expand_skill_command("/skill:unknown x", skills) is None
    assert expand_skill_command("review this", skills) is None
    path.unlink()
    with pytest.raises(ResourceError, match="review"):
        expand_skill_command("/skill:review", skills)


# --- prompt templates -----------------------------------------------------------------------------


def test_template_discovery_order_and_fields(layout: dict[str, Path]) -> None:
    agent, cwd, tmp = layout["agent"], layout["cwd"], layout["tmp"]
    put(agent / "prompts" / "review.md", "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1\n")
    put(agent / "prompts" / "fix.md", "user fix")
    put(agent / "prompts" / "nested" / "deep.md", "not loaded: no recursion")
    put(cwd / ".pi" / "prompts" / "fix.md", "\n\nFix the bug described as: " + "x" * 80)
    put(tmp / "cli" / "fix.md", "cli fix")
    put(agent / "prompts" / "notes.txt", "not markdown")
    result = load_prompt_templates(cwd, agent, trusted=True, extra_paths=[tmp / "cli" / "fix.md"])
    assert [(t.name, t.source) for t in result.templates] == [("fix", "path"), ("review", "user")]
    review = result.items[1]
    assert (review.description, review.argument_hint, review.content) == ("Review code", "<file>", "Review $1")
    collisions = [d for d in result.diagnostics if d.kind == "collision"]
    assert [d.path for d in collisions] == [cwd / ".pi" / "prompts" / "fix.md", agent / "prompts" / "fix.md"]
    project = load_prompt_templates(cwd, agent, trusted=True).items[0]
    assert project.source == "project" and project.description == "Fix the bug described as: " + "x" * 34 + "..."
    untrusted = load_prompt_templates(cwd, agent, trusted=False)
    assert [(t.name, t.source) for t in untrusted] == [("fix", "user"), ("review", "user")]


def test_bad_template_files_are_reported(layout: dict[str, Path]) -> None:
    agent = layout["agent"]
    put(agent / "prompts" / "broken.md", "---\ndescription: 'open\n---\nbody")
    put(agent / "prompts" / "fine.md", "fine")
    result = load_prompt_templates(layout["cwd"], agent, trusted=True, extra_paths=["missing-dir"])
    assert [t.name for t in result] == ["fine"]
    messages = [str(d) for d in result.diagnostics]
    assert any("broken.md" in m and "front matter" in m for m in messages)
    assert any("missing-dir" in m and "does not exist" in m for m in messages)


@pytest.mark.parametrize("text, expected", [
    ("", []),
    ("a  b\tc\nd", ["a", "b", "c", "d"]),
    ('"two words" \'single quoted\'', ["two words", "single quoted"]),
    ("don't stop", ["don't", "stop"]),
    ('"" x', ["", "x"]),
    (r'"say \"hi\""', ['say "hi"']),
    ('ab"cd ef"', ['ab"cd', 'ef"']),
    ('"ab"cd', ["abcd"]),
    ('say "unclosed words', ["say", '"unclosed', "words"]),
])
def test_parse_command_args(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


def test_substitute_args() -> None:
    template = "[$1][$2][$3][$@][$ARGUMENTS][${@:2}][${@:2:1}][${@:0}][${3:-none}][${1:-x}][${@:-all}][$0][$10]"
    assert substitute_args(template, ["a", "b"]) == "[a][b][][a b][a b][b][b][a b][none][a][a b][][]"
    assert substitute_args("${@:-nothing given}", []) == "nothing given"
    # inserted values are not expanded again
    assert substitute_args("$1 $2", ["$2", "x"]) == "$2 x"


def test_expand_prompt_template(layout: dict[str, Path]) -> None:
    agent = layout["agent"]
    put(agent / "prompts" / "review.md", "Review $1 focusing on ${@:2}.")
    templates = load_prompt_templates(layout["cwd"], agent, trusted=True).items
    assert expand_prompt_template('/review src/app.py "error handling" tests', templates) == \
        "Review src/app.py focusing on error handling tests."
    assert expand_prompt_template("/review", templates) == "Review  focusing on ."
    assert expand_prompt_template("/reviewer x", templates) is None
    assert expand_prompt_template("review x", templates) is None
    assert expand_prompt_template(" /review x", templates) is None
