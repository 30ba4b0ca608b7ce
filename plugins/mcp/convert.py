"""MCP results as pi tool results: text and images for the model, the whole result for scripts.

Text and images pass through; embedded text resources become text and embedded images images; binary
resources are saved to temporary files; resource links name ``read_mcp_resource``; a result with only
``structuredContent`` becomes its JSON. Model-facing text over 20 KB keeps its start and end around a
``…N chars truncated…`` marker, and the full text is saved to a temporary file named in the result.
Codemode scripts get the complete ``CallToolResult`` (``structured_content``), never truncated.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import tempfile
from typing import Any

from pi_core import ImageContent, TextContent, ToolResult, format_size

MAX_OUTPUT_BYTES = 20 * 1024
_TEXT_TYPES = ("application/json", "+json", "+xml")


def save_temp(data: bytes | str, suffix: str) -> str:
    fd, path = tempfile.mkstemp(prefix="pi-mcp-", suffix=suffix)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _is_text_mime(mime: str | None) -> bool:
    kind = (mime or "").split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))


def _extension(uri: str) -> str:
    match = re.search(r"\.[A-Za-z0-9]{1,8}$", uri.split("?", 1)[0])
    return match.group(0) if match else ".bin"


def block_content(server: str, block: dict[str, Any], *, readable_resources: bool = False) -> list[Any]:
    """The model-facing content of one MCP content block (as JSON)."""
    kind = block.get("type")
    if kind == "text":
        return [TextContent(text=str(block.get("text", "")))]
    if kind == "image":
        return [ImageContent(data=block.get("data", ""), mime_type=block.get("mimeType", "image/png"))]
    if kind == "audio":
        return [TextContent(text=f"[audio {block.get('mimeType', '')} omitted]")]
    if kind == "resource_link":
        details = [d for d in (block.get("mimeType"), format_size(block["size"]) if "size" in block else None) if d]
        read = f'. Read it with read_mcp_resource (server "{server}")' if readable_resources else ""
        about = f": {block['description']}" if block.get("description") else ""
        extra = f" ({', '.join(details)})" if details else ""
        return [TextContent(text=f'[Resource {block.get("uri")} "{block.get("title") or block.get("name")}"'
                                 f"{extra}{about}{read}]")]
    if kind == "resource":
        return _resource_content(block.get("resource") or {})
    return [TextContent(text=f"[unsupported MCP content {kind}]")]


def _resource_content(resource: dict[str, Any]) -> list[Any]:
    uri, mime = str(resource.get("uri", "")), resource.get("mimeType")
    if "text" in resource:
        return [TextContent(text=str(resource["text"]))]
    blob = str(resource.get("blob", ""))
    if (mime or "").startswith("image/"):
        return [ImageContent(data=blob, mime_type=mime)]
    data = base64.b64decode(blob or b"", validate=False)
    if _is_text_mime(mime):
        return [TextContent(text=data.decode("utf-8", "replace"))]
    kind = f"{mime or 'unknown type'}, {format_size(len(data))}"
    try:
        return [TextContent(text=f"[Binary resource {uri} ({kind}) saved to {save_temp(data, _extension(uri))}]")]
    except OSError as exc:
        return [TextContent(text=f"[Binary resource {uri} ({kind}) could not be saved: {exc}]")]


def limit_content(content: list[Any]) -> tuple[list[Any], str | None]:
    """Keep model-facing text within 20 KB: start and end, the middle cut, the full text in a file."""
    combined = "\n".join(block.text for block in content if isinstance(block, TextContent))
    raw = combined.encode("utf-8")
    if len(raw) <= MAX_OUTPUT_BYTES:
        return content, None
    head = raw[:MAX_OUTPUT_BYTES // 2].decode("utf-8", "ignore")
    tail = raw[len(raw) - (MAX_OUTPUT_BYTES - MAX_OUTPUT_BYTES // 2):].decode("utf-8", "ignore")
    removed = len(combined) - len(head) - len(tail)
    lines = combined.count("\n") + 1 - (1 if combined.endswith("\n") else 0)
    try:
        path: str | None = save_temp(combined, ".txt")
        where = f"\n\n[Full output: {path} (read it with offset/limit)]"
    except OSError as exc:
        path, where = None, f"\n\n[Could not save the full output: {exc}]"
    text = (f"Warning: truncated output (original token count: {math.ceil(len(raw) / 4)})\n"
            f"Total output lines: {lines}\n\n{head}…{removed} chars truncated…{tail}{where}")
    return [TextContent(text=text), *(b for b in content if isinstance(b, ImageContent))], path


def convert_result(server: str, tool: str, result: dict[str, Any], *, readable_resources: bool = False
                   ) -> ToolResult:
    """A ``CallToolResult`` (as JSON) as a pi tool result; ``isError`` makes it an error result."""
    blocks = result.get("content") or []
    content: list[Any] = [c for block in blocks for c in block_content(server, block,
                                                                       readable_resources=readable_resources)]
    if not blocks and result.get("structuredContent") is not None:
        content.append(TextContent(text=json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)))
    is_error = bool(result.get("isError"))
    if is_error and not any(isinstance(c, TextContent) and c.text for c in content):
        content.append(TextContent(text=f"MCP tool {server}/{tool} returned an error"))
    content, full_path = limit_content(content)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    script_result = {k: v for k, v in result.items() if k != "_meta"}
    return ToolResult(content=content, details=details, is_error=is_error, structured_content=script_result)
