"""pi 1.6's command-line flags, long and short, each checked by what reaches the model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, write_agent_dir
from test_cli_run import pi, sessions

FAKE = ("--provider", "fake", "--model", "fake-model")


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


def system_text(request: dict[str, Any]) -> str:
    return request["body"]["messages"][0]["content"]


def user_texts(request: dict[str, Any]) -> list[str]:
    out = []
    for message in request["body"]["messages"]:
        if message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(c.get("text", "") for c in content))
    return out


def run(tmp_path: Path, *args: str, turns: int = 1, settings: dict[str, Any] | None = None,
        stdin: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir(exist_ok=True)
    with FakeOpenAI([{"text": f"answer {i}"} for i in range(turns)]) as server:
        write_agent_dir(agent, server.base_url, settings)
        result = pi(ws, agent, *FAKE, *args, stdin=stdin)
    return result, server.requests


@pytest.mark.parametrize(("flags", "expected"), [
    (("--tools", "ls,read"), ["ls", "read"]),
    (("-t", "gr*,l*"), ["grep", "ls"]),
    (("--tools", "+grep,-write"), ["read", "bash", "edit", "grep"]),
    (("--exclude-tools", "b*,e*"), ["read", "write"]),
    (("-xt", "write"), ["read", "bash", "edit"]),
    (("--tools", "read,grep", "-xt", "read"), ["grep"]),
    (("-nbt",), []),
    (("--no-builtin-tools", "--tools", "+grep"), ["grep"]),
    (("-nt",), []),
    (("--no-tools",), []),
])
def test_tool_flags_choose_what_the_model_is_offered(tmp_path: Path, flags: tuple[str, ...],
                                                     expected: list[str]) -> None:
    result, requests = run(tmp_path, *flags, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tool_names(requests[0]) == expected
    assert not sessions(tmp_path / "agent") or "session_info" not in sessions(tmp_path / "agent")[0].read_text()


def test_tool_edits_apply_to_the_default_tools_setting(tmp_path: Path) -> None:
    result, requests = run(tmp_path, "--tools", "-ls", "-p", "hi", settings={"defaultTools": ["ls", "read", "find"]})
    assert result.returncode == 0, result.stderr
    assert tool_names(requests[0]) == ["read", "find"]


@pytest.mark.parametrize(("value", "message"), [
    ("+grep,read", "cannot be mixed"),
    ("+gr*", "exact tool names"),
])
def test_invalid_tool_lists_are_refused(tmp_path: Path, value: str, message: str) -> None:
    result, requests = run(tmp_path, "--tools", value, "-p", "hi")
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert requests == []


def test_an_unknown_tool_name_is_a_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    result, requests = run(tmp_path, "--tools", "read,frobnicate", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "frobnicate" in result.stderr and "available:" in result.stderr
    assert tool_names(requests[0]) == ["read"]


@pytest.mark.parametrize("flag", ["-nx", "-pc", "-ncx", "-nfoo"])
def test_unknown_short_options_are_rejected_not_misread(tmp_path: Path, flag: str) -> None:
    result, requests = run(tmp_path, flag, "-p", "hi")
    assert result.returncode == 2 and f"unknown option {flag}" in result.stderr
    assert requests == []


def test_a_dash_message_after_double_dash_is_a_message(tmp_path: Path) -> None:
    result, requests = run(tmp_path, "-p", "--", "-nc is text here")
    assert result.returncode == 0, result.stderr
    assert user_texts(requests[0]) == ["-nc is text here"]


def test_no_context_files_short_and_long(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("Always answer in haiku.")
    result, requests = run(tmp_path, "-p", "hi", turns=3)
    assert "Always answer in haiku." in system_text(requests[0])
    for flag in ("-nc", "--no-context-files"):
        result, requests = run(tmp_path, flag, "-p", "hi")
        assert result.returncode == 0, result.stderr
        assert "Always answer in haiku." not in system_text(requests[0])
    # `-nc` is not `-n c`: no session got the name "c"
    for file in sessions(tmp_path / "agent"):
        assert '"session_info"' not in file.read_text()


SKILL = """\
---
name: {name}
description: {description}
---
Steps for {name}.
"""


def _skill(root: Path, name: str, description: str) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(SKILL.format(name=name, description=description))
    return directory


def test_skill_paths_and_no_skills(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _skill(agent / "skills", "discovered", "Found in the agent dir")
    extra = _skill(tmp_path / "elsewhere", "given", "Passed with --skill")
    result, requests = run(tmp_path, "--skill", str(extra), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "<name>given</name>" in system_text(requests[0]) and "<name>discovered</name>" in system_text(requests[0])
    for flag in ("-ns", "--no-skills"):
        result, requests = run(tmp_path, flag, "--skill", str(extra), "-p", "hi")
        assert result.returncode == 0, result.stderr
        text = system_text(requests[0])
        assert "<name>given</name>" in text and "<name>discovered</name>" not in text
    result, requests = run(tmp_path, "-ns", "-p", "hi", settings={"skills": [str(extra)]})
    assert "<name>given</name>" not in system_text(requests[0])  # configured skills are dropped too


def test_prompt_template_paths_and_no_prompt_templates(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "review.md").write_text("Review $1 carefully.")
    given = tmp_path / "explain.md"
    given.write_text("Explain $1 simply.")
    result, requests = run(tmp_path, "--prompt-template", str(given), "-p", "/explain recursion", turns=1)
    assert result.returncode == 0, result.stderr
    assert user_texts(requests[0]) == ["Explain recursion simply."]
    for flag in ("-np", "--no-prompt-templates"):
        result, requests = run(tmp_path, flag, "-p", "/review main.py")
        # templates are off: /review names nothing, so it is an unknown command, never sent to the model
        assert result.returncode == 1 and "Unknown command /review" in result.stderr and requests == []
        result, requests = run(tmp_path, flag, "--prompt-template", str(given), "-p", "/explain x")
        assert user_texts(requests[0]) == ["Explain x simply."]


def test_session_id_opens_or_creates_and_fork_copies(tmp_path: Path) -> None:
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    ws.mkdir()
    with FakeOpenAI([{"text": f"a{i}"} for i in range(5)]) as server:
        write_agent_dir(agent, server.base_url)
        first = pi(ws, agent, *FAKE, "--session-id", "my-task-1", "-p", "one")
        assert first.returncode == 0 and "starting a new one" in first.stderr
        [file] = sessions(agent)
        assert json.loads(file.read_text().splitlines()[0])["id"] == "my-task-1"
        again = pi(ws, agent, *FAKE, "--session-id", "my-task-1", "-p", "two")
        assert again.returncode == 0 and again.stderr == ""
        assert sessions(agent) == [file]
        forked = pi(ws, agent, *FAKE, "--fork", "my-task-1", "--session-id", "copy-2", "-p", "three")
        assert forked.returncode == 0, forked.stderr
        clash = pi(ws, agent, *FAKE, "--fork", str(file), "--session-id", "copy-2", "-p", "four")
        bad = pi(ws, agent, *FAKE, "--session-id", "-bad-", "-p", "x")
        mixed = pi(ws, agent, *FAKE, "--fork", "my-task-1", "-c", "-p", "x")
    assert [user_texts(r)[-1] for r in server.requests] == ["one", "two", "three"]
    assert user_texts(server.requests[2]) == ["one", "two", "three"]  # the fork carries the history
    copy = next(p for p in sessions(agent) if p != file)
    header = json.loads(copy.read_text().splitlines()[0])
    assert header["id"] == "copy-2" and header["parentSession"] == str(file)
    assert file.read_text().count('"role":"user"') == 2  # the source is unchanged
    assert clash.returncode == 1 and "already exists" in clash.stderr
    assert bad.returncode == 2 and "invalid session id" in bad.stderr
    assert mixed.returncode == 2 and "--fork cannot be combined with --continue" in mixed.stderr


def test_piped_stdin_comes_first_joined_as_pi_joins_it(tmp_path: Path) -> None:
    result, requests = run(tmp_path, "-p", "arg one", "arg two", turns=2, stdin="piped text\n")
    assert result.returncode == 0, result.stderr
    assert user_texts(requests[1]) == ["piped textarg one", "arg two"]


def test_bash_tool_sees_pis_process_markers(tmp_path: Path) -> None:
    call = json.dumps({"tool_calls": [{"name": "bash", "arguments": {
        "command": "echo \"agent=$AI_AGENT coding=$PI_CODING_AGENT\""}}]})
    result = pi(tmp_path, tmp_path / "agent", "--provider", "faux", "--model", "echo", "--no-session", "-p", call)
    assert result.returncode == 0, result.stderr
    assert "agent=pi coding=true" in result.stdout


def test_help_lists_every_option_grouped_as_pi_does(tmp_path: Path) -> None:
    from pi_core.cli_args import DEFAULT_COMMAND, GlobalOptions, OptionShapes
    from pi_core.cli_app import build_app
    from pi_core.cli_help import option_names
    from pi_core.extensions.manager import build_plugin_host

    import typer

    app, _ = build_app(build_plugin_host(tmp_path, agent_dir=tmp_path / "agent"), GlobalOptions())
    shapes = OptionShapes.of(typer.main.get_command(app).commands[DEFAULT_COMMAND].params)  # type: ignore[attr-defined]
    hidden = {"--approve", "--no-approve", "--no-plugins", "--no-extensions"}  # documented with their short forms
    assert (shapes.values | shapes.switches) - hidden <= option_names()
    for args in (("--help",), ("-h",), ("-p", "--help")):
        shown = pi(tmp_path, tmp_path / "agent", *args)
        assert shown.returncode == 0
        text = shown.stdout
        assert "Usage:\n  pi [options] [--] [@files...] [messages...]" in text
        sections = ["Commands:", "Options:", "Examples:", "Environment Variables:", "Built-in Tool Names:"]
        assert [text.index(s) for s in sections] == sorted(text.index(s) for s in sections)
        for word in ("-nc", "-xt", "-nbt", "-nt", "-ns", "-np", "--skill", "--prompt-template", "--models",
                     "--fork", "--session-id", "--verbose", "pi uninstall", "OPENAI_API_KEY", "PI_CODING_AGENT_DIR"):
            assert word in text, word
