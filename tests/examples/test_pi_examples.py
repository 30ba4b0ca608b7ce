"""pi's example extensions, ported to Python (``examples/extensions/``), each driven through the real ``pi``
command (``--mode json`` or ``--mode rpc``) against a local model server. Each test asserts what the original
does that can be observed: the requests the model got, calls blocked, entries in the session file, the
notices and dialogs an RPC client sees."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing import FakeProviderServer, PiRunner, tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
from rpc_client import Record, RpcProcess  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
TIMEOUT = 60


def example(name: str) -> Path:
    path = EXAMPLES / f"{name}.py"
    assert path.exists(), path
    return path


def rpc(project: Path, *names: str, args: tuple[str, ...] = ()) -> RpcProcess:
    """``pi --mode rpc -e <example>...`` using the fake server's ``fake`` provider."""
    return RpcProcess(project, *args, scripted=False, extensions=tuple(example(n) for n in names))


def json_run(run_pi: PiRunner, *names: str, prompt: str, args: tuple[str, ...] = ()) -> Any:
    extensions = [a for n in names for a in ("-e", str(example(n)))]
    result = run_pi("--mode", "json", *extensions, *args, prompt, timeout=TIMEOUT)
    assert result.ok, str(result)
    return result


def is_ui(method: str, pred: Callable[[Record], bool] = lambda r: True) -> Callable[[Record], bool]:
    return lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method and pred(r)


def notices(records: list[Record]) -> list[str]:
    return [r["message"] for r in records if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]


def session_entries(agent_dir: Path) -> list[dict[str, Any]]:
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
            for m in body["messages"] if m["role"] == "tool"]


def user_texts(body: dict[str, Any]) -> list[str]:
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)

    return [text(m["content"]) for m in body["messages"] if m["role"] == "user"]


# -- permission-gate, protected-paths ------------------------------------------------------------------


def test_permission_gate_blocks_without_ui_and_asks_with_one(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    (pi_project / "build").mkdir()
    fake_provider_server.script(tool_call("bash", {"command": "rm -rf build"}), "I could not.")
    json_run(run_pi, "permission_gate", prompt="clean up")
    assert (pi_project / "build").is_dir()
    assert "Dangerous command blocked" in tool_messages(fake_provider_server.requests[1].body)[0]

    fake_provider_server.script(tool_call("bash", {"command": "rm -rf build"}), "Removed.",
                                tool_call("bash", {"command": "sudo rm -rf build"}), "Refused.")
    with rpc(pi_project, "permission_gate") as pi:
        pi.send({"type": "prompt", "message": "clean up", "id": "p1"})
        dialog, _ = pi.wait_for(is_ui("select"))
        assert "rm -rf build" in dialog["title"] and dialog["options"] == ["Yes", "No"]
        pi.send({"type": "extension_ui_response", "id": dialog["id"], "value": "Yes"})
        pi.settle()
        assert not (pi_project / "build").exists()
        pi.send({"type": "prompt", "message": "again", "id": "p2"})
        dialog, _ = pi.wait_for(is_ui("select"))
        pi.send({"type": "extension_ui_response", "id": dialog["id"], "value": "No"})
        pi.settle()
    assert "Blocked by the user" in tool_messages(fake_provider_server.requests[-1].body)[-1]


def test_protected_paths_block_writes_and_edits(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    (pi_project / ".git").mkdir()
    (pi_project / ".git" / "config").write_text("[core]\n")
    fake_provider_server.script(
        [tool_call("write", {"path": ".env", "content": "TOKEN=1"}),
         tool_call("edit", {"path": ".git/config", "edits": [{"oldText": "[core]", "newText": "[x]"}]}),
         tool_call("write", {"path": "notes.txt", "content": "fine"})], "Done.")
    json_run(run_pi, "protected_paths", prompt="write things")
    assert not (pi_project / ".env").exists() and (pi_project / ".git" / "config").read_text() == "[core]\n"
    assert (pi_project / "notes.txt").read_text() == "fine"
    results = tool_messages(fake_provider_server.requests[1].body)
    assert 'Path ".env" is protected' in results[0] and 'Path ".git/config" is protected' in results[1]


# -- session-name, bookmark, commands, event-bus ------------------------------------------------------


def test_session_name_sets_and_shows_the_name(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    with rpc(pi_project, "session_name") as pi:
        _, seen = pi.call({"type": "prompt", "message": "/session-name"})
        assert notices(seen) == ["No session name set"]
        _, seen = pi.call({"type": "prompt", "message": "/session-name Release prep"})
        assert notices(seen) == ["Session named: Release prep"]
        _, seen = pi.call({"type": "prompt", "message": "/session-name"})
        assert notices(seen) == ["Session: Release prep"]
        state, _ = pi.call({"type": "get_state"})
    assert state["data"]["sessionName"] == "Release prep"
    assert fake_provider_server.requests == []  # commands never reach the model


def test_bookmark_labels_the_last_answer_and_unbookmark_removes_it(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    fake_provider_server.script("first answer")
    with rpc(pi_project, "bookmark") as pi:
        _, seen = pi.call({"type": "prompt", "message": "/bookmark"})
        assert notices(seen) == ["No assistant message to bookmark"]
        pi.prompt("hi")
        _, seen = pi.call({"type": "prompt", "message": "/bookmark v1"})
        assert notices(seen) == ["Bookmarked as: v1"]
        _, seen = pi.call({"type": "prompt", "message": "/unbookmark"})
        assert notices(seen) == ["Removed bookmark: v1"]
        _, seen = pi.call({"type": "prompt", "message": "/unbookmark"})
        assert notices(seen) == ["No bookmarked entry found"]
    entries = session_entries(pi_agent_dir)
    answer = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    labels = [(e["targetId"], e.get("label")) for e in entries if e["type"] == "label"]
    assert labels == [(answer["id"], "v1"), (answer["id"], None)]


def test_commands_lists_by_source_and_shows_the_path(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    (pi_agent_dir / "prompts").mkdir()
    (pi_agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $@\n")
    with rpc(pi_project, "commands", "session_name") as pi:
        pi.send({"type": "prompt", "message": "/commands", "id": "c"})
        listing, _ = pi.wait_for(is_ui("select"))
        assert listing["title"] == "Available Commands"
        assert listing["options"][0] == "--- Extensions ---"
        assert "/commands - List available slash commands" in listing["options"]
        assert "/session-name - Set or show the session name" in listing["options"]
        assert listing["options"][-2:] == ["--- Prompts ---", "/review - Review the diff"]
        assert not any(o.startswith(("/model", "/compact")) for o in listing["options"])  # built-ins not listed
        pi.send({"type": "extension_ui_response", "id": listing["id"], "value": "/session-name - Set or show the session name"})
        confirm, _ = pi.wait_for(is_ui("confirm"))
        assert confirm["title"] == "session-name" and str(example("session_name")) in confirm["message"]
        pi.send({"type": "extension_ui_response", "id": confirm["id"], "confirmed": True})
        shown, _ = pi.wait_for(is_ui("notify"))
        assert shown["message"] == str(example("session_name"))
        pi.response("c")
        _, seen = pi.call({"type": "prompt", "message": "/commands skill"})
        assert notices(seen) == ["No skill commands found"]


def test_commands_argument_completions_reach_an_rpc_client(fake_provider_server: FakeProviderServer,
                                                           pi_project: Path) -> None:
    """``Command(argument_completions=)`` over RPC (``get_argument_completions``, an addition: pi 1.6's RPC has
    no completions), the values the terminal offers on Tab after ``/commands ``."""
    with rpc(pi_project, "commands", "session_name") as pi:
        typed, _ = pi.call({"type": "get_argument_completions", "name": "commands", "prefix": "s"})
        every, _ = pi.call({"type": "get_argument_completions", "name": "/commands"})
        nothing, _ = pi.call({"type": "get_argument_completions", "name": "session-name", "prefix": ""})
        unknown, _ = pi.call({"type": "get_argument_completions", "name": "nope"})
        missing, _ = pi.call({"type": "get_argument_completions"})
    assert typed["success"] is True
    assert typed["data"] == {"items": [{"value": "skill", "label": "skill", "description": "Skills"}]}
    assert [i["value"] for i in every["data"]["items"]] == ["extension", "prompt", "skill"]
    assert nothing["success"] is True and nothing["data"] == {"items": None}  # a command without completions
    assert unknown["success"] is False and unknown["error"] == "Unknown command: /nope"
    assert missing["success"] is False and missing["error"] == 'get_argument_completions: missing required field "name"'


def test_event_bus_carries_events_between_handlers(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    with rpc(pi_project, "event_bus") as pi:
        started, _ = pi.wait_for(is_ui("notify"))
        _, seen = pi.call({"type": "prompt", "message": "/emit deploy finished"})
        emitted, _ = pi.wait_for(is_ui("notify"), timeout=10) if not notices(seen) else (None, seen)
    assert started["message"] == "Event from event-bus-example: Session started"
    assert (notices(seen) or [emitted["message"]]) == ["Event from /emit command: deploy finished"]  # type: ignore[index]


# -- shutdown-command, structured-output ----------------------------------------------------------------


def test_quit_command_ends_pi(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    with rpc(pi_project, "shutdown_command") as pi:
        response, _ = pi.call({"type": "prompt", "message": "/quit"})
        assert response["success"] is True
        assert pi.wait(TIMEOUT) == 0  # stdin still open: pi ended by itself


def test_finish_and_exit_tool_ends_pi_after_the_answer(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script(tool_call("finish_and_exit", {}), "All done, exiting.")
    with rpc(pi_project, "shutdown_command") as pi:
        records = pi.prompt("finish up")
        assert pi.wait(TIMEOUT) == 0
    answers = [r["message"]["content"][0]["text"] for r in records
               if r.get("type") == "message_end" and r["message"]["role"] == "assistant" and r["message"]["content"]
               and r["message"]["content"][0]["type"] == "text"]
    assert answers == ["All done, exiting."]
    assert "Shutdown requested" in tool_messages(fake_provider_server.requests[1].body)[0]


def test_structured_output_ends_the_run_without_another_request(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner) -> None:
    fake_provider_server.script(tool_call("structured_output", {
        "headline": "Release 1.2", "summary": "Ready to ship.", "actionItems": ["tag", "publish"]}))
    result = json_run(run_pi, "structured_output", prompt="summarize as structured output")
    assert len(fake_provider_server.requests) == 1
    declared = [t["function"]["name"] for t in fake_provider_server.requests[0].body["tools"]]
    assert "structured_output" in declared  # active by default, as in pi
    end = result.events_of("tool_execution_end")[0]
    assert end["result"]["details"] == {"headline": "Release 1.2", "summary": "Ready to ship.",
                                        "actionItems": ["tag", "publish"]}
    assert result.events_of("agent_end")


# -- send-user-message, trigger-compact ----------------------------------------------------------------


def test_send_user_message_commands(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script("Four.", "Short answer.",
                                {"text": "working on it " * 40, "chunk_delay": 0.05}, "Steered.")
    with rpc(pi_project, "send_user_message") as pi:
        _, seen = pi.call({"type": "prompt", "message": "/ask"})
        assert notices(seen) == ["Usage: /ask <message>"]
        pi.settle(pi.call({"type": "prompt", "message": "/ask What is 2+2?"})[1])
        pi.settle(pi.call({"type": "prompt", "message": "/askwith tabs or spaces"})[1])
        pi.send({"type": "prompt", "message": "write an essay", "id": "essay"})
        pi.wait_for(lambda r: r.get("type") == "message_update")
        _, seen = pi.call({"type": "prompt", "message": "/steer Focus on tabs"})
        pi.settle(seen)
    assert user_texts(fake_provider_server.requests[0].body) == ["What is 2+2?"]
    assert user_texts(fake_provider_server.requests[1].body)[-1] == "User request: tabs or spaces\nPlease respond concisely."
    assert user_texts(fake_provider_server.requests[3].body)[-2:] == ["write an essay", "Focus on tabs"]
    assert len(fake_provider_server.requests) == 4


def test_trigger_compact_on_command_and_when_crossing_the_threshold(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    settings = pi_agent_dir / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "compaction": {"keepRecentTokens": 1}}))
    fake_provider_server.script(
        {"text": "one", "usage": {"prompt_tokens": 900, "completion_tokens": 5}}, "Summary: one.",
        {"text": "two", "usage": {"prompt_tokens": 105_000, "completion_tokens": 5}}, "Summary: two.",
        "Prefix: two.")  # the second compaction also summarizes the split turn's prefix
    with rpc(pi_project, "trigger_compact") as pi:
        pi.prompt("first")
        pi.send({"type": "prompt", "message": "/trigger-compact keep the numbers", "id": "c"})
        done, seen = pi.wait_for(is_ui("notify", lambda r: r["message"] != "Compaction started"))
        assert notices(seen) == ["Compaction started", "Compaction completed"]
        records = pi.prompt("second")
        done, more = pi.wait_for(is_ui("notify", lambda r: r["message"] != "Compaction started"))
        assert notices(records + more) == ["Compaction started", "Compaction completed"]
    assert "keep the numbers" in json.dumps(fake_provider_server.requests[1].body)  # the first summary request
    assert "keep the numbers" not in json.dumps(fake_provider_server.requests[3].body)
    compactions = [e for e in session_entries(pi_agent_dir) if e["type"] == "compaction"]
    assert len(compactions) == 2 and "Summary: one." in compactions[0]["summary"]
    assert "Summary: two." in compactions[1]["summary"]


# -- git-merge-and-resolve --------------------------------------------------------------------------------

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    import os
    import subprocess

    done = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_git_merge_and_resolve_hands_conflicts_to_the_agent(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path, tmp_path: Path) -> None:
    upstream, other = tmp_path / "upstream.git", tmp_path / "other"
    git(tmp_path, "init", "--bare", str(upstream))
    git(tmp_path, "clone", str(upstream), str(other))
    (other / "notes.txt").write_text("title\nbase\nend\n")
    git(other, "add", "notes.txt")
    git(other, "commit", "-m", "base")
    git(other, "push", "origin", "HEAD:main")
    project = pi_project / "repo"
    git(pi_project, "clone", str(upstream), str(project))
    (other / "notes.txt").write_text("title\ntheirs\nend\n")
    git(other, "commit", "-am", "theirs")
    git(other, "push", "origin", "HEAD:main")
    (project / "notes.txt").write_text("title\nours\nend\n")
    git(project, "commit", "-am", "ours")

    resolve = "printf 'title\\nmerged\\nend\\n' > notes.txt && git add notes.txt && git commit -qm merged"
    fake_provider_server.script("Committed.", tool_call("bash", {"command": resolve}), "Resolved.")
    result = run_pi("--mode", "json", "-e", str(example("git_merge_and_resolve")), "commit", cwd=project,
                    env=GIT_ENV, timeout=TIMEOUT)
    assert result.ok, str(result)
    assert len(fake_provider_server.requests) == 3, str(result)  # the follow-up started a run of its own
    follow_up = user_texts(fake_provider_server.requests[1].body)[-1]
    assert follow_up == ("Merged origin/main with conflicts:\n\n  notes.txt:2-6 (ours 3, theirs 5)\n\n"
                         "Resolve these conflicts.")
    assert (project / "notes.txt").read_text() == "title\nmerged\nend\n"
    assert "Merge" not in git(project, "status")  # resolved: the next agent_end found nothing to do


# -- file-trigger ---------------------------------------------------------------------------------------


def test_file_trigger_hands_the_file_to_the_agent(
        fake_provider_server: FakeProviderServer, pi_project: Path, tmp_path: Path) -> None:
    trigger = tmp_path / "trigger.txt"
    fake_provider_server.script("Running them.")
    with RpcProcess(pi_project, scripted=False, extensions=(example("file_trigger"),),
                    env={"PI_TRIGGER_FILE": str(trigger)}) as pi:
        watching, _ = pi.wait_for(is_ui("notify"))
        trigger.write_text("Run the tests\n")
        records = pi.settle()
    assert watching["message"] == f"Watching {trigger}"
    assert user_texts(fake_provider_server.requests[0].body)[-1] == "External trigger: Run the tests"
    assert trigger.read_text() == ""
    custom = [r for r in records if r.get("type") == "message_end" and r["message"]["role"] == "custom"]
    assert custom[0]["message"]["customType"] == "file-trigger"


# -- custom-compaction, summarize, handoff --------------------------------------------------------------


def _small_keep(agent_dir: Path) -> None:
    settings = agent_dir / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "compaction": {"keepRecentTokens": 1}}))


def test_custom_compaction_summarizes_everything_with_another_model(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    _small_keep(pi_agent_dir)
    fake_provider_server.script("Answer one.", "Answer two.", "## Goals\nEverything so far.")
    with RpcProcess(pi_project, scripted=False, extensions=(example("custom_compaction"),),
                    env={"PI_SUMMARY_MODEL": "fake-google/fake-model"}) as pi:
        pi.prompt("first question")
        pi.prompt("second question")
        response, seen = pi.call({"type": "compact"}, timeout=TIMEOUT)
    assert response["success"] is True, response
    assert notices(seen)[0] == "Custom compaction extension triggered"
    assert notices(seen)[1].startswith("Custom compaction: summarizing ") and "with fake-model" in notices(seen)[1]
    summary_request = fake_provider_server.requests[2]
    assert summary_request.api == "google-generative-ai"  # the summary model, not the session's
    asked = json.dumps(summary_request.body)
    assert "<conversation>" in asked and "first question" in asked and "second question" in asked
    compaction = [e for e in session_entries(pi_agent_dir) if e["type"] == "compaction"]
    assert [c["summary"] for c in compaction] == ["## Goals\nEverything so far."]


def test_custom_compaction_falls_back_when_the_model_is_unknown(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    _small_keep(pi_agent_dir)
    fake_provider_server.script("Answer one.", "Answer two.", "Default summary.", "Prefix summary.")
    with RpcProcess(pi_project, scripted=False, extensions=(example("custom_compaction"),),
                    env={"PI_SUMMARY_MODEL": "nowhere/none"}) as pi:
        pi.prompt("first question")
        pi.prompt("second question")
        response, seen = pi.call({"type": "compact"}, timeout=TIMEOUT)
    assert response["success"] is True, json.dumps(response)
    assert "Could not find the summary model, using the default compaction" in notices(seen)
    assert fake_provider_server.requests[2].api == "openai-completions"
    assert "Default summary." in [e["summary"] for e in session_entries(pi_agent_dir) if e["type"] == "compaction"][0]


def test_summarize_asks_the_summary_model_and_shows_the_answer(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script(tool_call("ls", {}), "There are no files.", "# Summary\nNothing yet.")
    with RpcProcess(pi_project, scripted=False, extensions=(example("summarize"),),
                    env={"PI_SUMMARY_MODEL": "fake-anthropic/fake-model"}) as pi:
        _, seen = pi.call({"type": "prompt", "message": "/summarize"})
        assert notices(seen) == ["No conversation text found"]
        pi.prompt("what is here?")
        _, seen = pi.call({"type": "prompt", "message": "/summarize"}, timeout=TIMEOUT)
    assert notices(seen) == ["Preparing summary...", "Conversation Summary\n# Summary\nNothing yet."]
    request = fake_provider_server.requests[2]
    assert request.api == "anthropic-messages"
    text = request.body["messages"][0]["content"][0]["text"]
    assert text.endswith("<conversation>\nUser: what is here?\n\nTool ls was called with args {}\n\n"
                         "Assistant: There are no files.\n</conversation>")


def test_handoff_starts_a_new_session_with_the_edited_prompt(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    fake_provider_server.script("We chose SQLite.", "## Context\nSQLite chosen.\n## Task\nAdd teams.", "On it.")
    with rpc(pi_project, "handoff") as pi:
        _, seen = pi.call({"type": "prompt", "message": "/handoff"})
        assert notices(seen) == ["Usage: /handoff <goal for new thread>"]
        pi.prompt("which database?")
        first, _ = pi.call({"type": "get_state"})
        pi.send({"type": "prompt", "message": "/handoff now add teams", "id": "h"})
        editor, _ = pi.wait_for(is_ui("editor"), timeout=TIMEOUT)
        assert editor["prefill"] == "## Context\nSQLite chosen.\n## Task\nAdd teams."
        pi.send({"type": "extension_ui_response", "id": editor["id"], "value": "Add teams (SQLite)."})
        draft, seen = pi.wait_for(is_ui("set_editor_text"))
        pi.response("h")
        pi.prompt(draft["text"])
        second, _ = pi.call({"type": "get_state"})
    assert draft["text"] == "Add teams (SQLite)."
    request = fake_provider_server.requests[1].body
    assert request["messages"][0]["role"] == "system" and "hand work over" in request["messages"][0]["content"]
    asked = request["messages"][1]["content"][0]["text"] if isinstance(request["messages"][1]["content"], list) \
        else request["messages"][1]["content"]
    assert "which database?" in asked and "We chose SQLite." in asked and asked.endswith("now add teams")
    assert second["data"]["sessionFile"] != first["data"]["sessionFile"]
    assert user_texts(fake_provider_server.requests[2].body) == ["Add teams (SQLite)."]  # a fresh conversation
    header = json.loads(Path(second["data"]["sessionFile"]).read_text().splitlines()[0])
    assert header["parentSession"] == first["data"]["sessionFile"]


# -- dynamic-resources, project-trust, system-prompt-header ----------------------------------------------


def test_dynamic_resources_adds_a_skill_and_a_prompt_template(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script("It is a small project.")
    with rpc(pi_project, "dynamic_resources") as pi:
        listed, _ = pi.call({"type": "get_commands"})
        pi.prompt("/dynamic")
    names = {c["name"]: c for c in listed["data"]["commands"]}
    assert names["dynamic"]["source"] == "prompt" and names["skill:dynamic-resources"]["source"] == "skill"
    body = fake_provider_server.requests[0].body
    assert "dynamic-resources" in body["messages"][0]["content"]  # the skill is listed in the system prompt
    assert user_texts(body)[-1] == ("Describe how this repository is laid out and name the commands that build "
                                    "and test it.")


def _project_with_extension(project: Path) -> None:
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "marker.py").write_text(
        "from pi_core import hookimpl\n\n"
        "@hookimpl\n"
        "def before_agent_start(event, ctx):\n"
        "    event.system_prompt += '\\nPROJECT-EXTENSION-LOADED'\n")


def test_project_trust_without_a_ui_leaves_it_to_pi(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    _project_with_extension(pi_project)
    fake_provider_server.script("ok")
    result = json_run(run_pi, "project_trust", prompt="hi")
    assert "PROJECT-EXTENSION-LOADED" not in fake_provider_server.requests[0].body["messages"][0]["content"]
    assert "skipped 1 project extension(s)" in result.stderr  # undecided: pi's own rule (not trusted) applied
    assert f"pi: project_trust fired for {pi_project} (mode: json)" in result.stderr  # pi: notices on stderr
    assert not (run_pi.agent_dir / "trust.json").exists()

    (run_pi.agent_dir / "trust.json").write_text(json.dumps({str(pi_project): True}))
    fake_provider_server.script("ok")
    json_run(run_pi, "project_trust", prompt="hi")  # decided before: the hook is not asked, the project loads
    assert "PROJECT-EXTENSION-LOADED" in fake_provider_server.requests[1].body["messages"][0]["content"]


@pytest.mark.parametrize(("answers", "loaded", "remembered", "note"), [
    (["1"], True, True, None),
    (["2", "reviewed the hooks"], True, True, "Recorded note: reviewed the hooks"),
    (["4"], False, None, None),
    (["5"], False, None, None)])  # "let pi decide": pi's own rule (not trusted without a prompt) applies
def test_project_trust_asks_through_ctx_ui_in_the_terminal(
        pi_project: Path, pi_agent_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        answers: list[str], loaded: bool, remembered: bool | None, note: str | None) -> None:
    from pi_core.extensions.manager import build_plugin_host
    from pi_core.modes.interactive.trust_ui import TrustPromptUI

    _project_with_extension(pi_project)
    typed = iter(answers)
    monkeypatch.setattr("builtins.input", lambda: next(typed))
    host = build_plugin_host(pi_project, agent_dir=pi_agent_dir, extension_paths=[example("project_trust")],
                             autoload=False, trust_ui=TrustPromptUI(), trust_mode="tui")
    err = capsys.readouterr().err
    assert f"Project trust for:\n{pi_project}" in err and "  1. Trust and remember" in err
    assert "project_trust fired for" in err and "(mode: tui)" in err
    assert host.is_project_trusted() is loaded
    assert ("project:marker" in host.records) is loaded
    trust = pi_agent_dir / "trust.json"
    assert (json.loads(trust.read_text()).get(str(pi_project)) if trust.exists() else None) == remembered
    assert (note in err) if note else "Recorded note" not in err


def test_project_trust_in_rpc_mode_has_no_ui_and_prints_its_notices_on_stderr(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    """pi 1.6: the trust question is settled before the protocol starts, so a ``project_trust`` handler gets
    ``ctx.mode == "rpc"``, ``ctx.has_ui`` false (dialogs answer "cancel") and its notices go to stderr; the RPC
    client sees nothing of it. ``ctx.ui`` from ``session_start`` does reach the client."""
    _project_with_extension(pi_project)
    fake_provider_server.script("ok")
    with rpc(pi_project, "project_trust") as pi:
        records = pi.prompt("hi")
        pi.close_stdin()
        assert pi.wait() == 0
    stderr = pi.stderr.decode()
    assert f"pi: project_trust fired for {pi_project} (mode: rpc)" in stderr
    assert "skipped 1 project extension(s)" in stderr  # undecided, no UI: not trusted, as pi decides
    assert "PROJECT-EXTENSION-LOADED" not in fake_provider_server.requests[0].body["messages"][0]["content"]
    every = [json.loads(line) for line in pi.raw_lines]
    assert not any("project_trust fired" in str(r) for r in every)
    assert [r["method"] for r in every if r.get("type") == "extension_ui_request"] == ["notify"]
    assert notices(every) == [f"project-trust example loaded after trust was resolved in {pi_project}"]
    assert any(r.get("type") == "agent_settled" for r in records)


def test_system_prompt_header_shows_the_prompts_length(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script("ok")
    with rpc(pi_project, "system_prompt_header") as pi:
        records = pi.prompt("hi")
    status = [r for r in records if r.get("type") == "extension_ui_request" and r.get("method") == "setStatus"]
    system = fake_provider_server.requests[0].body["messages"][0]["content"]
    assert status[0]["statusKey"] == "system-prompt" and status[0]["statusText"] == f"System: {len(system)} chars"


# -- bash-spawn-hook, ssh (the built-in tools with other operations) ---------------------------------------


def test_bash_spawn_hook_changes_every_command(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_home: Path) -> None:
    (pi_home / ".profile").write_text("export FROM_PROFILE=sourced\n")
    fake_provider_server.script(tool_call("bash", {"command": "echo $FROM_PROFILE $PI_SPAWN_HOOK"}), "Done.")
    result = json_run(run_pi, "bash_spawn_hook", prompt="check")
    assert tool_messages(fake_provider_server.requests[1].body)[0].strip() == "sourced 1"
    assert result.events_of("tool_execution_end")[0]["isError"] is False


FAKE_SSH = """#!/bin/sh
# a stand-in for ssh: the host is logged, the command runs here
echo "$1" >> "$(dirname "$0")/hosts.log"
shift
exec sh -c "$1"
"""


def _fake_ssh(tmp_path: Path) -> dict[str, str]:
    program = tmp_path / "bin" / "fake-ssh"
    program.parent.mkdir()
    program.write_text(FAKE_SSH)
    program.chmod(0o755)
    return {"PI_SSH_PROGRAM": str(program)}


def test_ssh_runs_the_tools_on_the_remote(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "app.txt").write_text("version = 1\n")
    fake_provider_server.script(
        [tool_call("write", {"path": "notes/hello.txt", "content": "written remotely\n"}),
         tool_call("read", {"path": "app.txt"})],
        [tool_call("edit", {"path": "app.txt", "edits": [{"oldText": "version = 1", "newText": "version = 2"}]}),
         tool_call("bash", {"command": "pwd; cat notes/hello.txt"})],
        "Done remotely.")
    result = run_pi("--mode", "json", "-e", str(example("ssh")), "--ssh", f"devbox:{remote}", "work remotely",
                    env=_fake_ssh(tmp_path), timeout=TIMEOUT)
    assert result.ok, str(result)
    assert (remote / "notes" / "hello.txt").read_text() == "written remotely\n"
    assert (remote / "app.txt").read_text() == "version = 2\n"
    assert not (pi_project / "notes").exists() and not (pi_project / "app.txt").exists()
    first, second = (tool_messages(r.body) for r in fake_provider_server.requests[1:3])
    assert "version = 1" in first[1]
    assert second[-1].splitlines()[:2] == [str(remote), "written remotely"]
    system = fake_provider_server.requests[0].body["messages"][0]["content"]
    assert f"{remote} (via SSH: devbox)" in system and str(pi_project) not in system
    assert set((tmp_path / "bin" / "hosts.log").read_text().split()) == {"devbox"}


def test_ssh_routes_user_bash_and_stays_local_without_the_flag(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    env = _fake_ssh(tmp_path)
    with RpcProcess(pi_project, "--ssh", f"devbox:{remote}", scripted=False, extensions=(example("ssh"),),
                    env=env) as pi:
        shown, _ = pi.wait_for(is_ui("notify"))
        response, _ = pi.call({"type": "bash", "command": "pwd"})
    assert shown["message"] == f"SSH mode: devbox:{remote}"
    assert response["data"]["output"].strip() == str(remote) and response["data"]["exitCode"] == 0

    fake_provider_server.script(tool_call("write", {"path": "local.txt", "content": "here"}), "Done.")
    json_run(run_pi, "ssh", prompt="write locally")
    assert (pi_project / "local.txt").read_text() == "here" and not (remote / "local.txt").exists()


# -- timed-confirm (dialogs dismissed by a timeout or an abort signal) -------------------------------------


def test_timed_confirm_dismisses_its_dialogs(fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    with RpcProcess(pi_project, scripted=False, extensions=(example("timed_confirm"),),
                    env={"PI_TIMED_CONFIRM_SECONDS": "0.5"}) as pi:
        pi.send({"type": "prompt", "message": "/timed-signal", "id": "s"})
        dialog, _ = pi.wait_for(is_ui("confirm"))
        assert dialog["title"] == "Timed Confirmation" and "timeout" not in dialog  # only the signal ends it
        warning, _ = pi.wait_for(is_ui("notify", lambda r: r.get("notifyType") == "warning"), timeout=TIMEOUT)
        assert warning["message"] == "Dialog timed out (auto-cancelled)"
        pi.send({"type": "extension_ui_response", "id": dialog["id"], "confirmed": True})  # too late: ignored
        pi.response("s")

        pi.send({"type": "prompt", "message": "/timed-select", "id": "t"})
        select, _ = pi.wait_for(is_ui("select"))
        assert select["options"] == ["Option A", "Option B", "Option C"] and select["timeout"] == 500
        shown, _ = pi.wait_for(is_ui("notify"), timeout=TIMEOUT)
        assert shown["message"] == "Selection cancelled or timed out"
        pi.response("t")

        _, seen = pi.call({"type": "get_state"})  # still answering: the late response did no harm
    assert not [r for r in seen if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]


# -- terminal components (custom-footer, custom-header, overlay-test, question, status-line...) ------------

TERMINAL_EXAMPLES = ("custom_footer", "custom_header", "working_indicator", "question", "status_line",
                     "theme_switch", "overlay_test", "plan_mode", "message_renderer", "built_in_tool_renderer")


def test_terminal_examples_over_rpc_send_plain_notices_and_no_components(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    fake_provider_server.script("hello back")
    with rpc(pi_project, *TERMINAL_EXAMPLES) as pi:
        _, seen = pi.call({"type": "prompt", "message": "/overlay-test"})
        assert notices(seen) == []  # custom() answers None and the client hears nothing, as in pi
        _, seen = pi.call({"type": "prompt", "message": "/counter-widget"})
        assert not any(is_ui("setWidget")(r) for r in seen)  # a component cannot travel
        for command, said in (("/footer", "Custom footer on"), ("/builtin-header", "Built-in header restored"),
                              ("/working-indicator dots", "Working indicator: dots"),
                              ("/theme-switch light", "Theme not switched: Theme switching not supported in RPC mode"),
                              ("/themes", "Themes: none")):
            _, seen = pi.call({"type": "prompt", "message": command})
            assert notices(seen) == [said]
        seen = pi.prompt("hi")
        statuses = [r["statusText"] for r in seen if is_ui("setStatus")(r)]
        assert statuses[-2:] == ["● Turn 1...", "✓ Turn 1 complete"]  # RPC's theme has no colour: plain text


def test_terminal_examples_in_json_mode_answer_without_a_ui(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner) -> None:
    ask = {"question": "Which?", "options": [{"label": "a"}, {"label": "b"}]}
    fake_provider_server.script(tool_call("question", ask), "ok")
    json_run(run_pi, *TERMINAL_EXAMPLES, prompt="ask me")
    assert "UI not available" in tool_messages(fake_provider_server.requests[1].body)[0]


# -- jev-router (a virtual model routing each request to a real one) ---------------------------------------


def _router_models(server: FakeProviderServer, agent_dir: Path) -> None:
    """Provider ``team`` with the router's models (``plan``, ``complex``, ``build``) and a ``judge``."""
    models = json.loads((agent_dir / "models.json").read_text())
    team = server.provider_config("openai-completions", model="plan", reasoning=True)
    team["models"] += [{**team["models"][0], "id": name, "name": name} for name in ("complex", "build", "judge")]
    models["providers"]["team"] = team
    (agent_dir / "models.json").write_text(json.dumps(models))


ROUTER_ENV = {"PI_ROUTER_COMPLEX": "team/complex", "PI_ROUTER_PLAN": "team/plan", "PI_ROUTER_BUILD": "team/build"}


def test_model_router_plans_on_the_classified_model_and_implements_on_the_cheap_one(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    _router_models(fake_provider_server, pi_agent_dir)
    (pi_project / "cache.py").write_text("SIZE = 1\n")
    fake_provider_server.script(
        "complex",  # the classifier's answer
        tool_call("edit", {"path": "cache.py", "edits": [{"oldText": "SIZE = 1", "newText": "SIZE = 2"}]}),
        "Done.", "You are welcome.")
    env = {**ROUTER_ENV, "PI_ROUTER_CLASSIFIER": "team/judge"}
    with RpcProcess(pi_project, "--thinking", "high", scripted=False, extensions=(example("model_router"),),
                    model=("router", "auto"), env=env) as pi:
        first = pi.prompt("Redesign the cache layer")
        second = pi.prompt("thanks")
        state, _ = pi.call({"type": "get_state"})
        _, seen = pi.call({"type": "prompt", "message": "/router"})
        entries, _ = pi.call({"type": "get_entries"})
    bodies = [r.body for r in fake_provider_server.requests]
    assert [b["model"] for b in bodies] == ["judge", "complex", "build", "build"]
    assert user_texts(bodies[0]) == ["Redesign the cache layer"] and "`complex`" in bodies[0]["messages"][0]["content"]
    assert [b.get("reasoning_effort") for b in bodies[1:]] == ["high", "high", "high"]  # the level passes through
    assert (pi_project / "cache.py").read_text() == "SIZE = 2\n"
    statuses = [r["statusText"] for r in first + second if is_ui("setStatus")(r) and r["statusKey"] == "router"]
    assert statuses == ["router → team/complex (user, planning)", "router → team/build (continuation, implementation)",
                        "router → team/build (user, implementation)"]
    assert notices(seen) == ["last request went to team/build (user request, implementation phase)"]
    assert state["data"]["model"]["provider"] == "router" and state["data"]["model"]["id"] == "auto"
    stored = [e["data"] for e in entries["data"]["entries"]
              if e["type"] == "custom" and e["customType"] == "pi.virtual-model-state"]
    assert stored == [{"provider": "router", "modelId": "auto", "state": {"phase": "planning", "model": "PI_ROUTER_COMPLEX"}},
                      {"provider": "router", "modelId": "auto",
                       "state": {"phase": "implementation", "model": "PI_ROUTER_BUILD"}}]  # stored once per change
    answers = [e["message"] for e in entries["data"]["entries"]
               if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [(a["provider"], a["model"], a["thinkingLevel"]) for a in answers] == [("team", "complex", "high"),
                                                                                ("team", "build", "high"),
                                                                                ("team", "build", "high")]
    # every request carries the whole conversation, whichever model served the turns before
    assert user_texts(bodies[3]) == ["Redesign the cache layer", "thanks"]


def test_model_router_without_a_classifier_plans_on_the_plan_model(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    _router_models(fake_provider_server, pi_agent_dir)
    fake_provider_server.script("Here is the plan.", "Still planning.")
    with RpcProcess(pi_project, scripted=False, extensions=(example("model_router"),), model=("router", "auto"),
                    env=ROUTER_ENV) as pi:
        pi.prompt("How should the cache work?")
        pi.prompt("And eviction?")
    assert [r.body["model"] for r in fake_provider_server.requests] == ["plan", "plan"]  # no edit: still planning


# -- plan-mode, git-checkpoint, todo ----------------------------------------------------------------------


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def ui_values(records: list[Record], method: str, key: str, field: str) -> list[Any]:
    keys = {"setStatus": "statusKey", "setWidget": "widgetKey"}
    return [r.get(field) for r in records if is_ui(method)(r) and r[keys[method]] == key]


PLAN = "Here is what I would do.\n\nPlan:\n1. Read the configuration file\n2. Change the port to 8080\n"


def test_plan_mode_plans_read_only_then_executes_and_tracks_the_steps(
        fake_provider_server: FakeProviderServer, pi_project: Path, pi_agent_dir: Path) -> None:
    (pi_project / "build").mkdir()
    fake_provider_server.script(
        tool_call("bash", {"command": "rm -rf build"}), PLAN,                       # planning (read-only)
        {"text": "Starting. [DONE:1]", "tool_calls": [{"name": "write",            # the plan's card arrives
                                                       "arguments": {"path": "port.txt", "content": "8080"}}]},
        "Config read, port file written.",
        "Port changed. [DONE:2]",                                                 # "Execute the plan." arrives
        "You are welcome.")                                                       # the next prompt
    with rpc(pi_project, "plan_mode") as pi:
        _, seen = pi.call({"type": "prompt", "message": "/todos"})
        assert notices(seen) == ["No todos. Create a plan first with /plan"]
        _, seen = pi.call({"type": "prompt", "message": "/plan"})
        assert notices(seen) == ["Plan mode enabled. Built-in write tools disabled."]
        assert "⏸ plan" in ui_values(seen, "setStatus", "plan-mode", "statusText")[-1]
        pi.send({"type": "prompt", "message": "change the port", "id": "p"})
        dialog, planning = pi.wait_for(is_ui("select"), timeout=TIMEOUT)
        assert dialog["title"] == "Plan mode - what next?"
        assert dialog["options"] == ["Execute the plan (track progress)", "Stay in plan mode", "Refine the plan"]
        _, seen = pi.call({"type": "prompt", "message": "/todos"})    # a command runs while the dialog waits
        assert notices(seen) == ["Plan Progress:\n1. ○ Configuration file\n2. ○ Change the port to 8080"]
        pi.send({"type": "extension_ui_response", "id": dialog["id"], "value": dialog["options"][0]})
        executing = pi.settle(planning + seen, timeout=TIMEOUT)
        pi.prompt("thanks")
    bodies = [r.body for r in fake_provider_server.requests]
    assert len(bodies) == 6
    # planning: no edit/write, a read-only bash, the hidden instructions with the prompt
    assert "edit" not in tool_names(bodies[0]) and "write" not in tool_names(bodies[0])
    assert {"read", "bash", "grep", "find", "ls"} <= set(tool_names(bodies[0]))
    assert any("[PLAN MODE ACTIVE]" in text for text in user_texts(bodies[0]))
    assert "Plan mode: command blocked (not allowlisted)" in tool_messages(bodies[1])[0]
    assert (pi_project / "build").is_dir()
    # executing: the tools are back, the plan travels as messages, the plan-mode instructions are gone
    assert {"edit", "write"} <= set(tool_names(bodies[2]))
    assert user_texts(bodies[2])[-1] == "**Plan Steps (2):**\n\n1. ☐ Configuration file\n2. ☐ Change the port to 8080"
    assert not any("[PLAN MODE ACTIVE]" in t for b in bodies[2:] for t in user_texts(b))
    execute = user_texts(bodies[4])[-1]
    assert execute.startswith("Execute the plan.") and "Start with: Configuration file" in execute
    assert (pi_project / "port.txt").read_text() == "8080"
    statuses = [plain(s) for s in ui_values(executing, "setStatus", "plan-mode", "statusText")]
    assert changes(statuses) == ["📋 0/2", "📋 1/2", "📋 2/2", None]      # ticked off by [DONE:n]; then gone
    widgets = ui_values(executing, "setWidget", "plan-todos", "widgetLines")
    assert changes([w and ["☑" in row for row in w] for w in widgets]) == [[False, False], [True, False],
                                                                          [True, True], None]
    # the completion card waits for the next prompt instead of costing a turn of its own
    assert user_texts(bodies[5])[-2:][0] == "thanks" and user_texts(bodies[5])[-1].startswith("**Plan Complete!** ✓")
    states = [e["data"] for e in session_entries(pi_agent_dir) if e.get("customType") == "plan-mode"]
    assert states[0]["enabled"] is True and states[-1] == {"enabled": False, "todos": [], "executing": False,
                                                          "toolsBeforePlanMode": None}


def plain(text: str | None) -> str | None:
    """``text`` without terminal styling (a theme may colour a status)."""
    import re

    return None if text is None else re.sub(r"\x1b\[[0-9;]*m", "", text)


def changes(values: list[Any]) -> list[Any]:
    """``values`` without consecutive repeats (a plugin may redraw the same state)."""
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


def test_plan_mode_starts_from_the_flag_and_resumes_from_the_session(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path) -> None:
    fake_provider_server.script("Looked around.", "Still planning.", "Back to work.")
    json_run(run_pi, "plan_mode", prompt="look around", args=("--plan",))
    first = fake_provider_server.requests[0].body
    assert "write" not in tool_names(first) and any("[PLAN MODE ACTIVE]" in t for t in user_texts(first))
    with rpc(pi_project, "plan_mode", args=("-c",)) as pi:     # on, off, on: each change is stored
        pi.call({"type": "prompt", "message": "/plan"})
        pi.call({"type": "prompt", "message": "/plan"})
        pi.call({"type": "prompt", "message": "/plan"})
    json_run(run_pi, "plan_mode", prompt="more", args=("-c",))  # resumed: plan mode again, without the flag
    resumed = fake_provider_server.requests[1].body
    assert "write" not in tool_names(resumed) and "edit" not in tool_names(resumed)
    assert sum("[PLAN MODE ACTIVE]" in t for t in user_texts(resumed)) == 2


def test_git_checkpoint_restores_the_code_when_forking_back(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    git(pi_project, "init", "-q")
    (pi_project / "notes.txt").write_text("v1\n")
    git(pi_project, "add", "notes.txt")
    git(pi_project, "commit", "-qm", "v1")
    (pi_project / "notes.txt").write_text("v2, not committed\n")
    fake_provider_server.script(tool_call("bash", {"command": "git checkout -- notes.txt"}), "Tidied up.",
                                "Nothing to do.")
    with rpc(pi_project, "git_checkpoint") as pi:
        pi.prompt("tidy the repository")
        assert (pi_project / "notes.txt").read_text() == "v1\n"          # the agent threw the change away
        pi.prompt("anything else?")
        forks, _ = pi.call({"type": "get_fork_messages"})
        first = forks["data"]["messages"][0]
        pi.send({"type": "fork", "entryId": first["entryId"], "id": "f"})
        dialog, _ = pi.wait_for(is_ui("select"))
        assert dialog["title"] == "Restore code state?"
        assert dialog["options"] == ["Yes, restore code to that point", "No, keep current code"]
        pi.send({"type": "extension_ui_response", "id": dialog["id"], "value": dialog["options"][0]})
        forked, seen = pi.response("f")
    assert forked["success"] is True and forked["data"]["text"] == "tidy the repository"
    assert notices(seen) == ["Code restored to checkpoint"]
    assert (pi_project / "notes.txt").read_text() == "v2, not committed\n"
    assert git(pi_project, "stash", "list") == ""                       # checkpoints never touched the stash list


def test_git_checkpoint_asks_nothing_when_the_tree_was_clean(
        fake_provider_server: FakeProviderServer, pi_project: Path) -> None:
    git(pi_project, "init", "-q")
    (pi_project / "notes.txt").write_text("v1\n")
    git(pi_project, "add", "notes.txt")
    git(pi_project, "commit", "-qm", "v1")                              # a clean tree: nothing to keep
    fake_provider_server.script("Nothing to do.", "Still nothing.")
    with rpc(pi_project, "git_checkpoint") as pi:
        pi.prompt("anything?")
        pi.prompt("and now?")
        forks, _ = pi.call({"type": "get_fork_messages"})
        forked, seen = pi.call({"type": "fork", "entryId": forks["data"]["messages"][1]["entryId"]})
    assert forked["success"] is True and not any(is_ui("select")(r) for r in seen)


def todo_call(action: str, **arguments: Any) -> Any:
    return tool_call("todo", {"action": action, **arguments})


def test_todo_keeps_its_list_in_the_session_and_follows_the_branch(
        fake_provider_server: FakeProviderServer, run_pi: PiRunner, pi_project: Path, pi_agent_dir: Path) -> None:
    fake_provider_server.script(
        [todo_call("add", text="Write tests"), todo_call("add", text="Fix the bug"), todo_call("toggle", id=1),
         todo_call("toggle", id=7), todo_call("add")], "Noted.",
        todo_call("list"), "Here they are.",                        # resumed: the list comes from the session
        todo_call("add", text="Ship it"), "Added.",
        todo_call("list"), "Listed.")                               # after the fork: as it was at that point
    json_run(run_pi, "todo", prompt="plan my day")
    assert tool_messages(fake_provider_server.requests[1].body) == [
        "Added todo #1: Write tests", "Added todo #2: Fix the bug", "Todo #1 completed", "Todo #7 not found",
        "Error: text required for add"]
    json_run(run_pi, "todo", prompt="what is left?", args=("-c",))
    assert tool_messages(fake_provider_server.requests[3].body)[-1] == "[x] #1: Write tests\n[ ] #2: Fix the bug"
    with rpc(pi_project, "todo", args=("-c",)) as pi:
        _, seen = pi.call({"type": "prompt", "message": "/todos"})
        assert [(r["message"], r["notifyType"]) for r in seen if is_ui("notify")(r)] == [
            ("/todos requires interactive mode", "error")]
        pi.prompt("one more")
        forks, _ = pi.call({"type": "get_fork_messages"})
        assert [m["text"] for m in forks["data"]["messages"]] == ["plan my day", "what is left?", "one more"]
        forked, _ = pi.call({"type": "fork", "entryId": forks["data"]["messages"][2]["entryId"]})
        assert forked["success"] is True
        pi.prompt("list them")
    assert tool_messages(fake_provider_server.requests[5].body)[-1] == "Added todo #3: Ship it"
    assert tool_messages(fake_provider_server.requests[7].body)[-1] == "[x] #1: Write tests\n[ ] #2: Fix the bug"
    results = [e["message"] for e in session_entries_all(pi_agent_dir)[0]
               if e.get("type") == "message" and e["message"]["role"] == "toolResult"]
    assert results[2]["details"] == {"action": "toggle", "nextId": 3, "todos": [
        {"id": 1, "text": "Write tests", "done": True}, {"id": 2, "text": "Fix the bug", "done": False}]}
    assert results[3]["details"]["error"] == "#7 not found"


def session_entries_all(agent_dir: Path) -> list[list[dict[str, Any]]]:
    """Every session file's entries, oldest file first."""
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return [[json.loads(line) for line in f.read_text().splitlines()] for f in files]


def test_reload_runtime_reloads_when_the_model_asks(
        fake_provider_server: FakeProviderServer, pi_project: Path, tmp_path: Path) -> None:
    import time

    log = tmp_path / "starts.txt"
    probe = tmp_path / "probe.py"  # records each session_start of the plugins (a reload imports them again)
    probe.write_text(f"from pi_core import hookimpl\n\n@hookimpl\ndef session_start(event, ctx):\n"
                     f"    with open({str(log)!r}, 'a') as f:\n        f.write(event.reason + '\\n')\n")
    fake_provider_server.script(tool_call("reload_runtime", {}), "not asked for")
    with RpcProcess(pi_project, scripted=False, extensions=(example("reload_runtime"), probe)) as pi:
        records = pi.prompt("reload yourself")
        deadline = time.monotonic() + TIMEOUT
        while log.read_text().split() != ["startup", "reload"] and time.monotonic() < deadline:
            time.sleep(0.05)  # the reload runs once pi has settled, after the prompt's records
        assert log.read_text().split() == ["startup", "reload"]
        pi.call({"type": "prompt", "message": "/reload-runtime"})
    assert len(fake_provider_server.requests) == 1          # the tool ended the run: no answer was asked for
    ends = [r for r in records if r.get("type") == "tool_execution_end"]
    assert [(r["toolName"], r["isError"]) for r in ends] == [("reload_runtime", False)]
    assert log.read_text().split() == ["startup", "reload", "reload"]   # the model's request, then the command
