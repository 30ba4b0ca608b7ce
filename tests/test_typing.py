"""The public API is visible to type checkers: ``mypy --strict`` passes on all of ``examples/`` and on a plugin
that uses every public name of ``pi_core``, ``pi_core.ai`` and ``pi_core.tui`` (its decision types, events,
contexts and components)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pi_core
import pi_core.ai
import pi_core.tui

REPO = Path(__file__).resolve().parents[1]
EVERY_NAME = REPO / "tests" / "fixtures" / "typing" / "every_public_name.py"


def test_the_typing_plugin_uses_every_public_name() -> None:
    tree = ast.parse(EVERY_NAME.read_text())
    imported = {(node.module, alias.name) for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    missing = [n for n in pi_core.__all__ if ("pi_core", n) not in imported]
    missing += [n for n in pi_core.ai.__all__ if n not in pi_core.__all__ and ("pi_core.ai", n) not in imported]
    missing += [n for n in pi_core.tui.__all__ if ("pi_core.tui", n) not in imported]
    assert missing == [], f"add these public names to {EVERY_NAME.name}: {missing}"


def test_mypy_strict_passes_on_the_examples_and_every_public_name(tmp_path: Path) -> None:
    # mypy skips hidden directories, so the project extension's .pi/extensions is named explicitly
    targets = [str(EVERY_NAME), str(REPO / "examples"), str(REPO / "examples" / "project-extension" / ".pi" / "extensions")]
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                           "--no-error-summary", *targets], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_public_module_documents_each_name() -> None:
    doc = pi_core.__doc__ or ""
    undocumented = [n for n in pi_core.__all__ if n != "__version__" and f"* ``{n}`` — " not in doc]
    assert undocumented == [], f"describe these names in pi_core/__init__.py's docstring: {undocumented}"
    # a dataclass without a docstring gets `Name(field: type = ...)` as its __doc__: that is no description
    signatures = [n for n in pi_core.__all__ if f"* ``{n}`` — {n}(" in doc]
    assert signatures == [], f"write a real docstring (not the generated signature) for: {signatures}"


def test_public_classes_have_docstrings_of_their_own() -> None:
    generated = [f"{module.__name__}.{n}" for module in (pi_core, pi_core.ai, pi_core.tui) for n in module.__all__
                 if inspect.isclass(obj := getattr(module, n)) and (obj.__doc__ or "").startswith(f"{n}(")]
    assert generated == [], f"give these classes a docstring (dataclasses generate a signature): {generated}"
