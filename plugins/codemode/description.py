"""What the model is told: the ``codemode`` description, and how declared tools mention scripts.

The description explains the script contract and lists the callable tools that are not declared
(``codemode.mode: on``) or all callable tools (``only``) with their TypeScript declarations, grouped
by namespace, within ``codemode.inlineBudget`` estimated tokens: each round, every group (tools
without a namespace first, then namespaces by name) places its cheapest remaining tool, so every
namespace shows up before any is complete. ``deferred`` tools (MCP tools with the default
``codemode`` exposure included) are never listed, so the description stays the same while servers
connect; scripts find them with ``searchTools()``, ``describeTool()``, ``describeNamespace()`` and
``ALL_TOOLS``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .declarations import TEXT_OUTPUT, identifier, sample, schema_type, tool_description

DEFAULT_INLINE_BUDGET = 3000
CHARS_PER_TOKEN = 4

INTRO = """\
Run a JavaScript script that calls other tools. Send plain JavaScript source (no JSON wrapper, no markdown \
fence); it runs as the body of an async function in a sandboxed V8 isolate, so top-level `await` and \
`return` work. The sandbox has no Node or browser APIs, no file system, no network and no timers: tools are \
its only way out.
- `await tools.<name>({ ...args })` resolves to a string, or to an object when the tool's declaration says \
so (also for failed calls that return one, so check its fields); other failures reject with an Error. Calls \
still running when the script ends are cancelled.
- An optional first line sets limits: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`"""

GLOBALS = """\
Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` produce the \
output; `exit()` ends the script early. Several text items each start with a `==> text N/M <==` line; \
`console` lines come after everything else in one `<console_output>` block. Each `image()` is also saved \
to a temporary file whose path the result gives.
- `store(key, value)` / `load(key)` keep small JSON values for later codemode calls.
- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, \
`await describeNamespace(name)` find tools that are not listed here, such as MCP tools."""


def _section(tool: Any, guidelines: Sequence[str]) -> str:
    name = identifier(tool.name)
    heading = f"### `{name}`" if name == tool.name else f"### `{name}` (`{tool.name}`)"
    text = sample(tool.name, tool_description(tool.description, guidelines), tool.parameters,
                  tool.output_schema or TEXT_OUTPUT)
    return f"{heading}\n{text.strip()}"


def _pick(groups: list[list[tuple[str, int]]], budget: int | None) -> set[str]:
    if budget is None:
        return {name for group in groups for name, _ in group}
    queues = [sorted(group, key=lambda entry: entry[1]) for group in groups if group]
    shown: set[str] = set()
    left = budget
    while queues:
        still = []
        for queue in queues:
            name, cost = queue[0]
            if cost > left:
                continue
            left -= cost
            shown.add(name)
            queue.pop(0)
            if queue:
                still.append(queue)
        queues = still
    return shown


def codemode_description(listed: Sequence[Any], guidelines: Mapping[str, Sequence[str]],
                         budget: int | None = DEFAULT_INLINE_BUDGET) -> str:
    """The description for these listed tools (``deferred`` ones are left out here)."""
    tools = [t for t in listed if t.exposure != "deferred"]
    parts = [INTRO, GLOBALS]
    if not tools:
        return "\n\n".join(parts)
    groups: dict[str, tuple[Any, list[tuple[str, str, int]]]] = {"": (None, [])}
    for tool in tools:
        namespace = tool.namespace
        key = f"ns:{namespace.name}" if namespace is not None else ""
        section = _section(tool, guidelines.get(tool.name, ()))
        groups.setdefault(key, (namespace, []))[1].append((tool.name, section, math.ceil(len(section) / CHARS_PER_TOKEN)))
    ordered = [groups[""]] + [groups[k] for k in sorted(k for k in groups if k)]
    shown = _pick([[(name, cost) for name, _, cost in entries] for _, entries in ordered], budget)
    lines = ["Nested tools:"]
    for namespace, entries in ordered:
        visible = [(name, section) for name, section, _ in entries if name in shown]
        if namespace is not None:
            note = "" if len(visible) == len(entries) else " (tools not listed)" if not visible else " (some tools not listed)"
            about = (namespace.description or "").strip()
            lines.append(f"## {namespace.name}{note}" + (f"\n{about}" if about else ""))
        lines += [section for _, section in visible]
    parts.append("\n\n".join(lines))
    return "\n\n".join(parts)


def script_call_note(tool: Any) -> str:
    """Appended to a declared tool that scripts can call too (``codemode.mode: on``)."""
    output = tool.output_schema or TEXT_OUTPUT
    rendered = schema_type(output)
    if rendered == "string":
        what = "a string"
    elif "\n" not in rendered and len(rendered) <= 200:
        what = f"`{rendered}`"
    else:
        fields = _fields(output)
        what = f"`{fields}`" if fields else f"a value; `await describeTool({identifier(tool.name)!r})` shows its type"
    return f"\n\nCodemode: `tools.{identifier(tool.name)}(args)` resolves to {what}."


def _fields(schema: Any) -> str | None:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    required = set(schema.get("required") or [])
    return "{ " + ", ".join(f"{n}{'' if n in required else '?'}" for n in schema["properties"]) + " }"


__all__ = ["DEFAULT_INLINE_BUDGET", "codemode_description", "script_call_note"]
