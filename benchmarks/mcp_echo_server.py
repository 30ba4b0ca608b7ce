"""A small MCP server for the benchmarks (the SDK's FastMCP over stdio): ``echo`` and ``add``."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("bench")


@server.tool(description="Echo the text back.", annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run("stdio")
