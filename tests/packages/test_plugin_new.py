"""`pi plugin new NAME` writes a package that installs and passes its own tests: in a bare venv with pi from
its wheel, and editable in a venv layered on this one (where a broken change makes them fail)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pkg_helpers import PIP_ENV, run_pi
from wheelhouse import FreshPi, bare_env

EXPECTED_FILES = {"pyproject.toml", "pi_hello/__init__.py", "pi_hello/skills/hello-shouting/SKILL.md",
                  "tests/test_pi_hello.py", "README.md", ".github/workflows/ci.yml", ".gitignore"}


def test_generated_plugin_passes_its_own_tests_in_a_bare_venv_from_local_wheels(tmp_path: Path,
                                                                                bare_pi: FreshPi) -> None:
    """What the generated CI does, offline: the plugin with its test extra into a venv that has only pi's wheel
    and what it declares (hatchling comes from the wheel folder through pip's build isolation), then its
    pytest. Installed as a wheel, not with the CI's `pip install -e`: hatchling's editable builds need
    `editables`, which no local wheel provides here. About 20 s, half of it building the venv (once per run)."""
    env = bare_env()
    dev_only = subprocess.run([str(bare_pi.python), "-c", "import hypothesis"], capture_output=True, env=env)
    assert dev_only.returncode == 1  # nothing of the dev environment is visible
    made = subprocess.run([str(bare_pi.script("pi")), "plugin", "new", "hello"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "pi-hello"
    assert {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()} == EXPECTED_FILES

    installed = bare_pi.pip("install", ".[test]", cwd=project)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # the console script, as the CI runs it: the project directory is not on sys.path, the installed copy runs
    tests = subprocess.run([str(bare_pi.script("pytest")), "-q", "-p", "no:cacheprovider"], cwd=project,
                           capture_output=True, text=True, env=env, timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "5 passed" in tests.stdout


def test_generated_plugin_passes_its_own_tests_editable_and_catches_a_broken_change(
        tmp_path: Path, scratch_python: Path) -> None:
    made = run_pi(sys.executable, tmp_path, "plugin", "new", "hello")
    assert made.returncode == 0, made.stderr
    project = tmp_path / "pi-hello"
    assert {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()} == EXPECTED_FILES
    assert "Created pi-hello" in made.stdout

    env = {**os.environ, **PIP_ENV}
    install = subprocess.run([str(scratch_python), "-m", "pip", "install", "--no-deps", "-e", str(project)],
                             capture_output=True, text=True, env=env, timeout=240)
    assert install.returncode == 0, install.stderr
    tests = subprocess.run([str(scratch_python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                           capture_output=True, text=True, env={k: v for k, v in env.items() if not k.startswith("PI_")},
                           timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "5 passed" in tests.stdout

    # a failing change is caught by the generated tests (they can fail)
    init = project / "pi_hello" / "__init__.py"
    init.write_text(init.read_text().replace("text.upper()", "text"))
    broken = subprocess.run([str(scratch_python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                            capture_output=True, text=True, env=env, timeout=300)
    assert broken.returncode == 1 and "1 failed" in broken.stdout


def test_plugin_new_refuses_a_non_empty_directory_and_bad_names(tmp_path: Path) -> None:
    (tmp_path / "pi-x").mkdir()
    (tmp_path / "pi-x" / "keep.txt").write_text("mine")
    refused = run_pi(sys.executable, tmp_path, "plugin", "new", "x")
    assert refused.returncode == 1 and "not empty" in refused.stderr
    assert (tmp_path / "pi-x" / "keep.txt").read_text() == "mine"
    bad = run_pi(sys.executable, tmp_path, "plugin", "new", "9 lives")
    assert bad.returncode == 1 and "not a usable package name" in bad.stderr
    into = run_pi(sys.executable, tmp_path, "plugin", "new", "pi-tools", str(tmp_path / "elsewhere"))
    assert into.returncode == 0 and (tmp_path / "elsewhere" / "pi_tools" / "__init__.py").is_file()
