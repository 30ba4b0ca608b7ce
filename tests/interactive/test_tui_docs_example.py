"""The complete example of docs/tui.md, taken from the page as it is: it type-checks with ``mypy --strict`` and
works in a pseudo-terminal (``/pick``, ↓, Enter: the choice shows as a widget)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (the fixture)

DOC = Path(__file__).resolve().parents[2] / "docs" / "tui.md"
pytestmark = pytest.mark.timeout(300)


def complete_example() -> str:
    section = DOC.read_text().split("## A complete example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/tui.md has no code block under 'A complete example'"
    return match.group(1)


def test_the_docs_example_type_checks(tmp_path: Path) -> None:
    plugin = tmp_path / "pick_plugin.py"
    plugin.write_text(complete_example())
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                           "--no-error-summary", str(plugin)], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_docs_example_picks_a_fruit(running, tmp_path: Path) -> None:  # noqa: F811
    plugin = tmp_path / "pick_plugin.py"
    plugin.write_text(complete_example())
    app = running(extensions=[str(plugin)])
    app.type("/pick")
    app.wait_for("Pick a fruit")
    assert any(row.startswith("› apple") for row in app.display())
    app.send("\x1b[B")
    app.wait_for(lambda: any(row.startswith("› banana") for row in app.display()))
    app.send("\r")
    app.wait_for("last pick: banana")
    quit_app(app)
