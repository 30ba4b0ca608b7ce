"""The ``read`` tool: a file's text (paged with offset/limit, cut at 2000 lines / 50 KB) or an image.

:func:`create_read_tool` makes one that reads through other ``operations`` (a remote machine), with the
same paging, limits and messages.
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_core import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    ImageContent,
    ReadOperations,
    TextContent,
    Tool,
    ToolCapabilities,
    ToolContext,
    ToolError,
    ToolResult,
    format_size,
    hookimpl,
    run_blocking,
    truncate_head,
)

DESCRIPTION = (
    "Show the contents of a file. Text comes back as-is; images (png, jpeg, gif, webp, bmp — recognised "
    f"by their bytes) come back as image attachments. Text is capped at {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB per call, whichever comes first; when more remains, the output ends "
    "with the offset to pass next. Use offset and limit to page through long files."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path"],
    "properties": {
        "path": {"type": "string", "description": "File to show; relative to the working directory or absolute"},
        "offset": {"type": "number", "description": "First line to show, counting from 1"},
        "limit": {"type": "number", "description": "Most lines to show"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "string"},
    {"type": "object", "required": ["type", "data", "mimeType", "note"],
     "properties": {"type": {"const": "image"}, "data": {"type": "string"}, "mimeType": {"type": "string"},
                    "note": {"type": "string"}}},
]}
"""``structured_content``, which codemode scripts receive: the text, or an image block with its note."""

_CHUNK = 1 << 20
_STORE_CAP = DEFAULT_MAX_BYTES + 1


@dataclass
class _Selection:
    lines: list[str]
    total_file_lines: int
    selected_lines: int
    first_line_bytes: int


def _file_chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            yield chunk


def _select_lines(chunks: Iterable[bytes], start: int, end: float) -> _Selection:
    """Go through the file's bytes in chunks, keeping only the selected lines that the output can show."""
    stored: list[str] = []
    stored_bytes = 0
    line_no = 0
    selected = 0
    first_bytes = 0
    pending = bytearray()
    pending_size = 0
    at_start = True
    for chunk in chunks:
        if at_start and chunk.startswith(b"\xef\xbb\xbf"):
            chunk = chunk[3:]
        at_start = False
        pieces = chunk.split(b"\n")
        for i, piece in enumerate(pieces):
            if start <= line_no < end:
                pending_size += len(piece)
                if len(pending) <= _STORE_CAP:
                    pending += piece[: _STORE_CAP + 1 - len(pending)]
            if i == len(pieces) - 1:
                break
            if start <= line_no < end:
                if selected == 0:
                    first_bytes = pending_size
                if len(stored) <= DEFAULT_MAX_LINES and stored_bytes <= DEFAULT_MAX_BYTES:
                    text = pending.decode("utf-8", "replace")
                    stored.append(text)
                    stored_bytes += len(pending) + 1
                selected += 1
            pending.clear()
            pending_size = 0
            line_no += 1
    if start <= line_no < end:
        if selected == 0:
            first_bytes = pending_size
        if len(stored) <= DEFAULT_MAX_LINES and stored_bytes <= DEFAULT_MAX_BYTES:
            stored.append(pending.decode("utf-8", "replace"))
        selected += 1
    return _Selection(stored, line_no + 1, selected, first_bytes)


def _looks_binary(path: Path) -> bool:
    with open(path, "rb") as f:
        return b"\x00" in f.read(8192)


def _read_text(chunks: Iterable[bytes], path_arg: str, offset: int | None, limit: int | None) -> ToolResult:
    start = max(0, offset - 1) if offset else 0
    end = float("inf") if limit is None else start + limit
    sel = _select_lines(chunks, start, end)
    if start >= sel.total_file_lines:
        raise ToolError(f"Offset {offset} is beyond the end of the file ({sel.total_file_lines} lines in total)")
    truncation = truncate_head("\n".join(sel.lines))
    first = start + 1
    if truncation.first_line_exceeds_limit:
        text = (f"[Line {first} is {format_size(sel.first_line_bytes)}, more than the "
                f"{format_size(DEFAULT_MAX_BYTES)} a read can show. See part of it with bash: "
                f"sed -n '{first}p' {path_arg} | head -c {DEFAULT_MAX_BYTES}]")
        return ToolResult.text(text, details={"truncation": truncation.details()})
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        limit_note = "" if truncation.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        text = (f"{truncation.content}\n\n[Showing lines {first}-{last} of {sel.total_file_lines}{limit_note}. "
                f"Use offset={last + 1} to continue.]")
        return ToolResult.text(text, details={"truncation": truncation.details()})
    if limit is not None and start + sel.selected_lines < sel.total_file_lines:
        shown_end = start + sel.selected_lines
        remaining = sel.total_file_lines - shown_end
        return ToolResult.text(f"{truncation.content}\n\n[{remaining} more lines in file. "
                               f"Use offset={shown_end + 1} to continue.]")
    return ToolResult.text(truncation.content)


def _read_image(data: bytes, mime: str) -> ToolResult:
    from pi_core import prepare_image

    # The session scales images down as they enter it (the images.autoResize setting), for every tool.
    prepared = prepare_image(data, mime, resize=False)
    note = "\n".join([f"Read image file [{prepared.mime_type}]", *prepared.notes])
    if prepared.data is None:
        return ToolResult.text(note)
    image = ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type)
    return ToolResult(content=[TextContent(text=note), image])


def _variants(path: Path) -> list[Path]:
    """Spellings a file name may have on disk that a model cannot type (macOS screenshots, NFD)."""
    import unicodedata

    s = str(path)
    nfd = unicodedata.normalize("NFD", s)
    out = [s.replace(" AM.", "\u202fAM.").replace(" PM.", "\u202fPM."), nfd, s.replace("'", "\u2019"),
           nfd.replace("'", "\u2019")]
    return [Path(v) for v in out if v != s]


def resolve_read_path(path_arg: str, ctx: ToolContext) -> Path:
    path = ctx.resolve(path_arg)
    if path.exists():
        return path
    return next((v for v in _variants(path) if v.exists()), path)


def _missing(path: Path) -> ToolError:
    import difflib

    hint = ""
    try:
        names = os.listdir(path.parent)
        close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if close:
            hint = " Similar names in that directory: " + ", ".join(close) + "."
    except OSError:
        pass
    return ToolError(f"File not found: {path}.{hint}")


def _read(path: Path, path_arg: str, offset: int | None, limit: int | None) -> ToolResult:
    from pi_core import SpecialFileError, check_regular_file, detect_image_mime_file

    if not path.exists():
        raise _missing(path)
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file; list it with ls or bash instead.")
    try:
        check_regular_file(path, "read")
        mime = detect_image_mime_file(path)
        if mime:
            return _read_image(path.read_bytes(), mime)
        if _looks_binary(path):
            return _binary(path_arg, path.stat().st_size)
        return _read_text(_file_chunks(path), path_arg, offset, limit)
    except PermissionError as e:
        raise ToolError(f"Permission denied: {path}") from e
    except IsADirectoryError as e:
        raise ToolError(f"{path} is a directory, not a file.") from e
    except SpecialFileError as e:
        raise ToolError(str(e)) from e


def _binary(path_arg: str, size: int) -> ToolResult:
    return ToolResult.text(f"[{path_arg} is a binary file ({format_size(size)}); its bytes are not shown. "
                           "Inspect it with bash, e.g. `file` or `xxd | head`.]")


async def _read_through(operations: ReadOperations, path: Path, path_arg: str, offset: int | None,
                        limit: int | None) -> ToolResult:
    """The same answers as a local read, from bytes that ``operations`` fetched."""
    from pi_core import detect_image_mime

    try:
        await operations.access(path)
        data = await operations.read_file(path)
    except FileNotFoundError as e:
        raise ToolError(f"File not found: {path}.") from e
    except IsADirectoryError as e:
        raise ToolError(f"{path} is a directory, not a file; list it with ls or bash instead.") from e
    except PermissionError as e:
        raise ToolError(f"Permission denied: {path}") from e
    mime = detect_image_mime(data[:64])
    if mime:
        return _read_image(data, mime)
    if b"\x00" in data[:8192]:
        return _binary(path_arg, len(data))
    return _read_text([data], path_arg, offset, limit)


def _int_arg(params: dict[str, Any], name: str, minimum: int) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise ToolError(f"{name} must be a whole number, not {value!r}") from e
    if number < minimum:
        raise ToolError(f"{name} must be at least {minimum}, not {number}")
    return number


def _executor(operations: ReadOperations | None) -> Any:
    async def execute(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ctx.signal.throw_if_aborted()
        path_arg = str(params["path"])
        offset = params.get("offset")
        offset = int(offset) if isinstance(offset, (int, float)) and math.isfinite(offset) and \
            abs(offset) < 1e15 else None
        limit = _int_arg(params, "limit", 1)
        if operations is None:
            path = resolve_read_path(path_arg, ctx)
            result = await run_blocking(_read, path, path_arg, offset, limit, signal=ctx.signal, name="read")
        else:
            result = await _read_through(operations, ctx.resolve(path_arg), path_arg, offset, limit)
        ctx.signal.throw_if_aborted()
        result.structured_content = _structured(result)
        return result

    return execute


execute = _executor(None)


def _structured(result: ToolResult) -> Any:
    """What programmatic callers get: the text, or the image with its note (pi's shape)."""
    note = result.text_content()
    image = next((c for c in result.content if isinstance(c, ImageContent)), None)
    if image is None:
        return note
    return {"type": "image", "data": image.data, "mimeType": image.mime_type, "note": note}


def create_read_tool(*, operations: ReadOperations | None = None, name: str = "read") -> Tool:
    """The built-in ``read`` tool, reading through ``operations`` (default: this machine's files). Register
    it with ``register(tool, replaces="read")`` to take the built-in's place."""
    from pi_core import is_local

    return Tool(
        name=name,
        label=name,
        description=DESCRIPTION,
        parameters=PARAMETERS,
        output_schema=OUTPUT_SCHEMA,
        execute=execute if is_local(operations) else _executor(operations),
        capabilities=ToolCapabilities(reads=True, concurrency_safe=True),
        prompt_snippet="Show a file's text or an image",
        prompt_guidelines=["Prefer read over cat, head or sed for looking at files."],
    )


def make_read_tool() -> Tool:
    """A fresh ``read`` tool (plugins may wrap or replace it)."""
    return create_read_tool()


@hookimpl
def register_tools(register: Any) -> None:
    register(make_read_tool())
