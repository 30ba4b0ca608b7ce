"""`pi config` in a terminal: a checkbox list per scope; Space writes the settings file at once, Tab switches scope."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from ptyterm import PtyApp

pytestmark = pytest.mark.timeout(90)


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}\n---\nDo it.\n")


def _start(cwd: Path, agent_dir: Path, *args: str) -> PtyApp:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "TERM": "xterm-256color"}
    return PtyApp([sys.executable, "-m", "pi_core", "config", *args], env=env, cwd=cwd, columns=100, lines=30)


def test_space_switches_a_resource_in_its_own_file_and_tab_shows_the_project(tmp_path: Path) -> None:
    agent_dir, project = tmp_path / "agent", tmp_path / "repo"
    _skill(agent_dir / "skills", "tidy")
    _skill(agent_dir / "skills", "lint")
    _skill(project / ".pi" / "skills", "deploy")
    app = _start(project, agent_dir, "-a")
    try:
        app.wait_for("User resources")
        app.wait_for("[x] skills: skills/tidy/SKILL.md")
        app.send("\x1b[B")  # Down: lint is first (sorted), tidy second
        app.send(" ")
        app.wait_for("[ ] skills: skills/tidy/SKILL.md")
        assert json.loads((agent_dir / "settings.json").read_text()) == {"skills": ["-skills/tidy/SKILL.md"]}
        app.send("\t")
        app.wait_for("Project resources")
        app.wait_for("[x] skills: skills/deploy/SKILL.md")
        assert "tidy" not in app.text().split("Project resources")[-1]
        app.send(" ")
        app.wait_for("[ ] skills: skills/deploy/SKILL.md")
        assert json.loads((project / ".pi" / "settings.json").read_text()) == {"skills": ["-skills/deploy/SKILL.md"]}
        app.send("q")
        assert app.wait_exit() == 0
    finally:
        app.close()


def test_an_untrusted_project_shows_only_the_user_scope(tmp_path: Path) -> None:
    agent_dir, project = tmp_path / "agent", tmp_path / "repo"
    _skill(agent_dir / "skills", "tidy")
    _skill(project / ".pi" / "skills", "deploy")
    app = _start(project, agent_dir, "-na")
    try:
        app.wait_for("[x] skills: skills/tidy/SKILL.md")
        assert "tab switch scope" not in app.text()
        app.send("\t")
        app.settle()
        assert "Project resources" not in app.text() and "deploy" not in app.text()
        app.send("\x1b")
        assert app.wait_exit() == 0
    finally:
        app.close()
    assert not (project / ".pi" / "settings.json").exists()


def test_the_project_tab_switches_a_user_package_for_this_project_only(tmp_path: Path) -> None:
    agent_dir, project, package = tmp_path / "agent", tmp_path / "repo", tmp_path / "pkg"
    _skill(package / "skills", "greet")
    (package / "prompts").mkdir()
    (package / "prompts" / "review.md").write_text("Review $1\n")
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"packages": [str(package)]}))
    project.mkdir()
    app = _start(project, agent_dir, "-a", "-l")
    try:
        app.wait_for("Project resources")
        app.wait_for(f"{package}  (user settings)")
        app.wait_for("[x] skills: skills/greet/SKILL.md")
        app.send(" ")
        app.wait_for("[ ] skills: skills/greet/SKILL.md")
        # pi's form: the project entry filters the user's entry instead of replacing it
        assert json.loads((project / ".pi" / "settings.json").read_text()) == {"packages": [
            {"source": "../../pkg", "autoload": False, "skills": ["-skills/greet/SKILL.md"]}]}
        app.send("\t")
        app.wait_for("User resources")
        app.wait_for("[x] skills: skills/greet/SKILL.md")  # the user's own choice is unchanged
        assert "(user settings)" not in app.text().split("User resources")[-1]
        app.send("q")
        assert app.wait_exit() == 0
    finally:
        app.close()
    assert json.loads((agent_dir / "settings.json").read_text()) == {"packages": [str(package)]}
