"""JSON the program did not write (config files, a model's tool arguments) never takes it down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, write_agent_dir

from pi_core import JSON_MAX_DEPTH, JSONInputError, json_safe, parse_json

DEEP = '{"a":' + "[" * 5000 + "]" * 5000 + "}"


def pi(cwd: Path, agent: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, input="", env={**os.environ, "PI_CODING_AGENT_DIR": str(agent),
                                                     "PI_OFFLINE": "1"})


@pytest.mark.parametrize("name", ["settings.json", "models.json", "auth.json", "trust.json"])
def test_a_deeply_nested_config_file_is_no_traceback(tmp_path: Path, name: str) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / name).write_text(DEEP)
    result = pi(tmp_path, agent, "--provider", "faux", "--model", "echo", "-p", "still here")
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    if name == "trust.json":  # the trust store is refused with a message naming it
        assert str(agent / name) in result.stderr or result.returncode == 0
    else:
        assert (result.returncode, result.stdout) == (0, "still here\n"), result.stderr
        # said once, naming the file, instead of being ignored in silence
        (said,) = [line for line in result.stderr.splitlines() if str(agent / name) in line]
        assert said.startswith("pi: ") and "nested more than 200 levels deep" in said
    assert (agent / name).read_text() == DEEP  # never rewritten


def test_a_deeply_nested_mcp_json_is_reported_by_pi_mcp_list(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(DEEP)
    result = pi(tmp_path, agent, "mcp", "list")
    assert "Traceback" not in result.stderr
    assert f"{agent / 'mcp.json'}: nested more than {JSON_MAX_DEPTH} levels deep" in result.stdout + result.stderr


def test_deeply_nested_tool_arguments_become_an_error_result_and_the_run_goes_on(tmp_path: Path) -> None:
    nested: object = "x"
    for _ in range(500):
        nested = [nested]
    turns = [{"tool_calls": [{"id": "call_1", "name": "read", "arguments": {"path": nested}}]},
             {"tool_calls": [{"id": "call_2", "name": "read", "raw_arguments": '{"path": "a", "limit": 1e400}'}]},
             {"text": "recovered"}]
    with FakeOpenAI(turns) as server:
        write_agent_dir(tmp_path / "agent", server.base_url)
        result = pi(tmp_path, tmp_path / "agent", "--provider", "fake", "--model", "fake-model", "--mode", "json",
                    "-p", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in the JSON stream"))
              for line in result.stdout.splitlines()]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [True, True]
    texts = [e["result"]["content"][0]["text"] for e in ends]
    assert texts[0].startswith('Validation failed for tool "read"')  # what could be salvaged: nothing
    assert "Infinity" not in result.stdout and "inf" not in texts[1]
    answers = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert answers[-1]["content"][0]["text"] == "recovered"
    assert len(server.requests) == 3
    assert "Traceback" not in result.stderr


def test_parse_json_limits() -> None:
    assert parse_json("[" * JSON_MAX_DEPTH + "]" * JSON_MAX_DEPTH) is not None
    for text, message in [("[" * (JSON_MAX_DEPTH + 1) + "]" * (JSON_MAX_DEPTH + 1), "nested"),
                          ("[" * 100_000, "nested"), ("1e400", "too large"), ("NaN", "not valid JSON"),
                          ("9" * 5000, "digits"), ("{", "line 1")]:
        with pytest.raises(JSONInputError, match=message):
            parse_json(text)
    assert parse_json('{"s": "[[[[' + "[" * 500 + '"}') == {"s": "[[[[" + "[" * 500}  # brackets in strings
    with pytest.raises(JSONInputError, match="over the limit"):
        parse_json(b"[1, 2, 3]", max_bytes=4)
    assert parse_json(b'{"a":"\xff"}') == {"a": "\ufffd"}
    assert json_safe({"a": [float("inf"), float("-inf"), float("nan"), 2.5]}) == {"a": [None, None, None, 2.5]}


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "google-generative-ai"])
def test_a_stream_chunk_nested_too_deeply_is_no_crash(tmp_path: Path, api: str) -> None:
    """A provider's SSE chunk nested 5,000 deep ended the run with Python's "maximum recursion depth
    exceeded" (openai-completions) or a traceback; it is now a chunk that cannot be read, like any other."""
    from pi_core.testing import FakeProviderServer, Reply, anthropic_chunks, google_chunks, openai_chunks

    provider, encode = {"openai-completions": ("fake", openai_chunks),
                        "anthropic-messages": ("fake-anthropic", anthropic_chunks),
                        "google-generative-ai": ("fake-google", google_chunks)}[api]
    deep = ("event: content_block_delta\n" if api == "anthropic-messages" else "") + "data: " + DEEP + "\n\n"
    normal = encode({"text": "after the deep chunk"}, {"model": "fake-model"}, 1)
    reply = Reply(chunks=[*normal[:1], deep.encode(), *normal[1:]])
    with FakeProviderServer([reply] * 3) as server:
        server.write_models_json(tmp_path / "agent", default=api)
        result = pi(tmp_path, tmp_path / "agent", "--provider", provider, "--model", "fake-model", "-p", "go")
    assert "Traceback" not in result.stderr and "recursion" not in result.stderr + result.stdout
    assert result.returncode == 0 and "after the deep chunk" in result.stdout or \
        result.returncode == 1 and "nested" in result.stderr, (result.returncode, result.stdout, result.stderr)


def test_a_deeply_nested_faux_prompt_is_echoed(tmp_path: Path) -> None:
    result = pi(tmp_path, tmp_path / "agent", "--provider", "faux", "--model", "echo", "-p", DEEP)
    assert "recursion" not in result.stderr and "Traceback" not in result.stderr
    assert result.returncode == 0 and result.stdout.strip() == DEEP
