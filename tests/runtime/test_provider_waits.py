"""The two provider waits of issue 16, through a real `pi -p` against a local fake server (a real socket):

* a server that accepts the request and then goes silent — before the response headers, or in the
  middle of the stream — is cut off after ``httpIdleTimeoutMs``, retried once, then reported clearly;
* a ``429`` whose ``Retry-After`` is longer than the agent's retries may wait ends the run at once with
  the wait and the time to try again; a short one is waited for.

The retries use pi's defaults except a short base delay.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pi_core.testing import FakeProviderServer, Recorded, Reply, as_turn, json_reply, openai_chunks
from pi_core.testing.server import encode_turn

SILENT = 120.0  # far longer than the idle limit: the server never answers in time
IDLE_MS = 1000


def silent_before_headers() -> Reply:
    return Reply(chunks=[], delay=SILENT)


def silent_mid_stream(request: object) -> Reply:
    chunks = openai_chunks({"text": "half an answer that never ends"}, {"model": "fake-model"}, 1)
    return Reply(chunks=chunks[:2], chunk_delay=SILENT)  # the start of the stream, then silence


def run(tmp_path: Path, server: FakeProviderServer) -> subprocess.CompletedProcess[str]:
    # the server's first answer imports the message model (seconds on a loaded machine): not in pi's time
    encode_turn(as_turn({"text": "warm"}), Recorded("POST", "/v1/chat/completions", {}, {"model": "fake-model"}), 0)
    agent = tmp_path / "agent"
    server.write_models_json(agent, settings={"httpIdleTimeoutMs": IDLE_MS, "retry": {"baseDelayMs": 50}})
    return subprocess.run([sys.executable, "-m", "pi_core", "--no-session", "-p", "hello"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, input="",
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})


def requests_seen(server: FakeProviderServer, expected: int) -> int:
    """The server records a request once it read the body; give a loaded machine time to catch up."""
    deadline = time.monotonic() + 30
    while len(server.requests) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # and a moment more, so that an extra request would be seen too
    return len(server.requests)


def test_silent_before_the_headers_is_retried_once_then_a_clear_error(tmp_path: Path) -> None:
    with FakeProviderServer([silent_before_headers() for _ in range(4)]) as server:
        result = run(tmp_path, server)
        seen = requests_seen(server, 2)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("Provider idle timeout: nothing received for 1 s"), result.stderr
    assert "httpIdleTimeoutMs" in result.stderr and "Traceback" not in result.stderr
    assert seen == 2  # the request and one retry, not retry.maxRetries (3) of them


def test_silent_in_the_middle_of_the_stream_is_retried_once_then_a_clear_error(tmp_path: Path) -> None:
    with FakeProviderServer([silent_mid_stream for _ in range(4)]) as server:
        result = run(tmp_path, server)
        seen = requests_seen(server, 2)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("Provider idle timeout: nothing received for 1 s"), result.stderr
    assert "Traceback" not in result.stderr
    assert seen == 2


def test_the_one_retry_gets_the_answer_when_the_server_recovers(tmp_path: Path) -> None:
    with FakeProviderServer([silent_mid_stream, {"text": "the answer"}]) as server:
        result = run(tmp_path, server)
        seen = requests_seen(server, 2)
    assert (result.returncode, result.stdout) == (0, "the answer\n"), result.stderr
    assert seen == 2


def rate_limited(retry_after: str) -> Reply:
    return json_reply(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                      {"retry-after": retry_after})


def test_a_retry_after_beyond_the_cap_stops_and_says_when_to_try_again(tmp_path: Path) -> None:
    with FakeProviderServer([rate_limited("3600") for _ in range(4)]) as server:
        result = run(tmp_path, server)
        seen = requests_seen(server, 1)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("The provider asks to wait 3600 s before retrying, longer than "
                                    "retry.maxAgentDelayMs allows (60 s): try again after "), result.stderr
    assert "UTC. 429: " in result.stderr and "Rate limit reached" in result.stderr
    assert seen == 1  # not retried


def test_a_retry_after_days_away_gives_the_date(tmp_path: Path) -> None:
    import time

    with FakeProviderServer([rate_limited("Fri, 31 Dec 2099 23:59:59 GMT") for _ in range(4)]) as server:
        result = run(tmp_path, server)
    assert result.returncode == 1
    assert "try again after 2099-12-31 23:59:" in result.stderr, result.stderr  # not just a time of day
    with FakeProviderServer([rate_limited("7200") for _ in range(4)]) as server:
        result = run(tmp_path, server)
    soon = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 7200))
    assert "try again after " in result.stderr and f"after {soon}" not in result.stderr  # a time of day


def test_a_short_retry_after_is_waited_for(tmp_path: Path) -> None:
    with FakeProviderServer([rate_limited("1"), {"text": "after the wait"}]) as server:
        result = run(tmp_path, server)
        seen = requests_seen(server, 2)
    assert (result.returncode, result.stdout) == (0, "after the wait\n"), result.stderr
    assert seen == 2
