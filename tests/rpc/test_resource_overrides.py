"""Top-level ``skills``/``prompts`` entries switch discovered resources off and on (pi's ``-path``, ``+path``, ``!glob``)."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_client import RpcProcess


def skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: the {name} skill\n---\nDo {name}.\n")


def prompt(root: Path, name: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.md").write_text(f"---\ndescription: {name} template\n---\n{name} $1\n")


def command_names(cwd: Path, *args: str) -> set[str]:
    with RpcProcess(cwd, *args) as pi:
        listed, _ = pi.call({"type": "get_commands"})
    return {c["name"] for c in listed["data"]["commands"]}


def test_user_settings_switch_off_their_own_discovered_resources(tmp_path: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "tidy")
    skill(agent_dir / "skills", "lint")
    prompt(agent_dir / "prompts", "review")
    prompt(agent_dir / "prompts", "scratch-a")
    prompt(agent_dir / "prompts", "scratch-b")
    (agent_dir / "settings.json").write_text(json.dumps({
        "skills": ["-skills/tidy/SKILL.md"],
        "prompts": ["!prompts/scratch-*.md", "+prompts/scratch-b.md"],
    }))
    names = command_names(tmp_path)
    assert "skill:lint" in names and "skill:tidy" not in names
    assert {"review", "scratch-b"} <= names and "scratch-a" not in names


def test_a_switched_off_skill_leaves_its_name_to_the_next_one(tmp_path: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "tidy")
    other = tmp_path / "home" / ".agents" / "skills"
    skill(other, "tidy")
    # "-skills/tidy" would name both (each is relative to its own root, as in pi): the absolute path names one
    (agent_dir / "settings.json").write_text(json.dumps({"skills": [f"-{agent_dir}/skills/tidy"]}))
    with RpcProcess(tmp_path, env={"HOME": str(tmp_path / "home")}) as pi:
        listed, _ = pi.call({"type": "get_commands"})
    paths = [c["sourceInfo"]["path"] for c in listed["data"]["commands"] if c["name"] == "skill:tidy"]
    assert paths == [str(other / "tidy" / "SKILL.md")]


def test_project_entries_filter_project_resources_relative_to_dot_pi(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "repo"
    skill(project / ".pi" / "skills", "deploy")
    prompt(project / ".pi" / "prompts", "ship")
    prompt(project / ".pi" / "prompts", "keep")
    skill(agent_dir / "skills", "deploy-user")
    (project / ".pi" / "settings.json").write_text(json.dumps({
        "skills": ["-skills/deploy/SKILL.md", "-skills/deploy-user/SKILL.md"],  # the second is not the project's
        "prompts": ["!ship.md", "!prompts/none-*"],
    }))
    names = command_names(project, "--approve")
    assert "skill:deploy" not in names
    assert "skill:deploy-user" in names  # a project file filters only project resources, as in pi
    assert "keep" in names and "ship" not in names  # a glob also matches the bare file name, as in pi
