"""pi's examples that draw in the terminal, loaded where there is none: print and JSON mode and RPC. They must
load and answer without failing (``ctx.ui.theme`` is there, unguarded; components answer their "cancel"
value), and do there what pi's do: tools that need a terminal say so, commands that need one refuse."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_core.testing import FakeProviderServer, PiRunner, tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import RpcProcess  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
TIMEOUT = 60
TERMINAL = ("custom_footer", "custom_header", "working_indicator", "question", "questionnaire", "status_line",
            "theme_switch", "mac_system_theme", "overlay_test", "overlay_qa_tests", "plan_mode_shortcut",
            "message_renderer", "built_in_tool_renderer", "snake", "preset", "tools", "qna", "summarize", "handoff")


def extensions(*names: str) -> list[str]:
    return [arg for name in names for arg in ("-e", str(EXAMPLES / f"{name}.py"))]


def tool_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
            for m in messages if m["role"] == "tool"]


def test_terminal_examples_in_print_mode_answer_without_failing(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner) -> None:
    ask = {"questions": [{"id": "q", "prompt": "Which?", "options": [{"value": "a", "label": "A"}]}]}
    fake_provider_server.script([tool_call("questionnaire", ask), tool_call("bash", {"command": "echo hi"})],
                                "Both answered.")
    result = run_pi("-p", *extensions(*TERMINAL), "ask me", timeout=TIMEOUT)
    assert result.ok, str(result)
    assert result.stdout.strip() == "Both answered."
    assert "Traceback" not in result.stderr and "failed" not in result.stderr.lower(), result.stderr
    answers = tool_texts(fake_provider_server.requests[1].body)
    assert answers[0] == "Error: UI not available (running in non-interactive mode)"
    assert answers[1].strip() == "hi"  # the restyled bash runs as before


def test_question_in_json_mode_answers_without_a_ui(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner) -> None:
    ask = {"question": "Which?", "options": [{"label": "a"}, {"label": "b"}]}
    fake_provider_server.script(tool_call("question", ask), "ok")
    result = run_pi("--mode", "json", *extensions("question"), "ask me", timeout=TIMEOUT)
    assert result.ok, str(result)
    assert tool_texts(fake_provider_server.requests[1].body) == [
        "Error: UI not available (running in non-interactive mode)"]


def test_preset_flag_sets_tools_and_instructions_in_json_mode(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    (pi_project / ".pi").mkdir()
    presets = {"plan": {"tools": ["read", "ls"], "thinkingLevel": "high", "instructions": "PLANNING MODE: read only."}}
    (pi_project / ".pi" / "presets.json").write_text(json.dumps(presets))
    fake_provider_server.script("Planned.")
    result = run_pi("--mode", "json", *extensions("preset"), "--preset", "plan", "make a plan", timeout=TIMEOUT)
    assert result.ok, str(result)
    body = fake_provider_server.requests[0].body
    assert sorted(t["function"]["name"] for t in body["tools"]) == ["ls", "read"]
    assert body["messages"][0]["content"].endswith("\n\nPLANNING MODE: read only.")


def test_terminal_commands_over_rpc_refuse_or_say_what_is_missing(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    with RpcProcess(pi_project, scripted=False,
                    extensions=tuple(EXAMPLES / f"{n}.py" for n in ("snake", "tools", "qna", "preset"))) as pi:
        said = {}
        for command in ("/snake", "/tools", "/qna", "/preset", "/preset fast"):
            _, seen = pi.call({"type": "prompt", "message": command})
            said[command] = [r["message"] for r in seen
                             if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]
    assert said["/snake"] == ["Snake requires interactive mode"]
    assert said["/tools"] == ["/tools requires TUI mode"]
    assert said["/qna"] == ["qna requires interactive mode"]
    assert said["/preset"][0].startswith("No presets defined. Add presets to ")
    assert said["/preset fast"] == ['Unknown preset "fast". Available: (none defined)']


def test_terminal_examples_load_in_json_mode_and_over_rpc(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    fake_provider_server.script("hello back", "and again")
    result = run_pi("--mode", "json", *extensions(*TERMINAL), "hi", timeout=TIMEOUT)
    assert result.ok, str(result)
    assert "failed" not in result.stderr.lower(), result.stderr
    with RpcProcess(pi_project, scripted=False, extensions=tuple(EXAMPLES / f"{n}.py" for n in TERMINAL)) as pi:
        _, seen = pi.call({"type": "prompt", "message": "/overlay-stack"})
        said = [r["message"] for r in seen if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]
        seen = pi.prompt("hi")
    assert said[-1] == "Closed in order: None, None, None"  # three overlays, none drawn: each answers None
    assert not [r for r in seen if r.get("type") == "extension_ui_request" and r.get("method") == "notify"
                and r.get("notifyType") == "error"]
