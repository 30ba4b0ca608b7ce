"""``pi update`` with pi's custom self-update command: ``PI_SELF_UPDATE_COMMAND`` (split on whitespace) wins
over the global ``selfUpdateCommand`` setting (an argv array); ``{packageName}``, ``{version}`` and
``{installSpec}`` are filled in, and a failing command fails the update. And which of pi and the packages
each spelling of ``pi update`` updates (``--all``, ``--self --extensions``, ``self --extensions``, none),
with pi's messages for flags that contradict each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_run import pi

RECORD = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(' '.join(sys.argv[2:]))"


def test_the_environment_variable_wins_over_the_setting(tmp_path: Path) -> None:
    agent, out_env, out_setting = tmp_path / "agent", tmp_path / "env.txt", tmp_path / "setting.txt"
    agent.mkdir()
    (tmp_path / "record.py").write_text(RECORD)
    (agent / "settings.json").write_text(json.dumps({"selfUpdateCommand": [
        sys.executable, str(tmp_path / "record.py"), str(out_setting), "upgrade {packageName} as", "{installSpec}"]}))
    by_setting = pi(tmp_path, agent, "update", "--self")
    assert by_setting.returncode == 0, by_setting.stderr
    assert out_setting.read_text() == "upgrade pi-core-agent as pi-core-agent"
    assert "Updated pi-core-agent with:" in by_setting.stdout

    command = f"{sys.executable} {tmp_path / 'record.py'} {out_env} use {{packageName}}@{{version}}"
    by_env = pi(tmp_path, agent, "update", env={"PI_SELF_UPDATE_COMMAND": command})
    assert by_env.returncode == 0, by_env.stderr
    assert out_env.read_text() == "use pi-core-agent@latest"


def test_a_failing_command_fails_the_update(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    failed = pi(tmp_path, agent, "update", "--self",
                env={"PI_SELF_UPDATE_COMMAND": f"{sys.executable} -c raise(SystemExit(3))"})
    assert failed.returncode == 1 and "self-update command failed (exit 3)" in failed.stderr
    assert "Traceback" not in failed.stderr


GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True)
    return done.stdout.strip()


def _commit_prompt(repo: Path, name: str) -> str:
    (repo / "prompts").mkdir(parents=True, exist_ok=True)
    (repo / "prompts" / f"{name}.md").write_text(f"{name} $1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", name)
    return _git(repo, "rev-parse", "HEAD")


def _installed_git_package(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    """``(agent dir, the user's clone, the source, the repository)`` after `pi install` of a git package."""
    agent, repo = tmp_path / "agent", tmp_path / "repo"
    agent.mkdir()
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit_prompt(repo, "first")
    source = f"git+file://{repo}"
    installed = pi(tmp_path, agent, "install", source, env=GIT_ENV)
    assert installed.returncode == 0, installed.stderr
    return agent, agent / "git" / "local" / str(repo).strip("/"), source, repo


def _recorder(tmp_path: Path) -> tuple[dict[str, str], Path]:
    (tmp_path / "record.py").write_text(RECORD)
    out = tmp_path / "self.txt"
    return {**GIT_ENV, "PI_SELF_UPDATE_COMMAND": f"{sys.executable} {tmp_path / 'record.py'} {out} {{packageName}}"}, out


@pytest.mark.parametrize("spelling", [["--all"], ["--self", "--extensions"], ["self", "--extensions"]])
def test_all_updates_the_packages_then_pi(tmp_path: Path, spelling: list[str]) -> None:
    agent, clone, source, repo = _installed_git_package(tmp_path)
    head = _commit_prompt(repo, "second")
    env, out = _recorder(tmp_path)
    done = pi(tmp_path, agent, "update", *spelling, env=env)
    assert done.returncode == 0, done.stderr
    assert _git(clone, "rev-parse", "HEAD") == head
    assert out.read_text() == "pi-core-agent"
    # pi's order: the packages first, then pi itself
    assert done.stdout.index(f"Updated {source}: ") < done.stdout.index("Updated pi-core-agent with:")


def test_update_without_a_target_updates_pi_only_and_says_the_packages_were_skipped(tmp_path: Path) -> None:
    agent, clone, _, repo = _installed_git_package(tmp_path)
    before = _git(clone, "rev-parse", "HEAD")
    _commit_prompt(repo, "second")
    env, out = _recorder(tmp_path)
    done = pi(tmp_path, agent, "update", env=env)
    assert done.returncode == 0, done.stderr
    assert "Extensions are skipped. Run pi update --extensions to update extensions." in done.stdout
    assert out.read_text() == "pi-core-agent" and _git(clone, "rev-parse", "HEAD") == before
    forced = pi(tmp_path, agent, "update", "--force", env=env)  # a configured command runs either way
    assert forced.returncode == 0 and "Updated pi-core-agent with:" in forced.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--all", "--extensions"], "--all cannot be combined with --self, --extensions, --models, or --extension"),
    (["--all", "pypi:x"], "--all cannot be combined with a positional source"),
    (["--extension", "pypi:x", "--self"], "--extension cannot be combined with --self, --extensions, or --all"),
    (["pypi:x", "--extension", "pypi:y"], "--extension cannot be combined with a positional source"),
    (["pypi:x", "--self"], "positional update targets cannot be combined with --self, --extensions, or --all"),
    (["--models", "--self"], "--models cannot be combined with --self, --extensions, --all, or --extension"),
])
def test_contradicting_update_flags_are_refused_with_pis_messages(tmp_path: Path, args: list[str],
                                                                  message: str) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    env, out = _recorder(tmp_path)
    done = pi(tmp_path, agent, "update", *args, env=env)
    assert done.returncode == 1 and f"pi: {message}" in done.stderr
    assert not out.exists()  # nothing ran
