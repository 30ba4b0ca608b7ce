"""The built-in tools with other operations (``create_*_tool``): an ssh or container plugin reuses their
arguments, limits and messages and replaces where the work happens. Driven through a session whose
scripted model calls the tools."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core import (
    ExecResult,
    GrepLine,
    GrepResult,
    SearchError,
    create_agent_session,
    create_bash_tool,
    create_edit_tool,
    create_find_tool,
    create_grep_tool,
    create_ls_tool,
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


class RemoteTree(Remote):
    """The pretend machine's directory listing and search (ls, find, grep operations)."""

    def __init__(self) -> None:
        super().__init__()
        self.files.update({"/srv/app/src/main.py": b"x = 1\nport = 80\n", "/srv/app/Zeta.md": b"z\n"})
        self.dirs.add("/srv/app/src")
        self.calls: list[tuple[str, Any]] = []

    async def exists(self, path: Path) -> bool:
        return str(path) in self.files or str(path) in self.dirs

    async def is_dir(self, path: Path) -> bool:
        if not await self.exists(path):
            raise FileNotFoundError(str(path))
        return str(path) in self.dirs

    async def readdir(self, path: Path) -> list[str]:
        prefix = str(path).rstrip("/") + "/"
        children = {p[len(prefix):].split("/")[0] for p in [*self.files, *self.dirs] if p.startswith(prefix)}
        return sorted(children, reverse=True)  # any order: the tool sorts

    async def glob(self, pattern: str, root: Path, *, ignore: Any, limit: int, signal: Any) -> list[str]:
        self.calls.append(("glob", (pattern, str(root), list(ignore), limit)))
        suffix = pattern.lstrip("*")
        hits = [p for p in sorted(self.files) if p.startswith(str(root) + "/") and p.endswith(suffix)]
        return [*hits, "/srv/app/src/"][:limit]

    async def grep(self, target: Path, pattern: str, *, ignore_case: bool, literal: bool, context: int,
                   glob: str | None, limit: int, signal: Any) -> GrepResult:
        self.calls.append(("grep", (str(target), pattern, ignore_case, literal, context, glob, limit)))
        if pattern == "(":
            raise SearchError("Invalid regular expression '('")
        if not await self.exists(target):
            raise FileNotFoundError(str(target))
        lines = [GrepLine(path[len(str(target)) + 1:], number, text, True)
                 for path, data in sorted(self.files.items()) if path.startswith(str(target) + "/")
                 for number, text in enumerate(data.decode().splitlines(), 1) if pattern in text]
        return GrepResult(lines[:limit], min(len(lines), limit), len(lines) > limit, "remote")


class RemoteSearch:
    __name__ = "remote-search"

    def __init__(self, remote: RemoteTree) -> None:
        self.remote = remote

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(create_grep_tool(operations=self.remote), replaces="grep")
        register(create_find_tool(operations=self.remote), replaces="find")
        register(create_ls_tool(operations=self.remote), replaces="ls")


def test_grep_find_and_ls_work_through_other_operations(tmp_path: Path) -> None:
    remote = RemoteTree()
    calls = [faux_tool_call("ls", {"path": "/srv/app"}),
             faux_tool_call("ls", {"path": "/srv/app", "limit": 2}),
             faux_tool_call("ls", {"path": "/srv/app/Zeta.md"}),
             faux_tool_call("find", {"pattern": "*.py", "path": "/srv/app"}),
             faux_tool_call("find", {"pattern": "*.md", "path": "/srv/app", "limit": 1}),
             faux_tool_call("find", {"pattern": "*.py", "path": "/srv/none"}),
             faux_tool_call("grep", {"pattern": "port", "path": "/srv/app", "ignoreCase": True, "context": 1}),
             faux_tool_call("grep", {"pattern": "port", "path": "/srv/app", "limit": 1}),
             faux_tool_call("grep", {"pattern": "nothing", "path": "/srv/app"}),
             faux_tool_call("grep", {"pattern": "x", "path": "/srv/none"}),
             faux_tool_call("grep", {"pattern": "(", "path": "/srv/app"})]
    session, faux = run_turns(tmp_path, calls, RemoteSearch(remote))
    (ls_all, ls_two, ls_file, find_py, find_md, find_missing, grep_all, grep_one, grep_none, grep_missing,
     grep_bad) = results(session)
    assert ls_all == ("config.txt\nsrc/\nZeta.md", False)
    assert ls_two[0].startswith("config.txt\nsrc/\n\n[Stopped at 2 entries; pass limit=4 for more]")
    assert ls_file == ("Not a directory: /srv/app/Zeta.md", True)
    assert find_py == ("src/main.py\nsrc/", False)           # absolute results made relative, '/' kept
    assert find_md[0].startswith("Zeta.md\n\n[Stopped at 1 results")
    assert find_missing == ("Path not found: /srv/none", True)
    assert ("glob", ("*.py", "/srv/app", ["**/node_modules/**", "**/.git/**"], 1001)) in remote.calls
    assert grep_all == ("config.txt:1: port = 80\nsrc/main.py:2: port = 80", False)
    assert grep_one[0].startswith("config.txt:1: port = 80\n\n[Stopped at 1 matches")
    assert grep_none == ("No matches found", False)
    assert grep_missing == ("Path not found: /srv/none", True)
    assert grep_bad == ("Invalid regular expression '('", True)
    assert ("grep", ("/srv/app", "port", True, False, 1, None, 100)) in remote.calls
    assert not (tmp_path / "srv").exists()
    declared = {t.name: t for t in faux.requests[0].context.tools or []}
    assert {"grep", "find", "ls"} <= set(declared)


def test_local_file_operations_search_like_the_built_ins(tmp_path: Path) -> None:
    from pi_core import LocalFileOperations

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "b.py").write_text("x = 2\n")
    local = LocalFileOperations()

    async def scenario() -> tuple[list[str], list[str], list[str], bool, GrepResult]:
        found = await local.glob("*.py", tmp_path, ignore=[], limit=10, signal=None)
        kept = await local.glob("*.py", tmp_path, ignore=["**/node_modules/**"], limit=10, signal=None)
        names = await local.readdir(tmp_path)
        is_dir = await local.is_dir(tmp_path / "pkg")
        hits = await local.grep(tmp_path, "x =", ignore_case=False, literal=True, context=0, glob=None, limit=10,
                                signal=None)
        return found, kept, names, is_dir, hits

    found, kept, names, is_dir, hits = asyncio.run(scenario())
    assert found == ["node_modules/b.py", "pkg/a.py"]
    assert kept == ["pkg/a.py"]
    assert sorted(names) == ["node_modules", "pkg"] and is_dir
    assert [(line.path, line.line) for line in hits.lines] == [("node_modules/b.py", 1), ("pkg/a.py", 1)]

    class Local:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(create_ls_tool(operations=local, name="ls_local"))
            register(create_find_tool(operations=local, name="find_local"))
            register(create_grep_tool(operations=local, name="grep_local"))

    calls = [faux_tool_call("ls_local", {}), faux_tool_call("find_local", {"pattern": "*.py"}),
             faux_tool_call("grep_local", {"pattern": "x = 1"})]
    session, _ = run_turns(tmp_path, calls, Local())
    assert results(session) == [("node_modules/\npkg/", False), ("node_modules/b.py\npkg/a.py", False),
                                ("pkg/a.py:1: x = 1", False)]
