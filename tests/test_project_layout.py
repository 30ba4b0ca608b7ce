"""The promises the repository makes about itself: CI runs the README's commands, layout is as designed."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(), re.S)[:2]


def test_ci_runs_the_readme_install_and_test_commands() -> None:
    install, test = readme_commands()
    ci = (REPO / ".ci" / "run").read_text()
    assert "pip install -e '.[test]'" in install and "pip install -e '.[test]'" in ci
    assert test.strip() == "python -m pytest -q" and "python -m pytest -q" in ci


def test_layout() -> None:
    for path in ("pyproject.toml", "README.md", "pi_core", "hookspecs", "plugins", "tests", "docs",
                 "examples", "benchmarks", ".ci/run"):
        assert (REPO / path).exists(), path


def test_built_in_plugins_import_only_the_public_api() -> None:
    offenders = []
    for path in (REPO / "plugins").rglob("*.py"):
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:from|import)\s+(pi_core[\w.]*)", line)
            if match and match.group(1) not in ("pi_core", "pi_core.ai"):
                offenders.append(f"{path.relative_to(REPO)}: {line.strip()}")
    assert offenders == []


def test_hookspecs_import_nothing_from_pi_core_at_runtime() -> None:
    source = (REPO / "hookspecs" / "__init__.py").read_text()
    runtime_part = source.split("if TYPE_CHECKING:")[0]
    assert "pi_core" not in re.sub(r'""".*?"""', "", runtime_part, flags=re.S)


def test_the_model_layer_never_imports_the_plugin_framework() -> None:
    """pi_core.ai sits at the bottom: it reads provider plugins through pi_core.entry_points, never through
    the plugin manager, and does not import pluggy at all (the plugin host adapts provider objects such as
    FauxProvider that only have a ``register_providers`` method)."""
    offenders = []
    for path in (REPO / "pi_core" / "ai").rglob("*.py"):
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:from|import)\s+([\w.]+)", line)
            if not match:
                continue
            target = match.group(1)
            if target.startswith(("..extensions", "..runtime", "..modes", "..session", "..agent", "hookspecs",
                                  "pi_core.extensions", "pi_core.runtime", "pluggy")):
                offenders.append(f"{path.relative_to(REPO)}: {line.strip()}")
            elif "HookimplMarker" in line or "HookspecMarker" in line:
                offenders.append(f"{path.relative_to(REPO)}: {line.strip()}")
    assert offenders == []
