"""Fixtures for the package tests: throw-away environments to install into."""

from __future__ import annotations

import site
import venv
from pathlib import Path

import pytest
from wheelhouse import FreshPi, fresh_pi


@pytest.fixture(scope="session")
def bare_pi(tmp_path_factory: pytest.TempPathFactory) -> FreshPi:
    """A venv with nothing of this one: pi from its wheel, its dependencies, pytest and pip (about 10 s to
    build, once per test run; tests may install into it but must leave pi working)."""
    return fresh_pi(tmp_path_factory.mktemp("bare-pi"))


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
