"""`pi config` for the resources pi finds by itself: listed with their state, switched in their own settings file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pkg_helpers import run_pi, session_resources, skill, write

PY = sys.executable


def settings(path: Path) -> dict:
    return json.loads((path / "settings.json").read_text())


def test_config_lists_and_switches_user_skills_and_prompts(tmp_path: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "tidy")
    skill(agent_dir / "skills", "lint")
    write(agent_dir / "prompts" / "review.md", "Review $1\n")

    shown = run_pi(PY, tmp_path, "config")
    assert shown.returncode == 0, shown.stderr
    assert f"user ({agent_dir})" in shown.stdout
    assert "[x] skills     skills/tidy/SKILL.md  (tidy)" in shown.stdout
    assert "[x] prompts    prompts/review.md" in shown.stdout

    off = run_pi(PY, tmp_path, "config", "disable", "user", "tidy", "review")
    assert off.returncode == 0, off.stderr
    assert settings(agent_dir) == {"skills": ["-skills/tidy/SKILL.md"], "prompts": ["-prompts/review.md"]}
    assert "[ ] skills     skills/tidy/SKILL.md" in run_pi(PY, tmp_path, "config").stdout
    loaded = session_resources(PY, tmp_path)
    assert loaded["skills"] == ["lint"] and "review" not in loaded["prompts"]

    on = run_pi(PY, tmp_path, "config", "enable", "user", "skills/tidy/SKILL.md")
    assert on.returncode == 0, on.stderr
    assert settings(agent_dir)["skills"] == ["+skills/tidy/SKILL.md"]
    assert sorted(session_resources(PY, tmp_path)["skills"]) == ["lint", "tidy"]


def test_project_resources_are_switched_in_the_project_file_and_need_trust(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "repo"
    skill(project / ".pi" / "skills", "deploy")
    refused = run_pi(PY, project, "config", "-na", "disable", "project", "deploy")
    assert refused.returncode == 1 and "not trusted" in refused.stderr
    assert "deploy" not in run_pi(PY, project, "config", "-na").stdout  # untrusted project files are not read

    done = run_pi(PY, project, "config", "-a", "disable", "project", "deploy")
    assert done.returncode == 0, done.stderr
    assert settings(project / ".pi") == {"skills": ["-skills/deploy/SKILL.md"]}
    assert not (agent_dir / "settings.json").exists()
    assert "deploy" not in session_resources(PY, project, "-a")["skills"]


def test_unknown_local_resource_names_what_there_is(tmp_path: Path, agent_dir: Path) -> None:
    skill(agent_dir / "skills", "tidy")
    bad = run_pi(PY, tmp_path, "config", "disable", "user", "nope")
    assert bad.returncode == 1
    assert "no user resource 'nope' (there are: skills/tidy/SKILL.md)" in bad.stderr
    assert not (agent_dir / "settings.json").exists()


def test_extension_files_and_builtins_are_switched_and_stay_off(tmp_path: Path, agent_dir: Path) -> None:
    write(agent_dir / "extensions" / "hello.py", "from pi_core import hookimpl\n\n"
          "@hookimpl\ndef session_start(event, ctx):\n    pass\n")
    shown = run_pi(PY, tmp_path, "config")
    assert "[x] extensions extensions/hello.py" in shown.stdout
    assert "builtin\n" in shown.stdout and "[x] extensions mcp" in shown.stdout
    assert "global:hello" in run_pi(PY, tmp_path, "plugins").stdout

    assert run_pi(PY, tmp_path, "config", "disable", "user", "hello").returncode == 0
    assert run_pi(PY, tmp_path, "config", "disable", "builtin", "mcp").returncode == 0
    assert settings(agent_dir) == {"extensions": ["-extensions/hello.py", "-builtin:mcp"]}
    listed = run_pi(PY, tmp_path, "config").stdout
    assert "[ ] extensions extensions/hello.py" in listed and "[ ] extensions mcp" in listed
    plugins = run_pi(PY, tmp_path, "plugins").stdout
    assert "global:hello" not in plugins
    assert any(line.startswith("mcp ") and line.rstrip().endswith("disabled") for line in plugins.splitlines())


def test_a_project_switches_a_builtin_back_on_for_itself(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "repo"
    (project / ".pi").mkdir(parents=True)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:mcp"]}))
    done = run_pi(PY, project, "config", "-a", "-l", "enable", "builtin", "mcp")
    assert done.returncode == 0, done.stderr
    assert settings(project / ".pi") == {"extensions": ["+builtin:mcp"]}
    listed = run_pi(PY, project, "config", "-a").stdout
    user, here = listed.split("builtin (this project)\n")
    assert "[ ] extensions mcp" in user.split("builtin\n")[1]
    assert "[x] extensions mcp" in here
