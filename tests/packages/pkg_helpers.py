"""Helpers for the package tests: git repositories, package folders, pi runs and what a session loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

#: pip must never reach an index in tests; build isolation off (``0`` means off for this variable).
PIP_ENV = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_BUILD_ISOLATION": "0",
           "PI_PACKAGE_INSTALLER": "pip", "GIT_CONFIG_GLOBAL": "/dev/null"}


def run_pi(python: Path | str, cwd: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **PIP_ENV, **(env or {})})


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def git_repo(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def skill(root: Path, name: str, description: str = "Does a thing.") -> Path:
    return write(root / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n")


def pi_package_dir(root: Path, *, skill_name: str = "greet", prompt: str = "review",
                   theme: str = "sunset", tool: str | None = "shout") -> Path:
    """A directory laid out as a pi package: a skill, a prompt template, a theme, an extension file."""
    skill(root / "skills", skill_name, "Greets people warmly.")
    write(root / "prompts" / f"{prompt}.md", "---\ndescription: Review a file\n---\nReview $1 carefully.\n")
    theme_file(root / "themes" / f"{theme}.json")
    if tool:
        extension_file(root / "extensions" / f"{tool}.py", tool)
    return root


def theme_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": path.stem, "vars": {}, "colors": {}}))
    return path


def extension_file(path: Path, tool: str) -> Path:
    """An extension file that registers the tool ``tool``."""
    return write(path, f'''
        from pi_core import Tool, ToolResult, hookimpl

        async def run(params, ctx):
            return ToolResult.text(params["text"].upper())

        @hookimpl
        def register_tools(register):
            register(Tool(name="{tool}", description="Upper-cases text.", execute=run,
                          parameters={{"type": "object", "properties": {{"text": {{"type": "string"}}}}}}))
        ''')


#: Set for a run to learn whether a ``python_package(raises_on_import=True)`` module was imported.
IMPORT_MARKER = "PI_TEST_IMPORT_MARKER"

_RAISE_ON_IMPORT = f'''
import os, pathlib
if os.environ.get("{IMPORT_MARKER}"):
    pathlib.Path(os.environ["{IMPORT_MARKER}"]).write_text("imported")
raise RuntimeError(__name__ + " was imported")
'''


def python_package(root: Path, name: str = "pi-sample", version: str = "1.0", *, plugin: bool = True,
                   skill_name: str = "sample-skill", raises_on_import: bool = False) -> Path:
    """A pip-installable project whose distribution declares a plugin, a skill directory, a prompt
    template and a theme (in a sub-package, ``<module>.assets:themes``).

    ``raises_on_import``: the module and its ``assets`` sub-package write the file named by
    ``$PI_TEST_IMPORT_MARKER`` and raise when imported (declare no plugin then: loading one imports it).
    """
    module = name.replace("-", "_")
    write(root / "pyproject.toml", f'''
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "{name}"
        version = "{version}"

        [project.entry-points.pi]
        {"sample = " + repr(module) if plugin else ""}

        [project.entry-points."pi.skills"]
        skills = "{module}:skills"

        [project.entry-points."pi.prompts"]
        prompts = "{module}:prompts"

        [project.entry-points."pi.themes"]
        themes = "{module}.assets:themes"

        [tool.hatch.build.targets.wheel]
        packages = ["{module}"]

        [tool.hatch.build]
        dev-mode-dirs = ["."]
        ''')
    write(root / module / "__init__.py", '''
        from pi_core import Tool, ToolResult, hookimpl

        async def run(params, ctx):
            return ToolResult.text("hi")

        @hookimpl
        def register_tools(register):
            register(Tool(name="sample_tool", description="Says hi.", execute=run,
                          parameters={"type": "object", "properties": {}}))
        ''')
    skill(root / module / "skills", skill_name, "A skill shipped inside a wheel.")
    write(root / module / "prompts" / "explain.md", "---\ndescription: Explain code\n---\nExplain $@\n")
    write(root / module / "assets" / "__init__.py", "")
    theme_file(root / module / "assets" / "themes" / "sample-theme.json")
    if raises_on_import:
        for init in (root / module / "__init__.py", root / module / "assets" / "__init__.py"):
            init.write_text(_RAISE_ON_IMPORT)
    return root


def session_resources(python: Path | str, cwd: Path, *flags: str,
                      env: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Skills, prompt templates, themes and tools a real session in ``cwd`` ends up with (asked in
    ``python``'s environment, so a scratch venv's installs count)."""
    code = textwrap.dedent('''
        import asyncio, json, sys
        from pi_core import create_agent_session, discover_package_resources
        from pi_core.ai import FauxProvider

        async def main():
            faux = FauxProvider()
            approve = "-a" in sys.argv
            session = await create_agent_session(sys.argv[1], model=faux.model, plugins=[faux], session="memory",
                                                 approve=True if approve else None)
            themes = discover_package_resources(sys.argv[1], trusted=approve).theme_paths
            print(json.dumps({"skills": [s.name for s in session.skills],
                              "prompts": [t.name for t in session.templates],
                              "themes": sorted(p.stem for p in themes),
                              "tools": sorted(session.host.tools.names())}))
            await session.close()

        asyncio.run(main())
        ''')
    done = subprocess.run([str(python), "-c", code, str(cwd), *flags], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={**os.environ, **PIP_ENV, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


__all__ = ["IMPORT_MARKER", "PIP_ENV", "commit_all", "extension_file", "git", "git_repo", "pi_package_dir",
           "python_package", "run_pi", "session_resources", "skill", "theme_file", "write"]
