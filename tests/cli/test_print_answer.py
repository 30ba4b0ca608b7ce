"""``pi -p`` prints the run's final answer whatever happened to the message list (compaction, retries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_openai import FakeOpenAI, write_agent_dir

SMALL_WINDOW = {"compaction": {"enabled": True, "reserveTokens": 1000, "keepRecentTokens": 1000},
                "retry": {"baseDelayMs": 1}}


def pi(cwd: Path, agent: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, input=stdin, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)})


def small_model(agent: Path, base_url: str) -> None:
    write_agent_dir(agent, base_url, SMALL_WINDOW)
    models = json.loads((agent / "models.json").read_text())
    models["providers"]["fake"]["models"][0].update(contextWindow=8000, maxTokens=500)
    (agent / "models.json").write_text(json.dumps(models))


def test_print_mode_prints_the_answer_of_a_run_that_compacted(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    words = " ".join(f"word{i}" for i in range(1400))  # ~2,000 tokens a prompt
    # summary requests get the same reply as the main one: the point is that *an* answer is printed
    turns = [{"text": f"noted {n}"} for n in range(3)] + [{"text": "The final answer."}] * 20
    with FakeOpenAI(turns) as server:
        small_model(agent, server.base_url)
        args = ("--provider", "fake", "--model", "fake-model")
        for n in range(3):
            first = pi(tmp_path, agent, *args, *(["-c"] if n else []), "-p", f"part {n}: {words}")
            assert (first.returncode, first.stdout) == (0, f"noted {n}\n"), first.stderr
        result = pi(tmp_path, agent, *args, "-c", "-p", "and now?", stdin=" ".join([words] * 3))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The final answer.\n"
    [file] = (agent / "sessions").glob("*/*.jsonl")
    kinds = [json.loads(line)["type"] for line in file.read_text().splitlines()]
    assert "compaction" in kinds  # the run really compacted (the message list shrank)
    summaries = [r for r in server.requests if "<conversation>" in json.dumps(r["body"]["messages"][-1])]
    assert summaries


def test_print_mode_prints_the_answer_after_a_retry_and_fails_on_a_final_error(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    busy = {"error": {"status": 503, "message": "overloaded, try again"}}
    with FakeOpenAI([busy, {"text": "second time lucky"}, busy, busy, busy, busy]) as server:
        write_agent_dir(agent, server.base_url, {"retry": {"baseDelayMs": 1}})
        args = ("--provider", "fake", "--model", "fake-model", "--no-session")
        ok = pi(tmp_path, agent, *args, "-p", "hello")
        failed = pi(tmp_path, agent, *args, "-p", "hello again")
    assert (ok.returncode, ok.stdout) == (0, "second time lucky\n"), ok.stderr
    assert failed.returncode == 1 and failed.stdout == "" and "overloaded" in failed.stderr
