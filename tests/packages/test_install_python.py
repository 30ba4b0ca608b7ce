"""Python packages into a throw-away environment: a local project (editable), a built wheel, a PyPI
name (from a local index), a git repository with a pyproject.toml; and the example plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pkg_helpers import (
    IMPORT_MARKER,
    PIP_ENV,
    commit_all,
    git_repo,
    python_package,
    run_pi,
    session_resources,
    write,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pi-example-plugin"


def listed(python: Path, cwd: Path) -> list[dict]:
    done = run_pi(python, cwd, "list", "--json")
    return [json.loads(line) for line in done.stdout.splitlines()]


def build_wheel(project: Path, out: Path) -> Path:
    before = set(out.glob("*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(project)],
                   check=True, env={**os.environ, **PIP_ENV})
    [wheel] = set(out.glob("*.whl")) - before
    return wheel


@pytest.mark.parametrize("remove_word", ["remove", "uninstall"])  # pi's alias
def test_install_list_and_remove_the_example_plugin(scratch_python: Path, tmp_path: Path, remove_word: str) -> None:
    installed = run_pi(scratch_python, tmp_path, "install", "-e", str(EXAMPLE), "--", "--no-deps")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    assert "plugins: example (tools:word_count, toolsets:writing)" in installed.stdout

    rows = [json.loads(line) for line in run_pi(scratch_python, tmp_path, "plugins", "--json").stdout.splitlines()]
    [row] = [r for r in rows if r["dist"] == "pi-example-plugin"]
    assert (row["name"], row["source"], row["tools"], row["toolsets"]) == ("example", "entrypoint", ["word_count"],
                                                                           ["writing"])
    assert "[pi-example-plugin 0.1.0]" in run_pi(scratch_python, tmp_path, "list").stdout

    removed = run_pi(scratch_python, tmp_path, remove_word, "pi-example-plugin")
    assert removed.returncode == 0, removed.stderr
    assert "pi-example-plugin" not in run_pi(scratch_python, tmp_path, "plugins", "--json").stdout
    assert run_pi(scratch_python, tmp_path, "list").stdout.strip() == "No packages installed."
    # this test's own environment never saw the plugin
    assert "pi-example-plugin" not in subprocess.run([sys.executable, "-m", "pi_core", "plugins", "--json"],
                                                     capture_output=True, text=True, cwd=tmp_path).stdout


def test_local_project_resources_come_from_entry_point_metadata(scratch_python: Path, tmp_path: Path) -> None:
    project = python_package(tmp_path / "sample")
    assert run_pi(scratch_python, tmp_path, "install", "-e", str(project)).returncode == 0
    resources = session_resources(scratch_python, tmp_path)
    assert "sample-skill" in resources["skills"] and "explain" in resources["prompts"]
    assert resources["themes"] == ["sample-theme"]  # pi.themes, from a sub-package (module.assets:themes)
    assert "sample_tool" in resources["tools"]
    [row] = [r for r in listed(scratch_python, tmp_path) if r["dist"] == "pi-sample"]
    assert row["scope"] == "user" and row["kind"] == "local"
    assert {(r["kind"], r["name"]) for r in row["resources"]} == {
        ("extensions", "sample"), ("skills", "pi_sample/skills/sample-skill/SKILL.md"),
        ("prompts", "pi_sample/prompts/explain.md"), ("themes", "pi_sample/assets/themes/sample-theme.json")}

    # a project's `autoload: false` entry filters the user's entry by plugin name and by path, here only
    project = tmp_path / "project"
    write(project / ".pi" / "settings.json", json.dumps({"packages": [{
        "source": os.path.relpath(tmp_path / "sample", project / ".pi"), "autoload": False,
        "extensions": ["-sample"], "themes": ["!**/sample-*.json"]}]}))
    filtered = session_resources(scratch_python, project, "-a")
    assert "sample_tool" not in filtered["tools"] and filtered["themes"] == []
    assert "sample-skill" in filtered["skills"] and "explain" in filtered["prompts"]  # the user's entry: all
    assert "sample_tool" in session_resources(scratch_python, project)["tools"]  # untrusted: not filtered


def test_resources_of_an_installed_distribution_are_found_without_importing_it(scratch_python: Path,
                                                                               tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    wheel = build_wheel(python_package(tmp_path / "sample", plugin=False, raises_on_import=True), tmp_path / "wheels")
    assert run_pi(scratch_python, tmp_path, "install", str(wheel)).returncode == 0
    env = {IMPORT_MARKER: str(marker)}

    done = run_pi(scratch_python, tmp_path, "list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in done.stdout.splitlines() if '"pi-sample"' in line]
    assert {(r["kind"], r["name"], r["enabled"]) for r in row["resources"]} == {
        ("skills", "pi_sample/skills/sample-skill/SKILL.md", True), ("prompts", "pi_sample/prompts/explain.md", True),
        ("themes", "pi_sample/assets/themes/sample-theme.json", True)}
    resources = session_resources(scratch_python, tmp_path, env=env)
    assert "sample-skill" in resources["skills"] and "explain" in resources["prompts"]
    assert resources["themes"] == ["sample-theme"]
    assert not marker.exists()

    # the check can fail: importing the package (or its assets sub-package) does leave the marker
    imported = subprocess.run([str(scratch_python), "-c", "import pi_sample.assets"], capture_output=True, text=True,
                              env={**os.environ, **env})
    assert imported.returncode == 1 and "pi_sample was imported" in imported.stderr and marker.exists()


def test_wheel_and_pypi_name_install_into_a_fresh_environment(scratch_python: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheel = build_wheel(python_package(tmp_path / "sample", version="1.0"), wheels)
    result = run_pi(scratch_python, tmp_path, "install", str(wheel))
    assert result.returncode == 0, result.stderr
    assert "sample-skill" in session_resources(scratch_python, tmp_path)["skills"]
    assert run_pi(scratch_python, tmp_path, "remove", str(wheel)).returncode == 0
    assert "sample-skill" not in session_resources(scratch_python, tmp_path)["skills"]

    # a PyPI name, served by a local "index" (pip's --find-links): pinned, then updated when unpinned
    build_wheel(python_package(tmp_path / "v2", version="2.0", skill_name="second-skill"), wheels)
    env = {"PIP_FIND_LINKS": str(wheels)}
    assert run_pi(scratch_python, tmp_path, "install", "pypi:pi-sample==1.0", env=env).returncode == 0
    [row] = [r for r in listed(scratch_python, tmp_path) if r["dist"] == "pi-sample"]
    assert (row["version"], row["pinned"], row["source"]) == ("1.0", True, "pypi:pi-sample==1.0")
    pinned = run_pi(scratch_python, tmp_path, "update", "--extensions", env=env)
    assert "pinned; not updated" in pinned.stdout
    assert run_pi(scratch_python, tmp_path, "install", "pi-sample", env=env).returncode == 0
    settings = json.loads(_agent(tmp_path).read_text())
    assert settings["packages"] == ["pi-sample"]  # the same package: its entry is replaced, not added
    updated = run_pi(scratch_python, tmp_path, "update", "pi-sample", env=env)
    assert updated.returncode == 0, updated.stderr
    assert "Updated pi-sample: 1.0 -> 2.0" in updated.stdout
    assert "second-skill" in session_resources(scratch_python, tmp_path)["skills"]


def _agent(tmp_path: Path) -> Path:
    import os

    return Path(os.environ["PI_CODING_AGENT_DIR"]) / "settings.json"


def test_git_python_project_is_cloned_installed_and_reinstalled_on_update(scratch_python: Path,
                                                                         tmp_path: Path) -> None:
    repo = git_repo(python_package(tmp_path / "repo"))
    source = f"git+file://{repo}"
    assert run_pi(scratch_python, tmp_path, "install", source).returncode == 0
    resources = session_resources(scratch_python, tmp_path)
    assert "sample-skill" in resources["skills"] and "sample_tool" in resources["tools"]

    write(repo / "pi_sample" / "prompts" / "later.md", "Later $1\n")
    commit_all(repo, "a new prompt")
    updated = run_pi(scratch_python, tmp_path, "update", "--extensions")
    assert updated.returncode == 0 and f"Updated {source}" in updated.stdout
    assert "later" in session_resources(scratch_python, tmp_path)["prompts"]

    assert run_pi(scratch_python, tmp_path, "remove", source).returncode == 0
    assert "sample_tool" not in session_resources(scratch_python, tmp_path)["tools"]


def test_failed_pip_is_reported_and_nothing_is_recorded(tmp_path: Path, scratch_python: Path) -> None:
    result = run_pi(scratch_python, tmp_path, "install", "pypi:pi-no-such-package")
    assert result.returncode == 1 and "pip install pi-no-such-package failed" in result.stderr
    assert not _agent(tmp_path).exists()
    missing = run_pi(scratch_python, tmp_path, "install", str(tmp_path / "no-such-project"))
    assert missing.returncode == 1 and "path does not exist" in missing.stderr


def test_uv_is_used_when_it_is_on_path(tmp_path: Path, scratch_python: Path) -> None:
    # a stand-in uv that records its arguments and hands the work to pip, as `uv pip` would do it
    bin_dir = tmp_path / "bin"
    log = tmp_path / "uv.log"
    write(bin_dir / "uv", f"""
        #!{sys.executable}
        import subprocess, sys
        open({str(log)!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
        args = sys.argv[2:]
        python = args[args.index("--python") + 1]
        rest = [a for i, a in enumerate(args) if a != "--python" and (i == 0 or args[i - 1] != "--python")]
        if rest[0] == "uninstall":
            rest.insert(1, "--yes")
        sys.exit(subprocess.call([python, "-m", "pip", *rest]))
        """).chmod(0o755)
    import os

    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PI_PACKAGE_INSTALLER": ""}
    project = python_package(tmp_path / "sample")
    assert run_pi(scratch_python, tmp_path, "install", str(project), env=env).returncode == 0
    assert log.read_text().startswith(f"pip install --python {scratch_python} {project}")
    assert "sample-skill" in session_resources(scratch_python, tmp_path)["skills"]


def test_dash_e_pypi_name_loads_for_one_run_only(scratch_python: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(python_package(tmp_path / "sample"), wheels)
    env = {"PIP_FIND_LINKS": str(wheels)}
    rows = run_pi(scratch_python, tmp_path, "-e", "pypi:pi-sample", "plugins", "--json", env=env)
    assert rows.returncode == 0, rows.stderr
    assert any(json.loads(line)["tools"] == ["sample_tool"] for line in rows.stdout.splitlines())
    listing = run_pi(scratch_python, tmp_path, "-e", "pypi:pi-sample", "list", env=env)
    assert "This run only (-e):" in listing.stdout and "pi_sample/skills/sample-skill/SKILL.md" in listing.stdout
    # nothing was installed into the environment, nothing recorded
    assert "sample_tool" not in run_pi(scratch_python, tmp_path, "plugins", "--json").stdout
    assert not _agent(tmp_path).exists()


def test_a_python_package_changelog_comes_from_its_project_or_from_its_wheel(scratch_python: Path,
                                                                              tmp_path: Path, agent_dir: Path) -> None:
    local = python_package(tmp_path / "local", version="1.0.0")
    write(local / "CHANGELOG.md", "## [1.0.0]\n\n- Local project notes\n\n## [0.9.0]\n\n- Old\n")
    shipped = python_package(tmp_path / "shipped", name="pi-shipped", version="2.1.0", skill_name="other-skill")
    write(shipped / "pi_shipped" / "CHANGELOG.md", "## 2.1.0 - 2026-12-01\n\n- Wheel notes\n")
    wheel = build_wheel(shipped, tmp_path / "wheels")
    assert run_pi(scratch_python, tmp_path, "install", "-e", str(local)).returncode == 0
    assert run_pi(scratch_python, tmp_path, "install", str(wheel)).returncode == 0
    code = '''
import json, sys
from pathlib import Path
from pi_core.packages.changelog import changelog_updates
from pi_core.packages.resolve import resolve_packages
cwd, agent = Path(sys.argv[1]), Path(sys.argv[2])
packages = resolve_packages(cwd, agent, trusted=False)
record = {}
first = changelog_updates(packages, agent / "settings.json", record)
record = json.loads((agent / "settings.json").read_text())["extensionChangelogVersions"]
older = {key: "0.9.0" for key in record}
later = changelog_updates(packages, agent / "settings.json", older)
print(json.dumps({"first": len(first), "record": sorted(record.values()),
                  "later": sorted((u.name, u.markdown) for u in later)}))
'''
    done = subprocess.run([str(scratch_python), "-c", code, str(tmp_path), str(agent_dir)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **PIP_ENV})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["first"] == 0 and result["record"] == ["1.0.0", "2.1.0"]
    assert result["later"] == [["pi-sample", "## pi-sample [1.0.0]\n\n- Local project notes"],
                               ["pi-shipped", "## pi-shipped 2.1.0 - 2026-12-01\n\n- Wheel notes"]]
