"""A project's ``packages`` list: reported when missing, installed only when asked, only when trusted."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pkg_helpers import git_repo, pi_package_dir, run_pi, session_resources

PY = sys.executable


def project_with_packages(tmp_path: Path) -> tuple[Path, str]:
    repo = git_repo(pi_package_dir(tmp_path / "repo", skill_name="team-style", tool=None))
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    source = f"git+file://{repo}"
    (project / ".pi" / "settings.json").write_text(json.dumps({"packages": [source, "../no-such-dir"]}))
    return project, source


def test_missing_project_packages_are_reported_never_installed_silently(tmp_path: Path) -> None:
    project, source = project_with_packages(tmp_path)
    clone = project / ".pi" / "git" / "local" / str(tmp_path / "repo").strip("/")

    untrusted = run_pi(PY, project, "plugins")
    assert "not installed" not in untrusted.stderr  # an untrusted project's settings are not read
    listing = run_pi(PY, project, "list")
    assert "not trusted" in listing.stdout and source not in listing.stdout

    trusted = run_pi(PY, project, "-a", "plugins")
    assert f"package {source} (project settings) is not installed" in trusted.stderr
    assert "package ../no-such-dir (project settings) is not installed" in trusted.stderr
    assert not clone.exists()  # reported, not installed

    listed = run_pi(PY, project, "-a", "list")
    assert listed.returncode == 1
    assert listed.stdout.startswith("Project packages:") and "2 package(s) missing" in listed.stdout

    refused = run_pi(PY, project, "install")
    assert refused.returncode == 0 and not clone.exists()  # untrusted: the project's list is not acted on
    installed = run_pi(PY, project, "-a", "install")
    assert installed.returncode == 1  # one of the two cannot be installed: said so, exit 1
    assert f"Installed {source}" in installed.stdout and "path does not exist" in installed.stderr
    assert clone.is_dir()
    assert "team-style" in session_resources(PY, project, "-a")["skills"]
    assert "team-style" not in session_resources(PY, project)["skills"]


def test_the_terminal_start_offers_to_install_missing_packages(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
    from ptyterm import PtyApp

    project, source = project_with_packages(tmp_path)
    settings = json.loads((project / ".pi" / "settings.json").read_text())
    (project / ".pi" / "settings.json").write_text(json.dumps({"packages": settings["packages"][:1]}))
    clone = project / ".pi" / "git" / "local" / str(tmp_path / "repo").strip("/")
    errors = tmp_path / "stderr.txt"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "TERM": "xterm-256color"}
    app = PtyApp([PY, "-m", "pi_core", "-a"], env=env, cwd=project, stderr=errors)
    try:
        deadline = time.monotonic() + 30
        while "Install them now" not in errors.read_text() and time.monotonic() < deadline:
            app.pump(0.1)
        assert f"1 package(s) that are not installed: {source} (project)" in errors.read_text()
        assert not clone.exists()  # nothing before the answer
        app.send("y\r")
        while f"installed {source}" not in errors.read_text() and time.monotonic() < deadline:
            app.pump(0.1)
        assert clone.is_dir()
    finally:
        app.close()


def test_approve_after_the_command_word_counts(tmp_path: Path) -> None:
    project, source = project_with_packages(tmp_path)
    listed = run_pi(PY, project, "list", "-a")
    assert listed.returncode == 1 and listed.stdout.startswith("Project packages:")
    extra = git_repo(pi_package_dir(tmp_path / "extra", skill_name="extra-skill", tool=None))
    added = run_pi(PY, project, "install", f"git+file://{extra}", "-l", "-a")
    assert added.returncode == 0, added.stderr
    assert f"git+file://{extra}" in json.loads((project / ".pi" / "settings.json").read_text())["packages"]
    one = run_pi(PY, project, "update", "--extension", f"git+file://{extra}", "-a")
    assert one.returncode == 0 and "Packages are up to date." in one.stdout


def test_no_approve_after_the_command_word_ignores_a_trusted_project(tmp_path: Path) -> None:
    project, source = project_with_packages(tmp_path)
    clone = project / ".pi" / "git" / "local" / str(tmp_path / "repo").strip("/")
    assert run_pi(PY, project, "trust").returncode == 0
    ignored = run_pi(PY, project, "install", "-na")  # pi's flag, after the command word as well as before
    assert ignored.returncode == 0, ignored.stderr
    assert "Nothing to install" in ignored.stdout and not clone.exists()
    refused = run_pi(PY, project, "install", "-l", f"git+file://{tmp_path / 'repo'}", "--no-approve")
    assert refused.returncode == 1 and "is not trusted" in refused.stderr
    skipped = run_pi(PY, project, "update", "--extensions", "-na")
    assert skipped.returncode == 0 and "Packages are up to date." in skipped.stdout
    installed = run_pi(PY, project, "install")  # the saved trust applies without the flag
    assert installed.returncode == 1 and clone.is_dir()  # ../no-such-dir cannot be installed
