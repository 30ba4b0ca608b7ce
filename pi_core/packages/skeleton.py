"""``pi plugin new NAME``: a plugin package that works and passes its own tests as generated.

The skeleton has one tool, one hook (a ``before_tool_call`` gate), a skill shipped as a package
resource, tests written with :mod:`pi_core.testing`, a README that walks to publishing, and a GitHub
Actions workflow. No template engine: the files are written from the strings below.
"""

from __future__ import annotations

import re
from pathlib import Path

from .._version import __version__


class SkeletonError(Exception):
    """The name is unusable or the target directory is not empty."""


def names(name: str) -> tuple[str, str, str]:
    """``(distribution, module, short)`` for a user's name: ``hello`` → ``pi-hello``, ``pi_hello``, ``hello``."""
    raw = name.strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", raw):
        raise SkeletonError(f"{name!r} is not a usable package name (letters, digits, '-', '_', '.'; a letter first)")
    slug = re.sub(r"[-_.]+", "-", raw).lower()
    short = slug.removeprefix("pi-") or slug
    dist = slug if slug.startswith("pi-") else f"pi-{slug}"
    return dist, dist.replace("-", "_"), short


def files(name: str) -> dict[str, str]:
    """The skeleton's files (relative path → text)."""
    dist, module, short = names(name)
    tool = short.replace("-", "_") + "_shout"
    major_minor = ".".join(__version__.split(".")[:2])
    values = {"dist": dist, "module": module, "short": short, "tool": tool, "pi_version": major_minor}
    return {path.format(**values): text.format(**values) for path, text in _FILES.items()}


def write(name: str, target: Path) -> list[Path]:
    """Write the skeleton into ``target`` (created; it must be empty or absent); returns the files."""
    if target.exists() and any(target.iterdir()):
        raise SkeletonError(f"{target} exists and is not empty")
    written = []
    for rel, text in files(name).items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


_PYPROJECT = '''[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "A pi plugin: the {tool} tool and a guard for bash."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["pi-core-agent>={pi_version}"]
keywords = ["pi-package"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The plugin module: pi imports it and calls its @hookimpl functions.
[project.entry-points.pi]
{short} = "{module}"

# Resources shipped beside the code, found without importing the package.
[project.entry-points."pi.skills"]
skills = "{module}:skills"

[tool.hatch.build.targets.wheel]
packages = ["{module}"]

[tool.hatch.build]
# Editable installs put this directory on sys.path (no import hook needed).
dev-mode-dirs = ["."]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

_INIT = '''"""{dist}: a pi plugin with one tool (``{tool}``) and one hook (a guard on ``bash``)."""

from __future__ import annotations

from typing import Any

from pi_core import Block, Tool, ToolContext, ToolResult, hookimpl


async def shout(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    text = str(params["text"])
    return ToolResult.text(text.upper(), details={{"length": len(text)}})


SHOUT = Tool(
    name="{tool}",
    description="Repeat the given text in capital letters.",
    parameters={{"type": "object", "required": ["text"],
                "properties": {{"text": {{"type": "string", "description": "What to shout"}}}}}},
    execute=shout,
)


@hookimpl
def register_tools(register: Any) -> None:
    register(SHOUT)


@hookimpl
def before_tool_call(event: Any) -> Block | None:
    """Refuse bash commands that delete recursively from the root."""
    command = str(event.arguments.get("command", "")) if event.tool_name == "bash" else ""
    if "rm -rf /" in command:
        return Block("{dist} refuses to delete from the root")
    return None
'''

_SKILL = '''---
name: {short}-shouting
description: Shout text with the {tool} tool when the user asks for emphasis.
---

When the user wants something emphasised, call `{tool}` with the text and show its answer.
'''

_TEST = '''"""The plugin's tests, written with pi's kit (pi_core.testing): the fixtures need no conftest."""

from __future__ import annotations

from pi_core.testing import tool_call


def test_the_tool_answers_the_model(pi_session):
    pi_session.script(tool_call("{tool}", {{"text": "hello"}}), "I shouted it.")
    assert pi_session.prompt("Shout hello") == "I shouted it."
    pi_session.assert_tool_result("{tool}", contains="HELLO", is_error=False)
    pi_session.assert_model_saw("HELLO")  # the result went back to the model


def test_the_guard_blocks_deleting_the_root(pi_session):
    pi_session.script(tool_call("bash", {{"command": "rm -rf /"}}), "Understood.")
    pi_session.prompt("Clean the disk")
    pi_session.assert_blocked("bash", reason="refuses to delete from the root")


def test_other_commands_run(pi_session, pi_project):
    (pi_project / "notes.txt").write_text("hi")
    pi_session.script(tool_call("bash", {{"command": "ls"}}), "Listed.")
    pi_session.prompt("List the files")
    pi_session.assert_not_blocked("bash")
    pi_session.assert_tool_result("bash", contains="notes.txt")


def test_the_skill_is_offered(pi_session):
    pi_session.script("Ready.")
    pi_session.prompt("hi")
    pi_session.assert_model_saw("{short}-shouting")


def test_the_cli_loads_the_plugin(run_pi):
    result = run_pi("plugins", "--json")
    assert result.ok, result
    assert '"{tool}"' in result.stdout
'''

_README = '''# {dist}

A [pi](https://pypi.org/project/pi-core-agent/) plugin: the `{tool}` tool, a guard that blocks
`rm -rf /` in bash, and the `{short}-shouting` skill.

## Develop

```sh
python -m venv .venv && . .venv/bin/activate
pip install -e '.[test]'
pytest
```

The tests use pi's test kit (`pi_core.testing`): `pi_session` runs a real session with a scripted model,
`fake_provider_server` and `run_pi` run the real `pi` command against a local model server.

Try it in pi: `pi install -e .` (records it in `~/.pi/agent/settings.json`), then `pi list`.

## Publish

```sh
pip install build twine
python -m build
twine upload dist/*
```

Users then run `pi install pypi:{dist}`.
'''

_CI = '''name: tests
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.11", "3.12", "3.13"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python-version }}}}
      - run: pip install -e '.[test]'
      - run: pytest
'''

_GITIGNORE = '''__pycache__/
*.egg-info/
.venv/
dist/
build/
.pytest_cache/
'''

_FILES = {
    "pyproject.toml": _PYPROJECT,
    "{module}/__init__.py": _INIT,
    "{module}/skills/{short}-shouting/SKILL.md": _SKILL,
    "tests/test_{module}.py": _TEST,
    "README.md": _README,
    ".github/workflows/ci.yml": _CI,
    ".gitignore": _GITIGNORE,
}

__all__ = ["SkeletonError", "files", "names", "write"]
