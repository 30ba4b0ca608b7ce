"""The `pi` command line around plugins, run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from pi_core import __version__

GOOD = """
from pi_core import hookimpl, Tool, ToolResult, Flag

@hookimpl
def register_tools(register):
    register(Tool(name="hello", description="greets", parameters={"type": "object"},
                  execute=lambda params, ctx: ToolResult.text("hi")))

@hookimpl
def register_flags(register):
    register(Flag("shout", bool, False, "Shout the greeting"))
"""

SUBCOMMAND = """
from pi_core import hookimpl

def greet(name: str = "world"):
    print(f"greetings, {name}")

@hookimpl
def register_cli_commands(register):
    register(greet, help="Print a greeting")
"""


def pi(pi_exe: list[str], cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*pi_exe, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    ext = root / ".pi" / "extensions"
    ext.mkdir(parents=True)
    (ext / "good.py").write_text(textwrap.dedent(GOOD))
    (ext / "broken.py").write_text("raise ImportError('missing dependency xyz')\n")
    return root


def test_version(pi_exe: list[str], tmp_path: Path) -> None:
    result = pi(pi_exe, tmp_path, "--version")
    assert (result.returncode, result.stdout.strip()) == (0, __version__)


def test_untrusted_project_notice_then_approve_before_or_after_the_subcommand(pi_exe: list[str], project: Path) -> None:
    skipped = pi(pi_exe, project, "plugins", "--json")
    assert skipped.returncode == 0
    assert "not trusted" in skipped.stderr and "--approve" in skipped.stderr
    assert "project:good" not in skipped.stdout
    for args in (("--approve", "plugins", "--json"), ("plugins", "--json", "--approve")):
        result = pi(pi_exe, project, *args)
        rows = {row["name"]: row for row in map(json.loads, result.stdout.splitlines())}
        assert rows["project:good"]["tools"] == ["hello"] and rows["project:good"]["source"] == "project"
        assert "missing dependency xyz" in rows["project:broken"]["error"]
        assert "missing dependency xyz" in result.stderr  # loud, not silent


def test_plugins_table_and_doctor(pi_exe: list[str], project: Path) -> None:
    table = pi(pi_exe, project, "plugins", "--approve")
    assert table.returncode == 0
    assert "project:good" in table.stdout and "tools:hello" in table.stdout and "FAILED" in table.stdout
    doctor = pi(pi_exe, project, "--approve", "plugins", "doctor")
    assert doctor.returncode == 1
    assert "failed: project:broken" in doctor.stdout and "missing dependency xyz" in doctor.stdout
    (project / ".pi" / "extensions" / "broken.py").unlink()
    healthy = pi(pi_exe, project, "--approve", "plugins", "doctor")
    assert healthy.returncode == 0 and healthy.stdout.startswith("ok:")


def test_doctor_reports_conflicts(pi_exe: list[str], project: Path) -> None:
    (project / ".pi" / "extensions" / "broken.py").unlink()
    (project / ".pi" / "extensions" / "zz_again.py").write_text(textwrap.dedent(GOOD).replace("Flag(\"shout\"", "Flag(\"whisper\""))
    doctor = pi(pi_exe, project, "--approve", "plugins", "doctor")
    assert doctor.returncode == 1
    assert "conflict: tool 'hello'" in doctor.stdout
    assert "project:good" in doctor.stdout and "project:zz_again" in doctor.stdout


def test_prompt_stays_a_prompt_when_a_plugin_adds_a_subcommand(pi_exe: list[str], project: Path) -> None:
    (project / ".pi" / "extensions" / "cmd.py").write_text(textwrap.dedent(SUBCOMMAND))
    command = pi(pi_exe, project, "--approve", "greet", "--name", "pi")
    assert command.returncode == 0 and command.stdout.strip() == "greetings, pi"
    # a prompt that merely contains the word, or the word after other flags, is a prompt
    for args, answer in ((("please greet me",), "please greet me"), (("-p", "greet"), "greet")):
        prompt = pi(pi_exe, project, "--approve", "--provider", "faux", "--model", "echo", *args)
        assert (prompt.returncode, prompt.stdout.strip()) == (0, answer), prompt.stderr


def test_plugin_flag_is_accepted_and_listed_in_help(pi_exe: list[str], project: Path) -> None:
    help_text = pi(pi_exe, project, "--approve", "--help")
    assert help_text.returncode == 0 and "--shout" in help_text.stdout and "plugin flag" in help_text.stdout
    unknown = pi(pi_exe, project, "--no-such-flag", "task")
    assert unknown.returncode == 2


def test_no_extensions_and_disabled_plugins(pi_exe: list[str], project: Path) -> None:
    rows = pi(pi_exe, project, "--approve", "--no-extensions", "plugins", "--json").stdout
    assert "project:good" not in rows
    env = {"PI_DISABLE_PLUGINS": "project:good"}
    rows = [json.loads(line) for line in pi(pi_exe, project, "--approve", "plugins", "--json", env=env).stdout.splitlines()]
    assert [r["disabled"] for r in rows if r["name"] == "project:good"] == [True]


def test_trust_command_writes_pis_trust_json(pi_exe: list[str], project: Path, agent_dir: Path) -> None:
    result = pi(pi_exe, project, "trust")
    assert result.returncode == 0
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project.resolve()): True}
    rows = pi(pi_exe, project, "plugins", "--json").stdout
    assert "project:good" in rows
    pi(pi_exe, project, "trust", "--no")
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project.resolve()): False}


def test_strict_mode_exits_non_zero(pi_exe: list[str], project: Path) -> None:
    result = pi(pi_exe, project, "--approve", "plugins", env={"PI_STRICT_PLUGINS": "1"})
    assert result.returncode == 1 and "missing dependency xyz" in result.stderr
