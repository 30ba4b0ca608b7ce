"""The ``write`` tool: create or replace a whole file, making parent directories as needed.

:func:`create_write_tool` makes one that writes through other ``operations`` (a remote machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_core import (
    Tool,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    WriteOperations,
    hookimpl,
    run_blocking,
)

DESCRIPTION = (
    "Create a file with the given content, or replace an existing file's content entirely. Missing "
    "parent directories are created. For changes to part of an existing file, use edit instead."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "content"],
    "properties": {
        "path": {"type": "string", "description": "File to write; relative to the working directory or absolute"},
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
}


def _encode(content: str, path: Path) -> tuple[bytes, str]:
    """The bytes to write; an existing CRLF or BOM file keeps its style when the content has neither."""
    note = ""
    data = content.encode("utf-8", "surrogatepass")
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return data, note
    if head.startswith(b"\xef\xbb\xbf") and not content.startswith("\ufeff"):
        data = b"\xef\xbb\xbf" + data
    lf = head.count(b"\n")
    if lf and head.count(b"\r\n") == lf and "\r" not in content and "\n" in content:
        data = data.replace(b"\n", b"\r\n")
        note = " (kept the file's CRLF line endings)"
    return data, note


def _write(path: Path, content: str) -> str:
    from pi_core import SpecialFileError, atomic_write, check_regular_file

    if path.is_dir():
        raise ToolError(f"{path} is a directory; give a file path to write.")
    try:
        check_regular_file(path, "write")
    except SpecialFileError as e:
        raise ToolError(str(e)) from e
    data, note = _encode(content, path)
    try:
        atomic_write(path, data)
    except PermissionError as e:
        raise ToolError(f"Permission denied writing {path}") from e
    except (NotADirectoryError, FileExistsError) as e:
        raise ToolError(f"Cannot create {path}: a parent path is a file, not a directory") from e
    return note


def _executor(operations: WriteOperations | None) -> Any:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core import file_mutation_lock

        path_arg = str(params["path"])
        content = params["content"]
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        path = ctx.resolve(path_arg)
        size = len(content.encode("utf-8", "surrogatepass"))
        async with file_mutation_lock(path):
            ctx.signal.throw_if_aborted()
            if operations is not None:
                await _write_through(operations, path, path_arg, content)
                return ToolResult.text(f"Wrote {path_arg} ({size} bytes).")
            existed = path.exists()
            note = await run_blocking(_write, path, content, signal=ctx.signal, name="write")
        verb = "Overwrote" if existed else "Created"
        return ToolResult.text(f"{verb} {path_arg} ({size} bytes){note}.")

    return execute


async def _write_through(operations: WriteOperations, path: Path, path_arg: str, content: str) -> None:
    try:
        await operations.mkdir(path.parent)
        await operations.write_file(path, content.encode("utf-8", "surrogatepass"))
    except PermissionError as e:
        raise ToolError(f"Permission denied writing {path}") from e
    except IsADirectoryError as e:
        raise ToolError(f"{path} is a directory; give a file path to write.") from e


execute = _executor(None)


def create_write_tool(*, operations: WriteOperations | None = None, name: str = "write") -> Tool:
    """The built-in ``write`` tool, writing through ``operations`` (default: this machine's files, replaced
    atomically). Register it with ``register(tool, replaces="write")`` to take the built-in's place."""
    from pi_core import is_local

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute if is_local(operations) else _executor(operations),
        capabilities=ToolCapabilities(writes=True),
        prompt_snippet="Create a file or replace all of its content",
        prompt_guidelines=["Use write for new files or full rewrites only; use edit to change part of a file."],
    )


def make_write_tool() -> Tool:
    """A fresh ``write`` tool."""
    return create_write_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_write_tool())
