"""The built-in tools with other operations (``create_*_tool``): an ssh or container plugin reuses their
arguments, limits and messages and replaces where the work happens. Driven through a session whose
scripted model calls the tools."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core import (
    ExecResult,
    create_agent_session,
    create_bash_tool,
    create_edit_tool,
    create_read_tool,
    create_write_tool,
    hookimpl,
)
from pi_core.ai.faux import FauxProvider, faux_tool_call


class Remote:
    """A pretend remote machine: a dict of files and a shell that echoes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {"/srv/app/config.txt": b"port = 80\nhost = a\n"}
        self.dirs: set[str] = {"/srv/app"}
        self.commands: list[tuple[str, str]] = []

    async def read_file(self, path: Path) -> bytes:
        if str(path) in self.dirs:
            raise IsADirectoryError(str(path))
        try:
            return self.files[str(path)]
        except KeyError:
            raise FileNotFoundError(str(path)) from None

    async def access(self, path: Path) -> None:
        if str(path) not in self.files and str(path) not in self.dirs:
            raise FileNotFoundError(str(path))

    async def write_file(self, path: Path, data: bytes) -> None:
        self.files[str(path)] = data

    async def mkdir(self, path: Path) -> None:
        self.dirs.add(str(path))

    async def exec(self, command: str, cwd: Path, *, on_data: Any, signal: Any, timeout: Any, env: Any) -> ExecResult:
        self.commands.append((command, str(cwd)))
        on_data(f"[remote {cwd}] {command}\n".encode())
        return ExecResult(0 if "fail" not in command else 2)


class RemoteTools:
    __name__ = "remote-tools"

    def __init__(self, remote: Remote) -> None:
        self.remote = remote

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(create_read_tool(operations=self.remote), replaces="read")
        register(create_write_tool(operations=self.remote), replaces="write")
        register(create_edit_tool(operations=self.remote), replaces="edit")
        register(create_bash_tool(operations=self.remote), replaces="bash")


def run_turns(tmp_path: Path, calls: list[Any], plugin: Any) -> tuple[Any, FauxProvider]:
    faux = FauxProvider("faux-a", "alpha")
    faux.enqueue(calls, "done")

    async def scenario() -> Any:
        session = await create_agent_session(tmp_path, model=faux.model, plugins=[faux, plugin], session="memory",
                                             agent_dir=tmp_path / "agent")
        await session.prompt("go")
        return session

    return asyncio.run(asyncio.wait_for(scenario(), 30)), faux


def results(session: Any) -> list[tuple[str, bool]]:
    return [(m.content[0].text, m.is_error) for m in session.messages if m.role == "toolResult"]


def test_the_built_in_tools_work_through_other_operations(tmp_path: Path) -> None:
    remote = Remote()
    calls = [faux_tool_call("read", {"path": "/srv/app/config.txt", "offset": 2}),
             faux_tool_call("edit", {"path": "/srv/app/config.txt", "edits": [{"oldText": "port = 80",
                                                                                "newText": "port = 8080"}]}),
             faux_tool_call("write", {"path": "/srv/app/new/notes.md", "content": "hello"}),
             faux_tool_call("read", {"path": "/srv/app/missing.txt"}),
             faux_tool_call("bash", {"command": "systemctl restart app"}),
             faux_tool_call("bash", {"command": "fail now"})]
    session, _ = run_turns(tmp_path, calls, RemoteTools(remote))
    read, edited, written, missing, ran, failed = results(session)
    assert read == ("host = a\n", False)
    assert edited[0].startswith("Replaced 1 block in /srv/app/config.txt") and not edited[1]
    assert remote.files["/srv/app/config.txt"] == b"port = 8080\nhost = a\n"
    assert written == ("Wrote /srv/app/new/notes.md (5 bytes).", False)
    assert remote.files["/srv/app/new/notes.md"] == b"hello" and "/srv/app/new" in remote.dirs
    assert missing == ("File not found: /srv/app/missing.txt.", True)
    assert ran == (f"[remote {tmp_path}] systemctl restart app\n", False)
    assert failed[1] is True and "Command exited with code 2" in failed[0]
    assert not (tmp_path / "srv").exists()  # nothing touched this machine


def test_a_spawn_hook_changes_the_command_before_it_runs(tmp_path: Path) -> None:
    seen: list[str] = []

    def hook(command: str, cwd: Path, env: dict[str, str]) -> tuple[str, Path, dict[str, str]]:
        seen.append(command)
        return f"export GREETING=hi; {command}", cwd, {**env, "FROM_HOOK": "yes"}

    class Hooked:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(create_bash_tool(spawn_hook=hook), replaces="bash")

    session, _ = run_turns(tmp_path, [faux_tool_call("bash", {"command": 'echo "$GREETING $FROM_HOOK"'})], Hooked())
    assert seen == ['echo "$GREETING $FROM_HOOK"']
    assert results(session) == [("hi yes\n", False)]


def test_local_operations_keep_the_built_in_behaviour(tmp_path: Path) -> None:
    from pi_core import LocalBashOperations, LocalFileOperations

    (tmp_path / "a.txt").write_text("one\ntwo\n")
    local = LocalFileOperations()

    class Local:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(create_read_tool(operations=local, name="read_local"))
            register(create_bash_tool(operations=LocalBashOperations(), name="bash_local"))

    calls = [faux_tool_call("read_local", {"path": "a.txt"}), faux_tool_call("bash_local", {"command": "echo ok"})]
    session, faux = run_turns(tmp_path, calls, Local())
    assert results(session) == [("one\ntwo\n", False), ("ok\n", False)]
    assert {t.name for t in faux.requests[0].context.tools or []} >= {"read_local", "bash_local"}
