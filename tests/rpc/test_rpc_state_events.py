"""Events a client of pi relies on for state it shows: thinking level, session name, summarization retries."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_client import RpcProcess

LISTENER = '''
import json
from pathlib import Path
from pi_core import hookimpl

@hookimpl
def session_info_changed(event, ctx):
    with Path(__file__).with_name("names.log").open("a") as log:
        log.write(json.dumps(event.name) + "\\n")
'''


def test_thinking_level_and_session_name_changes_are_events_and_plugins_hear_the_name(tmp_path: Path) -> None:
    listener = tmp_path / "listener.py"
    listener.write_text(LISTENER)
    with RpcProcess(tmp_path, env={"RPC_TEST_REASONING": "1"}, extensions=(listener,)) as pi:
        _, seen_high = pi.call({"type": "set_thinking_level", "level": "high"})
        _, seen_same = pi.call({"type": "set_thinking_level", "level": "high"})
        cycled, seen_cycle = pi.call({"type": "cycle_thinking_level"})
        _, seen_name = pi.call({"type": "set_session_name", "name": "  release\nprep  "})
        state, _ = pi.call({"type": "get_state"})
        # the hook runs in the background; closing stdin ends pi once it has been heard
        pi.close_stdin()
        assert pi.wait() == 0
    assert {"type": "thinking_level_changed", "level": "high"} in seen_high
    assert not [r for r in seen_same if r["type"] == "thinking_level_changed"]  # no change, no event (as pi)
    assert {"type": "thinking_level_changed", "level": cycled["data"]["level"]} in seen_cycle
    stored = state["data"]["sessionName"]
    assert {"type": "session_info_changed", "name": stored} in seen_name
    assert [json.loads(line) for line in (tmp_path / "names.log").read_text().splitlines()] == [stored]


def test_a_retried_summary_reports_pi_summarization_retry_events(tmp_path: Path, agent_dir: Path) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 3},
                                                         "retry": {"baseDelayMs": 5, "maxRetries": 2}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "one"}, {"text": "two"},
                                  {"error": {"status": 503, "message": "503: overloaded"}},
                                  {"text": "SUMMARY AFTER RETRY"}]))
    with RpcProcess(tmp_path, script=script) as pi:
        pi.prompt("first")
        pi.prompt("second")
        done, seen = pi.call({"type": "compact"})
    assert done["success"] is True and done["data"]["summary"].startswith("SUMMARY AFTER RETRY")
    kinds = [r["type"] for r in seen if r["type"].startswith(("summarization_retry", "compaction_"))]
    assert kinds == ["compaction_start", "summarization_retry_scheduled", "summarization_retry_attempt_start",
                     "summarization_retry_finished", "compaction_end"]
    [scheduled] = [r for r in seen if r["type"] == "summarization_retry_scheduled"]
    assert scheduled == {"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 2, "delayMs": 5,
                         "errorMessage": scheduled["errorMessage"]} and "overloaded" in scheduled["errorMessage"]
    assert {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"} in seen
