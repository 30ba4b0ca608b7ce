"""``pi session check FILE [--repair]`` (a built-in plugin's sub-command), through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_core import SessionManager

REPO = Path(__file__).resolve().parents[2]
BASE = (REPO / "tests" / "fixtures" / "ai" / "pi-1.6.0" / "b_json_tools" / "session.jsonl").read_bytes()


def check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_core", "session", "check", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})


def damaged(tmp_path: Path) -> tuple[Path, bytes, str]:
    lines = BASE.split(b"\n")
    victim = json.loads(lines[5])
    lines[5] = lines[5][:70]  # not JSON any more, but its start names its id and parent
    data = b"\n".join(lines).rstrip(b"\n") + b"\n" + b'{"type":"message","id":"torn'
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    return path, data, victim["id"]


def test_a_sound_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    done = check(tmp_path, str(path))
    assert done.returncode == 0 and "no problems" in done.stdout
    assert path.read_bytes() == BASE


def test_problems_are_named_by_line_and_nothing_changes(tmp_path: Path) -> None:
    path, data, _ = damaged(tmp_path)
    done = check(tmp_path, str(path))
    assert done.returncode == 1
    assert "line 6: skipped: not valid JSON" in done.stdout
    assert "line 13" in done.stdout and "incomplete" in done.stdout
    assert path.read_bytes() == data and not list(tmp_path.glob("*.bak-*"))


def test_repair_keeps_a_backup_and_links_around_the_removed_line(tmp_path: Path) -> None:
    path, data, removed = damaged(tmp_path)
    done = check(tmp_path, str(path), "--repair")
    assert done.returncode == 0, done.stdout + done.stderr
    (backup,) = tmp_path.glob("s.jsonl.bak-*")
    assert backup.read_bytes() == data
    assert check(tmp_path, str(path)).returncode == 0
    kept = [line for n, line in enumerate(BASE.split(b"\n")) if n != 5 and line]
    repaired = path.read_bytes().split(b"\n")[:-1]
    assert len(repaired) == len(kept)
    manager = SessionManager.open(path, read_only=True)
    branch = manager.get_raw_branch()
    assert branch[0]["type"] == "model_change" and removed not in [e["id"] for e in branch]
    assert len(branch) == len(kept) - 1  # every entry is still on the path to the root


def test_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a":1}\n')
    done = check(tmp_path, str(path), "--repair")
    assert done.returncode == 1 and "not a pi session" in done.stdout and "Traceback" not in done.stderr
    assert path.read_text() == '{"a":1}\n'
