"""Running a ``codemode`` call: the script's tools and globals, its store, and pi's result format.

The result starts with ``Script completed`` or ``Script failed``, the wall time and ``Output:``.
Text and image items follow in order; with more than one text item (``text()`` and the returned
value) each starts with ``==> text N/M <==``; ``console.*`` lines come last in one
``<console_output>`` block. A failed script keeps its partial output, then ``Script error:``, the
error and the tool calls it made (they are not undone). Text over ``max_output_tokens`` keeps its
start and end and the full text goes to a temporary file; each image is saved to a temporary file
named before it.

Nested calls go through ``ToolContext.execute_tool``, so validation, ``before_tool_call`` policies and
``after_tool_call`` patches apply to them exactly as to the model's own calls. A tool with an
``output_schema`` resolves to its ``structured_content`` (MCP tools: the ``CallToolResult``, also an
``isError`` one); any other tool to its text; a failed call rejects with the tool's error text.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import tempfile
import time
from typing import Any

from pi_core import ImageContent, TextContent, ToolError, ToolResult, format_size

from .declarations import TEXT_OUTPUT, identifier, sample, tool_description
from .sandbox import SLOTS, WORKER_WAIT_SECONDS, CallFailed, RunResult, Script, max_workers
from .source import SourceError, parse_source

NAME = "codemode"
STORE_ENTRY = "codemode-store"
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
CHARS_PER_TOKEN = 4
ARGS_PREVIEW_CHARS = 200
ERROR_PREVIEW_CHARS = 500
IMAGE_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
GLOBALS = [{"name": "searchTools", "spread": True}, {"name": "describeTool", "spread": True},
           {"name": "describeNamespace", "spread": True}]


def callable_tools(tool_ctx: Any) -> list[Any]:
    return [t for t in tool_ctx.tools if t.name != NAME]


def read_store(branch: list[Any]) -> dict[str, Any]:
    """``load()`` values on this branch: its ``codemode-store`` entries applied from the root."""
    store: dict[str, Any] = {}
    for entry in branch:
        if getattr(entry, "type", None) != "custom" or getattr(entry, "custom_type", None) != STORE_ENTRY:
            continue
        data = getattr(entry, "data", None)
        if not isinstance(data, dict) or not isinstance(data.get("set"), dict) or not isinstance(data.get("delete"), list):
            continue
        for key in data["delete"]:
            store.pop(key, None) if isinstance(key, str) else None
        store.update(data["set"])
    return store


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _preview(arguments: Any) -> str:
    try:
        return _truncate(json.dumps(arguments, ensure_ascii=False), ARGS_PREVIEW_CHARS)
    except (TypeError, ValueError):
        return ""


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _save(data: bytes | str, suffix: str) -> str:
    fd, path = tempfile.mkstemp(prefix="pi-codemode-", suffix=suffix)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


class _Run:
    """One script's nested calls, their record (the result's ``details.calls``) and its globals."""

    def __init__(self, tool_ctx: Any, options: Any) -> None:
        self.tool_ctx = tool_ctx
        self.options = options
        self.tools = callable_tools(tool_ctx)
        self.by_name = {t.name: t for t in self.tools}
        self.by_name.update({identifier(t.name): t for t in reversed(self.tools)})
        guidelines = options.guidelines()
        self.samples = {t.name: sample(t.name, tool_description(t.description, guidelines.get(t.name, ())),
                                       t.parameters, t.output_schema or TEXT_OUTPUT) for t in self.tools}
        self.calls: list[dict[str, Any]] = []

    def details(self) -> dict[str, Any]:
        return {"calls": [dict(c) for c in self.calls]}

    def publish(self) -> None:
        self.tool_ctx.update(ToolResult(content=[], details=self.details()))

    async def call_tool(self, name: str, arguments: Any) -> Any:
        tool = self.by_name[name]
        record: dict[str, Any] = {"id": f"{self.tool_ctx.tool_call_id}/?", "name": tool.name,
                                  "args": _preview(arguments), "status": "running"}
        self.calls.append(record)
        self.publish()
        started = time.monotonic()
        try:
            outcome = await self.tool_ctx.execute_tool(tool.name, arguments if isinstance(arguments, dict) else {})
        except asyncio.CancelledError:
            record["status"] = "cancelled"
            raise
        record["id"] = outcome.tool_call_id
        record["durationMs"] = int((time.monotonic() - started) * 1000)
        result = outcome.result
        text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
        record["status"] = "error" if outcome.is_error else "ok"
        if outcome.is_error:
            record["error"] = _truncate(text or f'Tool "{tool.name}" failed', ERROR_PREVIEW_CHARS)
        self.publish()
        if tool.output_schema is not None and result.structured_content is not None:
            return result.structured_content
        if outcome.is_error:
            raise CallFailed(text or f'Tool "{tool.name}" failed')
        return text

    async def call_global(self, name: str, arguments: Any) -> Any:
        args = arguments if isinstance(arguments, list) else []
        if name == "searchTools":
            return self._search(*args[:2])
        if name == "describeTool":
            if not args or not isinstance(args[0], str):
                raise CallFailed("describeTool() expects a tool name")
            tool = self.by_name.get(args[0])
            return self.samples[tool.name] if tool else None
        if name == "describeNamespace":
            if not args or not isinstance(args[0], str):
                raise CallFailed("describeNamespace() expects a namespace name")
            return self._namespace(args[0])
        raise CallFailed(f"{name}() is not available")

    def _search(self, query: Any = None, options: Any = None) -> list[dict[str, str]]:
        from plugins.tool_search.ranking import DEFAULT_LIMIT, rank, tool_document

        if not isinstance(query, str):
            raise CallFailed("searchTools() expects a query string")
        options = options if isinstance(options, dict) else {}
        limit = options.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
            raise CallFailed("searchTools() limit must be a positive integer")
        namespace = options.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise CallFailed("searchTools() namespace must be a string")
        tools = [t for t in self.tools if not namespace or _names_namespace(t.namespace, namespace)]
        matches = rank(query, [tool_document(t) for t in tools], limit)
        return [{"name": identifier(n), "description": self.samples[n]} for n, _ in matches]

    def _namespace(self, name: str) -> dict[str, Any] | None:
        members = [t for t in self.tools if _names_namespace(t.namespace, name)]
        if not members:
            return None
        namespace = members[0].namespace
        found: dict[str, Any] = {"name": namespace.name}
        if namespace.description:
            found["description"] = namespace.description
        if namespace.instructions:
            found["instructions"] = namespace.instructions
        found["tools"] = [identifier(t.name) for t in members]
        return found


def _names_namespace(namespace: Any, query: str) -> bool:
    if namespace is None:
        return False
    wanted = identifier(query)
    return any(n == query or identifier(n) == wanted for n in (namespace.name, *namespace.aliases))


async def execute(params: dict[str, Any], tool_ctx: Any, options: Any) -> ToolResult:
    started = time.monotonic()
    try:
        source = parse_source(str(params.get("code", "")))
    except SourceError as exc:
        raise ToolError(str(exc)) from exc
    run = _Run(tool_ctx, options)
    run.publish()
    deadline = started + source.timeout_ms / 1000 if source.timeout_ms is not None else None
    wait = min(WORKER_WAIT_SECONDS, deadline - time.monotonic()) if deadline is not None else WORKER_WAIT_SECONDS
    admitted = await SLOTS.acquire(max(wait, 0.0), tool_ctx.signal.wait)
    if admitted != "reserved":
        return _not_started(admitted, source.timeout_ms, started, run)
    try:
        session = tool_ctx.session
        store = read_store(session.session.get_branch()) if session is not None else {}
        script = Script(source.code, tools=[{"name": t.name, "id": identifier(t.name), "description": run.samples[t.name]}
                                            for t in run.tools],
                        globals_=GLOBALS, store=store, call_tool=run.call_tool, call_global=run.call_global)
        result = await script.run(deadline, tool_ctx.signal.wait())
    finally:
        SLOTS.release()
    for call in run.calls:
        if call["status"] == "running":
            call["status"] = "cancelled"
    if result.ok and result.writes and session is not None:
        session.append_entry(STORE_ENTRY, _store_entry(result.writes))
    return _result(result, run, source.max_output_tokens, started, source.timeout_ms)


def _store_entry(writes: list[list[Any]]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for write in writes:
        changes[write[0]] = json.loads(write[1]) if len(write) > 1 else _DELETED
    return {"set": {k: v for k, v in changes.items() if v is not _DELETED},
            "delete": [k for k, v in changes.items() if v is _DELETED]}


_DELETED = object()


def _not_started(why: str, timeout_ms: int | None, started: float, run: _Run) -> ToolResult:
    if why == "aborted":
        error = "Script aborted: the call was aborted"
    elif timeout_ms is not None and timeout_ms / 1000 <= WORKER_WAIT_SECONDS:
        error = f"Script timed out: {timeout_ms} ms passed while it waited for a free codemode worker"
    else:
        error = (f"No codemode worker became free within {WORKER_WAIT_SECONDS:g} seconds: all {max_workers()} "
                 "workers (shared by every session of this process) are busy with other scripts. Retry once "
                 "they finish.")
    header = f"Script failed\nWall time {time.monotonic() - started:.1f} seconds\nOutput:\n"
    return ToolResult(content=[TextContent(text=header),
                               TextContent(text=f"Script error:\n{error}\n\nThe script did not start.")],
                      details=run.details(), is_error=True)


def _layout(output: list[list[Any]]) -> list[Any]:
    texts = sum(1 for item in output if item[0] == "text")
    items: list[Any] = []
    console: list[str] = []
    number = 0
    for item in output:
        if item[0] == "image":
            items.append(ImageContent(data=item[1], mime_type=item[2]))
        elif item[0] == "console":
            console.append(item[1])
        else:
            number += 1
            items.append(TextContent(text=f"==> text {number}/{texts} <==\n{item[1]}" if texts > 1 else item[1]))
    if console:
        items.append(TextContent(text="<console_output>\n" + "\n".join(console) + "\n</console_output>"))
    return items


def _join(items: list[Any]) -> list[Any]:
    """Adjacent text items become one, each part on its own line."""
    joined: list[Any] = []
    parts: list[str] = []
    last = ""
    for item in items:
        if not isinstance(item, TextContent):
            if parts:
                joined.append(TextContent(text="".join(parts)))
            parts, last = [], ""
            joined.append(item)
            continue
        if last and not last.endswith("\n"):
            parts.append("\n")
            last = "\n"
        parts.append(item.text)
        last = item.text or last
    if parts:
        joined.append(TextContent(text="".join(parts)))
    return joined


def _error_text(result: RunResult, run: _Run, timeout_ms: int | None) -> str:
    error = result.error
    assert error is not None
    if error.kind == "script":
        head = error.stack or (f"{error.name}: {error.message}" if error.message else error.name)
    elif error.kind == "timeout":
        head = f"Script timed out: it ran past its timeout of {timeout_ms} ms"
    elif error.kind == "aborted":
        head = f"Script aborted: {error.message}"
    else:
        head = f"Script sandbox failed: {error.message}"
    calls = ", ".join(f"{c['name']} ({c['status']})" for c in run.calls)
    summary = f"Tool calls made before the failure (they are not undone): {calls}" if calls else "No tool calls were made."
    return f"{head}\n\n{summary}"


def _limit(items: list[Any], max_tokens: int) -> tuple[list[Any], str | None]:
    texts = [i.text for i in items if isinstance(i, TextContent)]
    combined = "\n".join(texts)
    budget = max_tokens * CHARS_PER_TOKEN
    if not texts or len(combined) <= budget:
        return items, None
    head_chars = budget // 2
    head, tail = combined[:head_chars], combined[len(combined) - (budget - head_chars):] if budget > head_chars else ""
    removed = len(combined) - len(head) - len(tail)
    text = (f"Warning: truncated output (original token count: {math.ceil(len(combined) / CHARS_PER_TOKEN)})\n"
            f"Total output lines: {combined.count(chr(10)) + 1}\n\n"
            f"{head}…{math.ceil(removed / CHARS_PER_TOKEN)} tokens truncated…{tail}")
    try:
        path: str | None = _save(combined, ".txt")
        text += f"\n\n[Full output: {path} (read with offset/limit)]"
    except OSError as exc:
        path = None
        text += f"\n\n[Could not save the full output: {exc}]"
    return [TextContent(text=text), *(i for i in items if isinstance(i, ImageContent))], path


def _label_images(items: list[Any]) -> list[Any]:
    labels: dict[str, str] = {}
    out: list[Any] = []
    for item in items:
        if isinstance(item, ImageContent):
            if item.data not in labels:
                data = base64.b64decode(item.data)
                kind = f"{item.mime_type}, {format_size(len(data))}"
                try:
                    labels[item.data] = f"[Image saved to {_save(data, IMAGE_EXTENSIONS[item.mime_type])} ({kind})]"
                except OSError as exc:
                    labels[item.data] = f"[Image ({kind}) could not be saved: {exc}]"
            out.append(TextContent(text=labels[item.data]))
        out.append(item)
    return out


def _result(result: RunResult, run: _Run, max_tokens: int | None, started: float, timeout_ms: int | None) -> ToolResult:
    output = list(result.output)
    if result.ok and result.has_value:
        output.append(["text", _value_text(result.value)])
    items = _layout(output)
    if not result.ok:
        items.append(TextContent(text=f"Script error:\n{_error_text(result, run, timeout_ms)}"))
    items, full_path = _limit(_join(items), DEFAULT_MAX_OUTPUT_TOKENS if max_tokens is None else max_tokens)
    items = _join(_label_images(items))
    status = "Script completed" if result.ok else "Script failed"
    header = f"{status}\nWall time {time.monotonic() - started:.1f} seconds\nOutput:\n"
    details = run.details()
    if full_path:
        details["fullOutputPath"] = full_path
    return ToolResult(content=[TextContent(text=header), *items], details=details, is_error=not result.ok)


__all__ = ["NAME", "STORE_ENTRY", "callable_tools", "execute", "read_store"]
