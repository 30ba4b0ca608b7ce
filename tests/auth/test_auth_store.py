"""auth.json as pi writes it: format, modes, pi's lock directory, atomic replacement, two writers."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pi_core.ai import CredentialStore, CredentialStoreError

OAUTH = {"type": "oauth", "access": "sk-ant-oat01-a", "refresh": "r1", "expires": 1767225600000}


def test_writes_pi_format_with_private_modes(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "auth.json"
    store = CredentialStore(path)
    store.set("anthropic", OAUTH)
    store.set("openai", {"type": "api_key", "key": "sk-é"})
    expected = {"anthropic": OAUTH, "openai": {"type": "api_key", "key": "sk-é"}}
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=2, ensure_ascii=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert CredentialStore(path).get("anthropic") == OAUTH
    assert sorted(CredentialStore(path).list()) == [("anthropic", "oauth"), ("openai", "api_key")]


def test_keeps_other_entries_unknown_fields_and_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    original = {"openai-codex": {**OAUTH, "accountId": "acct-1", "future": {"x": 1}},
                "someone-else": {"type": "future-kind", "blob": [1, 2]}}
    path.write_text(json.dumps(original))
    path.chmod(0o640)
    store = CredentialStore(path)
    store.set("groq", {"type": "api_key", "key": "gsk"})
    data = json.loads(path.read_text())
    assert data == {**original, "groq": {"type": "api_key", "key": "gsk"}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert store.get("someone-else") is None and any("someone-else" in e for e in store.errors)
    assert store.delete("groq") is True and store.delete("groq") is False
    assert json.loads(path.read_text()) == original


def test_a_broken_file_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"anthropic": {"type": "api_key", "key": "k"},')
    store = CredentialStore(path)
    assert store.read_all() == {} and "invalid JSON" in store.errors[0] and str(path) in store.errors[0]
    with pytest.raises(CredentialStoreError, match="invalid JSON"):
        store.set("openai", {"type": "api_key", "key": "x"})
    assert path.read_text() == '{"anthropic": {"type": "api_key", "key": "k"},'
    assert not (tmp_path / "auth.json.lock").exists()


def test_rejects_a_credential_pi_could_not_read(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "auth.json")
    with pytest.raises(CredentialStoreError, match="expires"):
        store.set("x", {"type": "oauth", "access": "a", "refresh": "r"})
    assert not (tmp_path / "auth.json").exists()


def test_waits_while_another_program_holds_pis_lock_directory(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text("{}")
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()  # what proper-lockfile (TypeScript pi) creates while it writes
    released: list[float] = []

    def holder() -> None:
        time.sleep(0.6)
        path.write_text(json.dumps({"written-by-pi": {"type": "api_key", "key": "k"}}))
        released.append(time.monotonic())
        lock.rmdir()

    thread = threading.Thread(target=holder)
    thread.start()
    CredentialStore(path).set("mine", {"type": "api_key", "key": "m"})
    done = time.monotonic()
    thread.join()
    assert released and done >= released[0]
    assert set(json.loads(path.read_text())) == {"written-by-pi", "mine"}
    assert not lock.exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()
    old = time.time() - 120
    os.utime(lock, (old, old))
    CredentialStore(path).set("p", {"type": "api_key", "key": "k"})
    assert json.loads(path.read_text()) == {"p": {"type": "api_key", "key": "k"}}
    assert not lock.exists()


def test_a_symlinked_auth_json_is_updated_through_the_link(tmp_path: Path) -> None:
    real = tmp_path / "secrets" / "pi-auth.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / "auth.json"
    link.symlink_to(real)
    CredentialStore(link).set("p", {"type": "api_key", "key": "k"})
    assert link.is_symlink() and json.loads(real.read_text()) == {"p": {"type": "api_key", "key": "k"}}
    assert not (tmp_path / "secrets" / "pi-auth.json.lock").exists()


def test_modify_sees_the_file_as_it_is_inside_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    store = CredentialStore(path)
    store.set("p", OAUTH)
    other = CredentialStore(path)
    other.read_all()  # a cached view that is about to go stale
    store.set("p", {**OAUTH, "access": "newer"})

    async def change(current: dict | None) -> dict | None:
        assert current is not None and current["access"] == "newer"
        return None  # keep it

    assert asyncio.run(other.modify("p", change))["access"] == "newer"
    assert other.get("p")["access"] == "newer"


WRITER = """
import sys
from pi_core.ai import CredentialStore
store = CredentialStore(sys.argv[1])
for i in range(int(sys.argv[3])):
    store.set(f"{sys.argv[2]}-{i}", {"type": "api_key", "key": f"k{i}"})
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, "25"]) for name in ("a", "b", "c")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    data = json.loads(path.read_text())
    assert sorted(data) == sorted(f"{n}-{i}" for n in "abc" for i in range(25))
    assert [p.name for p in tmp_path.iterdir()] == ["auth.json"]  # no lock or temporary files left
