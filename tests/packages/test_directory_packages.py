"""Directory packages (pi's layout) from a local path and from git: install, list, load, update, remove."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pkg_helpers import (
    commit_all,
    extension_file,
    git,
    git_repo,
    pi_package_dir,
    run_pi,
    session_resources,
    skill,
    theme_file,
    write,
)

PY = sys.executable


def settings(agent_dir: Path) -> dict:
    return json.loads((agent_dir / "settings.json").read_text())


def test_local_directory_package_contributes_skill_prompt_theme_and_extension(tmp_path: Path, agent_dir: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    project = tmp_path / "project"
    project.mkdir()
    before = session_resources(PY, project)
    assert "greet" not in before["skills"] and "shout" not in before["tools"]

    installed = run_pi(PY, project, "install", str(package))
    assert installed.returncode == 0, installed.stderr
    assert f"Installed {package}" in installed.stdout
    # recorded as pi records local paths: relative to the settings file's directory
    assert settings(agent_dir)["packages"] == [os.path.relpath(package, agent_dir)]

    after = session_resources(PY, project)
    assert "greet" in after["skills"] and "review" in after["prompts"]
    assert after["themes"] == ["sunset"] and "shout" in after["tools"]

    listed = run_pi(PY, project, "list")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[0] == "User packages:"
    assert str(package) in listed.stdout and "skills/greet/SKILL.md" in listed.stdout
    assert "prompts/review.md" in listed.stdout and "extensions: extensions/shout.py" in listed.stdout

    removed = run_pi(PY, project, "remove", str(package))
    assert removed.returncode == 0 and f"Removed {package}" in removed.stdout
    assert settings(agent_dir)["packages"] == []
    assert package.is_dir()  # a local package is referenced in place, never deleted
    assert "greet" not in session_resources(PY, project)["skills"]


def test_remove_of_an_unknown_source_fails_clearly(tmp_path: Path) -> None:
    result = run_pi(PY, tmp_path, "remove", str(tmp_path / "nothing"))
    assert result.returncode == 1
    assert "No matching package found" in result.stderr and "Traceback" not in result.stderr


def test_package_json_manifest_with_globs_and_exclusions(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    skill(package / "resources" / "skills", "kept")
    skill(package / "resources" / "skills", "legacy")
    skill(package / "skills", "conventional")  # ignored: the manifest replaces the convention
    write(package / "resources" / "prompts" / "a.md", "A $1\n")
    write(package / "resources" / "prompts" / "b.md", "B $1\n")
    write(package / "package.json", json.dumps({"name": "x", "pi": {
        "skills": ["./resources/skills", "!**/legacy"], "prompts": ["resources/prompts/a.md"]}}))
    assert run_pi(PY, tmp_path, "install", str(package)).returncode == 0
    resources = session_resources(PY, tmp_path)
    assert "kept" in resources["skills"]
    assert "legacy" not in resources["skills"] and "conventional" not in resources["skills"]
    assert "a" in resources["prompts"] and "b" not in resources["prompts"]


def test_package_json_manifest_names_extensions_and_themes(tmp_path: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg", theme="conventional", tool="shout")  # ignored: the manifest rules
    extension_file(package / "src" / "loud.py", "loud")
    theme_file(package / "resources" / "themes" / "night.json")
    theme_file(package / "resources" / "themes" / "draft.json")
    write(package / "package.json", json.dumps({"name": "x", "pi": {
        "extensions": ["./src/loud.py"], "themes": ["./resources/themes/*.json", "!**/draft.json"]}}))
    assert run_pi(PY, tmp_path, "install", str(package)).returncode == 0
    resources = session_resources(PY, tmp_path)
    assert "loud" in resources["tools"] and "shout" not in resources["tools"]
    assert resources["themes"] == ["night"]
    assert "greet" not in resources["skills"]  # a manifest without `skills` declares none


def test_config_disables_and_enables_one_resource_with_pi_filter_entries(tmp_path: Path, agent_dir: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    skill(package / "skills", "second")
    assert run_pi(PY, tmp_path, "install", str(package)).returncode == 0

    shown = run_pi(PY, tmp_path, "config")
    assert "[x] skills     skills/greet/SKILL.md" in shown.stdout

    off = run_pi(PY, tmp_path, "config", "disable", str(package), "greet")
    assert off.returncode == 0, off.stderr
    [entry] = settings(agent_dir)["packages"]
    assert entry == {"source": os.path.relpath(package, agent_dir), "skills": ["-skills/greet/SKILL.md"]}
    assert "[ ] skills     skills/greet/SKILL.md" in run_pi(PY, tmp_path, "config").stdout
    resources = session_resources(PY, tmp_path)
    assert "greet" not in resources["skills"] and "second" in resources["skills"]

    assert run_pi(PY, tmp_path, "config", "enable", str(package), "skills/greet/SKILL.md").returncode == 0
    assert settings(agent_dir)["packages"][0]["skills"] == ["+skills/greet/SKILL.md"]
    assert "greet" in session_resources(PY, tmp_path)["skills"]

    bad = run_pi(PY, tmp_path, "config", "disable", str(package), "nope")
    assert bad.returncode == 1 and "has no resource 'nope'" in bad.stderr


def test_settings_filter_object_narrows_a_package(tmp_path: Path, agent_dir: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"packages": [
        {"source": str(package), "skills": [], "extensions": ["!**/shout.py"]}]}))
    resources = session_resources(PY, tmp_path)
    assert "greet" not in resources["skills"] and "shout" not in resources["tools"]
    assert "review" in resources["prompts"]  # an omitted key loads everything of that kind
    assert "(filtered)" in run_pi(PY, tmp_path, "list").stdout


def test_own_skills_win_over_a_package_skill_of_the_same_name(tmp_path: Path, agent_dir: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    skill(agent_dir / "skills", "greet", "My own greeting.")
    assert run_pi(PY, tmp_path, "install", str(package)).returncode == 0
    code = ("import asyncio,sys\nfrom pi_core import create_agent_session\nfrom pi_core.ai import FauxProvider\n"
            "async def m():\n f=FauxProvider(); s=await create_agent_session(sys.argv[1], model=f.model, plugins=[f],"
            " session='memory')\n print([k.description for k in s.skills if k.name=='greet'])\n await s.close()\n"
            "asyncio.run(m())")
    import subprocess

    out = subprocess.run([PY, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.strip() == "['My own greeting.']"


def test_git_package_installs_updates_on_a_new_commit_and_removes(tmp_path: Path, agent_dir: Path) -> None:
    repo = git_repo(pi_package_dir(tmp_path / "repo", tool=None))
    source = f"git+file://{repo}"
    installed = run_pi(PY, tmp_path, "install", source)
    assert installed.returncode == 0, installed.stderr
    clone = agent_dir / "git" / "local" / str(repo).strip("/")
    assert (clone / "skills" / "greet" / "SKILL.md").is_file()
    assert settings(agent_dir)["packages"] == [source]
    assert "greet" in session_resources(PY, tmp_path)["skills"]

    unchanged = run_pi(PY, tmp_path, "update", "--extensions")
    assert unchanged.returncode == 0 and "Packages are up to date." in unchanged.stdout

    skill(repo / "skills", "farewell", "Says goodbye.")
    head = commit_all(repo, "add farewell")
    updated = run_pi(PY, tmp_path, "update", source)
    assert updated.returncode == 0, updated.stderr
    assert f"Updated {source}:" in updated.stdout and head[:7] in updated.stdout
    assert git(clone, "rev-parse", "HEAD") == head
    assert {"greet", "farewell"} <= set(session_resources(PY, tmp_path)["skills"])

    removed = run_pi(PY, tmp_path, "remove", source)
    assert removed.returncode == 0 and not clone.exists()
    assert not (agent_dir / "git" / "local").exists()  # empty parents pruned


def test_git_tag_is_pinned_and_a_branch_ref_follows_its_branch(tmp_path: Path, agent_dir: Path) -> None:
    repo = git_repo(pi_package_dir(tmp_path / "repo", tool=None))
    git(repo, "tag", "v1")
    git(repo, "branch", "stable")
    tagged, branch = f"git+file://{repo}@v1", f"git:file://{repo}@stable"
    assert run_pi(PY, tmp_path, "install", tagged).returncode == 0
    assert run_pi(PY, tmp_path, "install", "-l", branch).returncode == 0  # same repo, project scope
    first = git(repo, "rev-parse", "HEAD")

    skill(repo / "skills", "later", "Added later.")
    second = commit_all(repo, "later")
    git(repo, "branch", "-f", "stable", second)
    untrusted = run_pi(PY, tmp_path, "update", "--extensions")
    project_clone = tmp_path / ".pi" / "git" / "local" / str(repo).strip("/")
    assert git(project_clone, "rev-parse", "HEAD") == first  # .pi/settings.json now needs trust
    result = run_pi(PY, tmp_path, "-a", "update", "--extensions")
    assert untrusted.returncode == 0 and result.returncode == 0, result.stderr
    user_clone = agent_dir / "git" / "local" / str(repo).strip("/")
    assert git(user_clone, "rev-parse", "HEAD") == first  # the tag did not move
    assert git(project_clone, "rev-parse", "HEAD") == second  # the branch did
    assert (tmp_path / ".pi" / "git" / ".gitignore").read_text() == "*\n!.gitignore\n"
    assert "(project)" in result.stdout
    # the project entry wins over the user entry for the same repository
    assert "later" in session_resources(PY, tmp_path, "-a")["skills"]
    assert "later" not in session_resources(PY, tmp_path)["skills"]  # untrusted: only the user's (tagged) one


def test_dash_e_uses_a_git_package_for_one_run_without_settings(tmp_path: Path, agent_dir: Path) -> None:
    repo = git_repo(pi_package_dir(tmp_path / "repo"))
    source = f"git+file://{repo}"
    once = run_pi(PY, tmp_path, "-e", source, "list")
    assert once.returncode == 0, once.stderr
    assert "This run only (-e):" in once.stdout and "skills/greet/SKILL.md" in once.stdout
    assert not (agent_dir / "settings.json").exists()
    plugins = run_pi(PY, tmp_path, "-e", source, "plugins", "--json")
    assert any(json.loads(line)["tools"] == ["shout"] for line in plugins.stdout.splitlines())
    assert "shout" not in run_pi(PY, tmp_path, "plugins", "--json").stdout  # gone without -e

    skill(repo / "skills", "fresh", "Refreshed on the next run.")
    commit_all(repo, "fresh")
    assert "skills/fresh/SKILL.md" in run_pi(PY, tmp_path, "-e", source, "list").stdout
    offline = run_pi(PY, tmp_path, "-e", "git+file:///no/such/repo", "list")
    assert offline.returncode == 1 and "git clone" in offline.stderr and "Traceback" not in offline.stderr


def _project_settings(project: Path, entries: list) -> None:
    write(project / ".pi" / "settings.json", json.dumps({"packages": entries}))


def test_a_project_autoload_false_entry_filters_the_users_package(tmp_path: Path, agent_dir: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    skill(package / "skills", "second")
    project = tmp_path / "project"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"packages": [{"source": str(package), "prompts": [],
                                                                      "themes": []}]}))
    _project_settings(project, [{"source": os.path.relpath(package, project / ".pi"), "autoload": False,
                                 "skills": ["-skills/greet"], "prompts": ["+prompts/review.md"],
                                 "extensions": ["!**/shout.py"]}])

    here = session_resources(PY, project, "-a")
    assert "greet" not in here["skills"] and "second" in here["skills"]
    assert "review" in here["prompts"]  # switched on here although the user's own entry has `prompts: []`
    assert "shout" not in here["tools"]
    assert here["themes"] == []  # a kind the project names nothing of stays as the user has it
    untrusted = session_resources(PY, project)
    assert {"greet", "second"} <= set(untrusted["skills"]) and "shout" in untrusted["tools"]
    assert "review" not in untrusted["prompts"]

    listed = run_pi(PY, project, "-a", "list")
    assert listed.returncode == 0, listed.stdout  # one package, the user's: nothing is missing
    assert f"{package} (filtered by this project: autoload false)" in listed.stdout
    assert "Project packages:" not in listed.stdout

    # without `autoload: false` the project entry replaces the user's, filters and all
    _project_settings(project, [{"source": str(package), "skills": ["-skills/greet"]}])
    replaced = session_resources(PY, project, "-a")
    assert "greet" not in replaced["skills"] and "shout" in replaced["tools"] and "review" in replaced["prompts"]
    assert replaced["themes"] == ["sunset"]


def test_an_autoload_false_entry_without_a_user_entry_loads_only_what_it_names(tmp_path: Path) -> None:
    package = pi_package_dir(tmp_path / "pkg")
    skill(package / "skills", "second")
    project = tmp_path / "project"
    _project_settings(project, [{"source": "../../pkg", "autoload": False, "skills": ["greet"],
                                 "extensions": ["+extensions/shout.py"]}])
    resources = session_resources(PY, project, "-a")
    assert "greet" in resources["skills"] and "second" not in resources["skills"]
    assert "shout" in resources["tools"]
    assert "review" not in resources["prompts"] and resources["themes"] == []


def test_config_local_switches_a_user_package_for_one_project_with_an_autoload_false_entry(
        tmp_path: Path, agent_dir: Path) -> None:
    root = pi_package_dir(tmp_path / "repo", tool=None)
    skill(root / "skills", "second")
    repo = git_repo(root)
    source = f"git+file://{repo}"
    assert run_pi(PY, tmp_path, "install", source).returncode == 0
    project = tmp_path / "project"
    project.mkdir()

    off = run_pi(PY, project, "-a", "config", "-l", "disable", source, "greet")
    assert off.returncode == 0, off.stderr
    assert json.loads((project / ".pi" / "settings.json").read_text())["packages"] == [
        {"source": source, "autoload": False, "skills": ["-skills/greet/SKILL.md"]}]
    listed = run_pi(PY, project, "-a", "list")
    assert listed.returncode == 0, listed.stdout  # the user's clone serves the project: no project clone
    assert not (project / ".pi" / "git").exists()
    here = session_resources(PY, project, "-a")
    assert "greet" not in here["skills"] and "second" in here["skills"]
    assert "greet" in session_resources(PY, tmp_path)["skills"]  # other directories keep the user's choice

    removed = run_pi(PY, project, "-a", "remove", "-l", source)
    assert removed.returncode == 0, removed.stderr
    assert "Removed the project's filter" in removed.stdout
    assert json.loads((project / ".pi" / "settings.json").read_text())["packages"] == []
    assert settings(agent_dir)["packages"] == [source]
    assert (agent_dir / "git" / "local" / str(repo).strip("/") / "skills" / "greet").is_dir()
    assert "greet" in session_resources(PY, project, "-a")["skills"]
