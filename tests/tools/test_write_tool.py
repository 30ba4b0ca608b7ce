"""The write tool: create, overwrite, parent directories, line-ending style, errors, the lock."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from conftest import load_tool, recorded_results, run_tool, run_tool_error

from pi_core import ToolContext, file_mutation_lock

WRITE = load_tool("write")


def test_schema_is_pi_16s() -> None:
    assert WRITE.parameters["required"] == ["path", "content"]
    assert list(WRITE.parameters["properties"]) == ["path", "content"]
    assert WRITE.capabilities.writes and not WRITE.capabilities.concurrency_safe


def test_recorded_write_creates_parent_directories(workspace) -> None:
    ws = workspace("b2_all_tools")
    (rec,) = recorded_results("b2_all_tools", "write")
    result = run_tool(WRITE, rec["arguments"], ws)
    assert not result.is_error and "out/summary.txt" in result.text_content()
    assert (ws / "out" / "summary.txt").read_bytes() == b"summary line 1\nsummary line 2\n"


def test_overwrite_keeps_mode_and_follows_symlinks(tmp_path: Path) -> None:
    target = tmp_path / "real.sh"
    target.write_text("old")
    target.chmod(0o755)
    link = tmp_path / "link.sh"
    link.symlink_to(target)
    result = run_tool(WRITE, {"path": "link.sh", "content": "#!/bin/sh\necho hi\n"}, tmp_path)
    assert "Overwrote" in result.text_content()
    assert link.is_symlink() and target.read_text() == "#!/bin/sh\necho hi\n"
    assert os.stat(target).st_mode & 0o777 == 0o755
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".pi-tmp")]


def test_crlf_and_bom_files_keep_their_style(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    text = run_tool(WRITE, {"path": "w.txt", "content": "x\ny\n"}, tmp_path).text_content()
    assert "CRLF" in text
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfx\r\ny\r\n"
    run_tool(WRITE, {"path": "new.txt", "content": "x\ny\n"}, tmp_path)
    assert (tmp_path / "new.txt").read_bytes() == b"x\ny\n"


def test_errors(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert "directory" in run_tool_error(WRITE, {"path": "d", "content": "x"}, tmp_path)
    (tmp_path / "file").write_text("x")
    assert "not a directory" in run_tool_error(WRITE, {"path": "file/sub.txt", "content": "x"}, tmp_path)
    assert (tmp_path / "file").read_text() == "x"


def test_concurrent_writers_to_one_file_are_serialised(tmp_path: Path) -> None:
    order: list[str] = []

    async def holder() -> None:
        async with file_mutation_lock(tmp_path / "f.txt"):
            order.append("holder in")
            await asyncio.sleep(0.2)
            (tmp_path / "f.txt").write_text("holder")
            order.append("holder out")

    async def main() -> None:
        task = asyncio.create_task(holder())
        await asyncio.sleep(0.05)
        ctx = ToolContext(tool_call_id="w", cwd=tmp_path)
        await WRITE.run({"path": "f.txt", "content": "tool"}, ctx)
        order.append("tool done")
        await task

    asyncio.run(main())
    assert order == ["holder in", "holder out", "tool done"]
    assert (tmp_path / "f.txt").read_text() == "tool"
