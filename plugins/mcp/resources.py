"""MCP resources as three tools: ``list_mcp_resources``, ``list_mcp_resource_templates`` and
``read_mcp_resource`` (the names Codex, opencode and pi use, so models trained on them use them as is).

Each takes a ``server`` argument and covers every connected server with resources. Listings are JSON,
``{server?, resources: [{server, uri, name, ...}], nextCursor?, errors?}``: with a ``server`` one page
(``cursor`` continues it), without one every page of every server. MCP App resources (``ui://`` URIs
and ``profile=mcp-app`` HTML, user interfaces for hosts that render them) and icons are left out.
A read resource becomes text and images for the model (binary contents are saved to temporary
files); scripts get the JSON payloads. The tools take the widest exposure of the servers they reach.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pi_core import TextContent, Tool, ToolCapabilities, ToolError, ToolResult

from .convert import block_content, limit_content
from .manager import tool_exposure

if TYPE_CHECKING:
    from .manager import McpManager, Server

LIST, TEMPLATES, READ = "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"
NAMES = (LIST, TEMPLATES, READ)
MAX_PAGES = 100

_SERVER = {"type": "string", "description": "The MCP server's name; leave it out to cover every server with resources."}
_CURSOR = {"type": "string", "description": "nextCursor of the previous call for the same server; leave it out for "
                                            "the first page."}
LIST_PARAMETERS = {"type": "object", "properties": {"server": _SERVER, "cursor": _CURSOR}, "additionalProperties": False}
READ_PARAMETERS = {"type": "object", "properties": {
    "server": {"type": "string", "description": "The MCP server's name as configured (the `server` of a listed resource)."},
    "uri": {"type": "string", "description": "The resource's URI, as list_mcp_resources gave it."}},
    "required": ["server", "uri"], "additionalProperties": False}
_STRING = {"type": "string"}
_ERRORS = {"type": "array", "description": "Servers that could not be listed",
           "items": {"type": "object", "properties": {"server": _STRING, "error": _STRING}, "required": ["server", "error"]}}
LIST_OUTPUT = {"type": "object", "required": ["resources"], "properties": {
    "server": _STRING, "nextCursor": _STRING, "errors": _ERRORS,
    "resources": {"type": "array", "items": {"type": "object", "required": ["server", "uri", "name"], "properties": {
        "server": _STRING, "uri": _STRING, "name": _STRING, "title": _STRING, "description": _STRING,
        "mimeType": _STRING, "size": {"type": "number"}}}}}}
TEMPLATES_OUTPUT = {"type": "object", "required": ["resourceTemplates"], "properties": {
    "server": _STRING, "nextCursor": _STRING, "errors": _ERRORS,
    "resourceTemplates": {"type": "array", "items": {"type": "object", "required": ["server", "uriTemplate", "name"],
                                                     "properties": {"server": _STRING, "name": _STRING,
                                                                    "uriTemplate": {"type": "string", "description": "RFC 6570 URI template"},
                                                                    "title": _STRING, "description": _STRING,
                                                                    "mimeType": _STRING}}}}}
READ_OUTPUT = {"type": "object", "required": ["server", "uri", "contents"], "properties": {
    "server": _STRING, "uri": _STRING,
    "contents": {"type": "array", "items": {"anyOf": [
        {"type": "object", "properties": {"uri": _STRING, "mimeType": _STRING, "text": _STRING}, "required": ["uri", "text"]},
        {"type": "object", "properties": {"uri": _STRING, "mimeType": _STRING, "blob": {"type": "string", "description": "base64"}},
         "required": ["uri", "blob"]}]}}}}

DESCRIPTIONS = {
    LIST: "List the resources MCP servers offer: files, schemas, records and other context a server shares. "
          "Look here before searching the web for what a server may already provide.",
    TEMPLATES: "List the resource templates MCP servers offer: URI templates whose parameters name a resource "
               "to read, such as a record by id.",
    READ: "Read one resource of an MCP server by the server's name and the resource's URI.",
}


def _is_app(item: dict[str, Any]) -> bool:
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    return uri.startswith("ui://") or bool(re.search(r';\s*profile\s*=\s*"?mcp-app"?', str(item.get("mimeType") or ""), re.I))


def _listed(server: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"server": server, **{k: v for k, v in item.items() if k not in ("_meta", "icons")}}


def _string(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    return value.strip() or None


class ResourceTools:
    """The three tools of one session's servers with resources."""

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager
        self.tools: dict[str, Tool] = {}

    def servers(self) -> list[Server]:
        return [s for s in self.manager.servers if s.entry.enabled and s.entry.exposure != "hidden"
                and s.connection is not None and s.connection.has_resources]

    def exposure(self) -> str:
        exposures = {s.entry.exposure for s in self.servers()}
        widest = next((e for e in ("direct", "codemode", "deferred") if e in exposures), "hidden")
        return tool_exposure(widest)

    def sync(self) -> list[Tool]:
        """Register the tools once a server with resources connected; keep their exposure current.
        Returns the tools that were registered now."""
        exposure = self.exposure()
        new: list[Tool] = []
        for name, parameters, output in ((LIST, LIST_PARAMETERS, LIST_OUTPUT), (TEMPLATES, LIST_PARAMETERS, TEMPLATES_OUTPUT),
                                         (READ, READ_PARAMETERS, READ_OUTPUT)):
            tool = self.tools.get(name)
            if tool is None:
                if exposure == "hidden":
                    continue
                tool = Tool(name=name, label=name, description=DESCRIPTIONS[name], parameters=parameters,
                            execute=getattr(self, f"_{name}"), output_schema=output, exposure=exposure,  # type: ignore[arg-type]
                            annotations={"readOnlyHint": True},
                            capabilities=ToolCapabilities(reads=True, concurrency_safe=True))
                self.tools[name] = tool
                new.append(tool)
            else:
                tool.exposure = exposure  # type: ignore[assignment]
        return new

    def _find(self, name: str) -> Server:
        servers = self.servers()
        found = next((s for s in servers if s.name == name), None)
        if found is None:
            offered = ", ".join(s.name for s in servers)
            raise ToolError(f'MCP server "{name}" has no resources' + (f". Servers with resources: {offered}" if offered else ""))
        return found

    async def _page(self, server: Server, method: str, key: str, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        from mcp import types

        async def request(session: Any) -> Any:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            return await getattr(session, method)(params=params)

        result = await self.manager.request(server, request, f"{key} listing")
        items = [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in getattr(result, key)]
        return [i for i in items if not _is_app(i)], result.nextCursor

    async def _all(self, server: Server, method: str, key: str) -> list[dict[str, Any]]:
        items, cursor = await self._page(server, method, key, None)
        for _ in range(MAX_PAGES):
            if not cursor:
                break
            more, cursor = await self._page(server, method, key, cursor)
            items += more
        return items

    async def _list(self, params: dict[str, Any], tool: str, method: str, key: str) -> ToolResult:
        import asyncio

        name, cursor = _string(params, "server"), _string(params, "cursor")
        if name:
            server = self._find(name)
            items, next_cursor = await self._page(server, method, key, cursor)
            payload: dict[str, Any] = {"server": server.name, key: [_listed(server.name, i) for i in items]}
            if next_cursor:
                payload["nextCursor"] = next_cursor
            return _json_result(tool, server.name, payload)
        if cursor:
            raise ToolError("cursor can only be given together with a server")
        servers = sorted(self.servers(), key=lambda s: s.name)
        answers = await asyncio.gather(*(self._all(s, method, key) for s in servers), return_exceptions=True)
        listed: list[dict[str, Any]] = []
        errors = []
        for server, answer in zip(servers, answers):
            if isinstance(answer, BaseException):
                errors.append({"server": server.name, "error": str(answer) or type(answer).__name__})
            else:
                listed += [_listed(server.name, i) for i in answer]
        payload = {key: listed, **({"errors": errors} if errors else {})}
        return _json_result(tool, None, payload)

    async def _list_mcp_resources(self, params: dict[str, Any], tool_ctx: Any) -> ToolResult:
        return await self._list(params, LIST, "list_resources", "resources")

    async def _list_mcp_resource_templates(self, params: dict[str, Any], tool_ctx: Any) -> ToolResult:
        return await self._list(params, TEMPLATES, "list_resource_templates", "resourceTemplates")

    async def _read_mcp_resource(self, params: dict[str, Any], tool_ctx: Any) -> ToolResult:
        name, uri = _string(params, "server"), _string(params, "uri")
        if not name:
            raise ToolError("server must be given")
        if not uri:
            raise ToolError("uri must be given")
        server = self._find(name)

        async def request(session: Any) -> Any:
            return await session.read_resource(uri)

        result = await self.manager.request(server, request, f"reading {uri}")
        contents = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]
        content: list[Any] = []
        for item in contents:
            if len(contents) > 1:  # several contents (a directory) are labelled with their URIs
                content.append(TextContent(text=f"{item.get('uri')}:"))
            content += block_content(server.name, {"type": "resource", "resource": item})
        content, full_path = limit_content(content or [TextContent(text=f"Resource {uri} is empty.")])
        details: dict[str, Any] = {"server": server.name, "tool": READ, **({"fullOutputPath": full_path} if full_path else {})}
        payload = {"server": server.name, "uri": uri, "contents": [{k: v for k, v in c.items() if k != "_meta"}
                                                                   for c in contents]}
        return ToolResult(content=content, details=details, structured_content=payload)


def _json_result(tool: str, server: str | None, payload: dict[str, Any]) -> ToolResult:
    content, full_path = limit_content([TextContent(text=json.dumps(payload, ensure_ascii=False))])
    details: dict[str, Any] = {"server": server or "", "tool": tool, **({"fullOutputPath": full_path} if full_path else {})}
    return ToolResult(content=content, details=details, structured_content=payload)


__all__ = ["NAMES", "ResourceTools"]
