"""The pytest plugin of :mod:`pi_core.testing` (registered through the ``pytest11`` entry point).

Fixtures, each on the test's own ``tmp_path`` and never touching the developer's ``~/.pi``:

* ``pi_home`` / ``pi_agent_dir`` / ``pi_project`` — a home directory, pi's agent dir inside it (both
  also set as ``HOME`` and ``PI_CODING_AGENT_DIR`` for the test) and a project directory;
* ``pi_session`` — a :class:`pi_core.testing.PiTestSession` in ``pi_project`` with a scripted model;
* ``fake_provider_server`` — a started :class:`pi_core.testing.FakeProviderServer`, written into
  ``pi_agent_dir/models.json`` as the default model, so ``run_pi("-p", ...)`` talks to it;
* ``run_pi`` — a :class:`pi_core.testing.PiRunner`: the real ``pi`` command in a subprocess.

This module imports nothing from pi at import time: pytest loads it in every run of an environment
where pi is installed, and ``pi`` itself never imports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cli import PiRunner
    from .harness import PiTestSession
    from .server import FakeProviderServer


@pytest.fixture
def pi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "pi-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def pi_agent_dir(pi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent = pi_home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    for name in ("PI_STRICT_PLUGINS", "PI_DISABLE_PLUGINS", "PI_DISABLE_PLUGIN_AUTOLOAD", "PI_CODING_AGENT_SESSION_DIR"):
        monkeypatch.delenv(name, raising=False)
    return agent


@pytest.fixture
def pi_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project


@pytest.fixture
def pi_session(pi_project: Path, pi_agent_dir: Path) -> Iterator[PiTestSession]:
    from .harness import PiTestSession

    harness = PiTestSession(pi_project, pi_agent_dir)
    yield harness
    harness.close()


@pytest.fixture
def fake_provider_server(pi_agent_dir: Path) -> Iterator[FakeProviderServer]:
    from .server import FakeProviderServer

    with FakeProviderServer() as server:
        server.write_models_json(pi_agent_dir)
        yield server


@pytest.fixture
def run_pi(pi_project: Path, pi_agent_dir: Path, pi_home: Path) -> PiRunner:
    from .cli import PiRunner

    return PiRunner(pi_project, pi_agent_dir, pi_home)


def pytest_report_header(config: Any) -> str | None:
    return None


__all__ = ["fake_provider_server", "pi_agent_dir", "pi_home", "pi_project", "pi_session", "run_pi"]
