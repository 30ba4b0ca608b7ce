"""`pi install` / `pi list` / `pi remove` against a throw-away virtual environment."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pi-example-plugin"


@pytest.fixture
def scratch_python(tmp_path: Path) -> Path:
    """A venv that sees this environment's packages (pi itself) but installs into its own directory."""
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    [own_site] = (target / "lib").glob("python3*/site-packages")
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    # an `import` line in a .pth file runs at start-up: addsitedir also processes the parent's .pth files
    (own_site / "parent_env.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in parents))
    return target / "bin" / "python"


def pi(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


@pytest.mark.parametrize("remove_word", ["remove", "uninstall"])  # pi's alias
def test_install_list_and_remove_the_example_plugin(scratch_python: Path, tmp_path: Path, remove_word: str) -> None:
    installed = pi(scratch_python, tmp_path, "install", "-e", str(EXAMPLE), "--", "--no-deps",
                   "--no-build-isolation")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    assert "example" in installed.stdout and "tools:word_count" in installed.stdout

    rows = [json.loads(line) for line in pi(scratch_python, tmp_path, "plugins", "--json").stdout.splitlines()]
    [row] = [r for r in rows if r["dist"] == "pi-example-plugin"]
    assert (row["name"], row["source"], row["tools"], row["toolsets"]) == ("example", "entrypoint", ["word_count"],
                                                                           ["writing"])
    listed = pi(scratch_python, tmp_path, "list")
    assert "pi-example-plugin 0.1.0" in listed.stdout

    removed = pi(scratch_python, tmp_path, remove_word, "pi-example-plugin")
    assert removed.returncode == 0
    assert "pi-example-plugin" not in pi(scratch_python, tmp_path, "plugins", "--json").stdout
    # this test's own environment never saw the plugin
    assert "pi-example-plugin" not in subprocess.run([sys.executable, "-m", "pi_core", "plugins", "--json"],
                                                     capture_output=True, text=True, cwd=tmp_path).stdout


def test_list_reports_required_plugins_that_are_missing(tmp_path: Path) -> None:
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text(json.dumps({"plugins": {"required": ["pi-not-installed"]}}))
    listed = subprocess.run([sys.executable, "-m", "pi_core", "list"], capture_output=True, text=True, cwd=tmp_path)
    assert listed.returncode == 1
    assert "missing: pi-not-installed" in listed.stdout


def test_failed_pip_is_reported(tmp_path: Path, scratch_python: Path) -> None:
    result = pi(scratch_python, tmp_path, "install", str(tmp_path / "no-such-project"))
    assert result.returncode == 1 and "pip failed" in result.stderr
