"""The other RPC commands end to end: queues, shell, sessions, models, thinking levels, commands, export."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_client import FIXTURES, Record, RpcProcess

SLOW = {"text": "slow " * 120, "chunk_delay_s": 0.05}  # ≈ 2 s: room for the queue commands


def write_script(tmp_path: Path, turns: list[dict]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns))
    return path


def answer_texts(records: list[Record]) -> list[str]:
    return [r["message"]["content"][0]["text"] for r in records
            if r["type"] == "message_end" and r["message"]["role"] == "assistant"]


def test_steer_follow_up_and_clear_queue_while_streaming(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, script=write_script(tmp_path, [SLOW, SLOW])) as pi:
        pi.send({"type": "prompt", "message": "go", "id": "p"})
        pi.wait_for(lambda r: (r.get("assistantMessageEvent") or {}).get("type") == "text_delta")
        steer, seen = pi.call({"type": "steer", "message": "and also"})
        queued, _ = pi.call({"type": "prompt", "message": "later", "streamingBehavior": "followUp"})
        state, _ = pi.call({"type": "get_state"})
        cleared, more = pi.call({"type": "clear_queue"})
        follow, _ = pi.call({"type": "follow_up", "message": "after that"})
        events = pi.settle(seen + more)
    assert steer["data"] == {"disposition": "queued"} and queued["data"] == {"disposition": "queued"}
    assert state["data"]["isStreaming"] is True and state["data"]["pendingMessageCount"] == 2
    assert cleared["data"] == {"steering": ["and also"], "followUp": ["later"]}
    assert follow["success"] is True
    updates = [r for r in events if r["type"] == "queue_update"]
    assert {"type": "queue_update", "steering": ["and also"], "followUp": []} in updates
    assert answer_texts(events) == [SLOW["text"], SLOW["text"]]  # the follow-up ran in the same run


def test_extension_commands_cannot_be_queued(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, extensions=(FIXTURES / "ui_extension.py",)) as pi:
        steer, _ = pi.call({"type": "steer", "message": "/ask now"})
    assert steer["success"] is False and steer["error"].startswith('Extension command "/ask" cannot be queued')


def test_bash_streams_output_and_reaches_the_next_prompt(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        result, seen = pi.call({"type": "bash", "command": "echo first; echo second", "id": "b1"})
        pi.prompt("what did it print?")
        messages, _ = pi.call({"type": "get_messages"})
    assert result["data"] == {"output": "first\nsecond\n", "exitCode": 0, "cancelled": False, "truncated": False}
    updates = [r for r in seen if r["type"] == "bash_execution_update"]
    assert updates and all(u["id"] == "b1" for u in updates)
    assert "".join(u["delta"] for u in updates) == "first\nsecond\n"
    roles = [m["role"] for m in messages["data"]["messages"]]
    assert "bashExecution" in roles and roles.index("bashExecution") < roles.index("assistant")


def test_abort_bash_cancels_the_command(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.send({"type": "bash", "command": "echo started; sleep 20", "id": "b"})
        pi.wait_for(lambda r: r.get("type") == "bash_execution_update")
        stopped, _ = pi.call({"type": "abort_bash"})
        result, _ = pi.response("b")
    assert stopped["success"] is True
    assert result["data"]["cancelled"] is True and result["data"]["output"].startswith("started")
    assert "exitCode" not in result["data"]  # pi leaves it out for a cancelled command


def test_session_name_stats_entries_and_tree(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.prompt("hello")
        named, _ = pi.call({"type": "set_session_name", "name": "  my work  "})
        empty, _ = pi.call({"type": "set_session_name", "name": "   "})
        state, _ = pi.call({"type": "get_state"})
        entries, _ = pi.call({"type": "get_entries"})
        first = entries["data"]["entries"][0]["id"]
        since, _ = pi.call({"type": "get_entries", "since": first})
        unknown, _ = pi.call({"type": "get_entries", "since": "nope"})
        tree, _ = pi.call({"type": "get_tree"})
        last, _ = pi.call({"type": "get_last_assistant_text"})
    assert named["success"] is True and "data" not in named
    assert empty == {"id": empty["id"], "type": "response", "command": "set_session_name", "success": False,
                     "error": "Session name cannot be empty"}
    assert state["data"]["sessionName"] == "my work"
    assert since["data"]["entries"] == entries["data"]["entries"][1:]
    assert unknown["error"] == "Entry not found: nope"
    assert tree["data"]["leafId"] == entries["data"]["leafId"]
    root = tree["data"]["tree"][0]
    assert root["entry"]["id"] == first and root["children"][0]["entry"]["id"] == entries["data"]["entries"][1]["id"]
    assert last["data"] == {"text": "echo: hello"}


def test_new_session_fork_clone_and_switch(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.prompt("one")
        pi.prompt("two")
        original = pi.call({"type": "get_state"})[0]["data"]["sessionFile"]
        forks, _ = pi.call({"type": "get_fork_messages"})
        second = forks["data"]["messages"][1]
        forked, _ = pi.call({"type": "fork", "entryId": second["entryId"]})
        after_fork, _ = pi.call({"type": "get_messages"})
        cloned, _ = pi.call({"type": "clone"})
        fresh, _ = pi.call({"type": "new_session"})
        empty, _ = pi.call({"type": "get_messages"})
        switched, _ = pi.call({"type": "switch_session", "sessionPath": original})
        back, _ = pi.call({"type": "get_state"})
        missing, _ = pi.call({"type": "switch_session", "sessionPath": str(tmp_path / "nope.jsonl")})
        bad_fork, _ = pi.call({"type": "fork", "entryId": "nope"})
    assert [m["text"] for m in forks["data"]["messages"]] == ["one", "two"]
    assert forked["data"] == {"text": "two", "cancelled": False}
    texts = [m["content"][0]["text"] for m in after_fork["data"]["messages"] if m["role"] == "user"]
    assert texts == ["one"]
    assert cloned["data"] == {"cancelled": False} and fresh["data"] == {"cancelled": False}
    assert [m for m in empty["data"]["messages"] if m["role"] == "user"] == []
    assert switched["data"] == {"cancelled": False} and back["data"]["sessionFile"] == original
    assert missing["success"] is False and "not found" in missing["error"]
    assert bad_fork["success"] is False


def test_models_and_thinking_levels(tmp_path: Path) -> None:
    with RpcProcess(tmp_path, env={"RPC_TEST_REASONING": "1"}) as pi:
        levels, _ = pi.call({"type": "get_available_thinking_levels"})
        set_high, _ = pi.call({"type": "set_thinking_level", "level": "high"})
        cycled, _ = pi.call({"type": "cycle_thinking_level"})
        models, _ = pi.call({"type": "get_available_models"})
        echo, _ = pi.call({"type": "set_model", "provider": "faux", "modelId": "echo"})
        state, _ = pi.call({"type": "get_state"})
        no_cycle, _ = pi.call({"type": "cycle_thinking_level"})
        cycle_model, _ = pi.call({"type": "cycle_model"})
    assert levels["data"]["levels"][:2] == ["off", "minimal"] and "high" in levels["data"]["levels"]
    assert set_high["success"] is True and "data" not in set_high
    expected_next = levels["data"]["levels"][levels["data"]["levels"].index("high") + 1:] or ["off"]
    assert cycled["data"] == {"level": expected_next[0]}
    ids = {(m["provider"], m["id"]) for m in models["data"]["models"]}
    assert ("fake", "fake-model") in ids and ("faux", "echo") not in ids  # faux only when asked for by name
    assert (echo["data"]["provider"], echo["data"]["id"]) == ("faux", "echo") and "baseUrl" in echo["data"]
    assert state["data"]["model"]["id"] == "echo" and state["data"]["thinkingLevel"] == "off"  # clamped
    assert no_cycle["data"] is None  # echo does not reason
    assert set(cycle_model["data"]) == {"model", "thinkingLevel", "isScoped"}
    assert cycle_model["data"]["model"]["id"] != "echo" and cycle_model["data"]["isScoped"] is False


def test_get_commands_lists_plugin_commands_templates_and_skills(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "prompts").mkdir(parents=True)
    (agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1\n")
    skill = agent_dir / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up imports\n---\nSort the imports.\n")
    with RpcProcess(tmp_path, extensions=(FIXTURES / "ui_extension.py",)) as pi:
        listed, _ = pi.call({"type": "get_commands"})
    by_name = {c["name"]: c for c in listed["data"]["commands"]}
    assert by_name["ask"]["source"] == "extension" and by_name["ask"]["description"] == "asks the user three things"
    assert by_name["review"]["source"] == "prompt" and by_name["review"]["description"] == "Review a file"
    assert by_name["skill:tidy"]["source"] == "skill"
    assert by_name["skill:tidy"]["sourceInfo"]["path"].endswith("SKILL.md")
    # a -e file's command carries pi's sourceInfo, as pi 1.6 gives its extension commands
    assert by_name["ask"]["sourceInfo"] == {"path": str(FIXTURES / "ui_extension.py"), "source": "cli",
                                            "scope": "temporary", "origin": "top-level", "baseDir": str(FIXTURES)}
    assert "path" not in by_name["ask"]
    # the extensions pi ships list their commands as pi lists them; pi's own commands (/model) are not listed
    assert by_name["mcp"]["sourceInfo"] == {"path": "builtin:mcp", "source": "builtin", "scope": "temporary",
                                            "origin": "top-level"}
    assert by_name["llama"]["sourceInfo"]["path"] == "builtin:llama.cpp"
    assert not {"model", "tree", "settings", "compact"} & set(by_name)


def test_export_html_writes_the_session_page(tmp_path: Path) -> None:
    with RpcProcess(tmp_path) as pi:
        pi.prompt("<b>bold?</b> & more")
        exported, _ = pi.call({"type": "export_html", "outputPath": "out/session.html"})
        default, _ = pi.call({"type": "export_html"})
    page = Path(exported["data"]["path"])
    assert page == (tmp_path / "out" / "session.html").resolve()
    text = page.read_text()
    assert "&lt;b&gt;bold?&lt;/b&gt; &amp; more" in text and "<b>bold?</b>" not in text
    assert Path(default["data"]["path"]).name.startswith("pi-session-")
    assert Path(default["data"]["path"]).parent == tmp_path.resolve()


def test_export_html_takes_the_theme_setting(tmp_path: Path, agent_dir: Path) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "light"}))
    with RpcProcess(tmp_path) as pi:
        pi.prompt("## A heading")
        exported, _ = pi.call({"type": "export_html", "outputPath": "light.html"})
    page = Path(exported["data"]["path"]).read_text()
    # pi 1.6's light theme: its export colours and its heading colour
    assert "--pageBg:#efeeee;--cardBg:#f7f6f6;--infoBg:#ede3dd" in page and "--mdHeading:#8f6802" in page
    assert "<h2>A heading</h2>" in page  # the user's message is markdown too, as in pi's export


def retrying_session(tmp_path: Path, agent_dir: Path) -> RpcProcess:
    """A session whose first answer fails with a retryable error and whose retry waits a minute."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 60000}}))
    script = write_script(tmp_path, [{"error": {"status": 503, "message": "503: overloaded"}},
                                     {"text": "the retry answered"}])
    return RpcProcess(tmp_path, script=script)


def test_abort_retry_ends_a_run_waiting_to_retry(tmp_path: Path, agent_dir: Path) -> None:
    with retrying_session(tmp_path, agent_dir) as pi:
        pi.send({"type": "prompt", "message": "hi", "id": "p"})
        retry, _ = pi.wait_for(lambda r: r.get("type") == "auto_retry_start")
        stopped, seen = pi.call({"type": "abort_retry"})
        pi.settle(seen)
        last, _ = pi.call({"type": "get_last_assistant_text"})
        state, _ = pi.call({"type": "get_state"})
    assert retry["delayMs"] == 60000 and stopped["success"] is True
    assert last["data"]["text"] != "the retry answered" and state["data"]["isStreaming"] is False


def test_abort_also_stops_a_run_waiting_to_retry(tmp_path: Path, agent_dir: Path) -> None:
    with retrying_session(tmp_path, agent_dir) as pi:
        pi.send({"type": "prompt", "message": "hi", "id": "p"})
        pi.wait_for(lambda r: r.get("type") == "auto_retry_start")
        aborted, seen = pi.call({"type": "abort"})
        again = pi.prompt("next")  # the session takes new prompts; the retry never happened
    assert aborted["success"] is True and any(r["type"] == "agent_settled" for r in seen)
    assert answer_texts(again) == ["the retry answered"]


def test_compact_over_rpc(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 3}}))
    turns = [{"text": "first answer"}, {"text": "second answer"}, {"text": "THE SUMMARY"}, {"text": "after"}]
    with RpcProcess(tmp_path, script=write_script(tmp_path, turns), env={"PI_CODING_AGENT_DIR": str(agent)}) as pi:
        for text in ("first question", "second question"):
            pi.call({"type": "prompt", "message": text})
            pi.settle([])
        response, seen = pi.call({"type": "compact", "customInstructions": "facts only", "id": "c1"})
        stats, _ = pi.call({"type": "get_session_stats"})
        messages, _ = pi.call({"type": "get_messages"})
    assert response["id"] == "c1" and response["success"] is True
    assert set(response["data"]) == {"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage",
                                     "details"}
    assert response["data"]["summary"].startswith("THE SUMMARY")
    kinds = [r["type"] for r in seen]
    assert kinds.index("compaction_start") < kinds.index("compaction_end")
    end = next(r for r in seen if r["type"] == "compaction_end")
    assert end["reason"] == "manual" and end["aborted"] is False and end["willRetry"] is False
    assert stats["data"]["contextUsage"]["tokens"] is None  # unknown until the next answer, as in pi
    roles = [m["role"] for m in messages["data"]["messages"]]
    assert "compactionSummary" in roles
