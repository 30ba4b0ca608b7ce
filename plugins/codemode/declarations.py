"""Tools as codemode scripts see them: a script identifier and a TypeScript declaration.

A JSON Schema becomes a TypeScript type: objects with their properties sorted (``?`` for optional
ones), one per line with ``//`` comments when a property has a description or constraints the type
cannot say (``// @integer @minimum 1``); ``Array<T>``, unions for ``enum``/``anyOf``/``oneOf``/
``type: [...]``, local ``$ref`` expanded (recursive or remote ones are ``unknown``). A type that
grows past its size limit is rendered again without the constraint tags, then becomes ``unknown``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

TEXT_OUTPUT = {"type": "string"}
INPUT_MAX_CHARS = 16_000
MAX_REF_EXPANSIONS = 32
MAX_TAG_CHARS = 80
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_TAGS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
         "pattern", "format", "minItems", "maxItems")
_NEWLINES = re.compile(r"[\r\n\u2028\u2029]")


def identifier(name: str) -> str:
    """The name a script calls a tool by: characters not valid in a JavaScript identifier become ``_``."""
    out = "".join(ch if re.match(r"[A-Za-z0-9_$]", ch) and (i or not ch.isdigit()) else "_"
                  for i, ch in enumerate(name))
    return out or "_"


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Renderer:
    def __init__(self, root: Any, tags: bool) -> None:
        self.root, self.tags = root, tags
        self.resolving: set[str] = set()
        self.expansions = 0

    def type(self, schema: Any) -> str:
        if schema is True:
            return "unknown"
        if schema is False:
            return "never"
        if not isinstance(schema, dict):
            return "unknown"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref)
        if "const" in schema:
            return _js(schema["const"])
        if isinstance(schema.get("enum"), list):
            return _union(_js(v) for v in schema["enum"])
        variants = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else schema.get("oneOf")
        if isinstance(variants, list):
            return _union(self.type(v) for v in variants)
        if isinstance(schema.get("allOf"), list):
            parts = [p for p in (self.type(s) for s in schema["allOf"]) if p != "unknown"]
            return " & ".join(f"({p})" if " | " in p else p for p in parts) or "unknown"
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union(self.type({**schema, "type": k}) for k in kind)
        simple = {"string": "string", "number": "number", "integer": "number", "boolean": "boolean", "null": "null"}
        if kind in simple:
            return simple[kind]
        if kind == "array" or (kind is None and ("items" in schema or "prefixItems" in schema)):
            return self._array(schema)
        if kind == "object" or (kind is None and any(k in schema for k in ("properties", "additionalProperties",
                                                                             "required"))):
            return self._object(schema)
        return "unknown"

    def _ref(self, ref: str) -> str:
        if ref in self.resolving or self.expansions >= MAX_REF_EXPANSIONS:
            return "unknown"
        target = resolve_ref(ref, self.root)
        if target is None:
            return "unknown"
        self.expansions += 1
        self.resolving.add(ref)
        try:
            return self.type(target)
        finally:
            self.resolving.discard(ref)

    def _array(self, schema: dict[str, Any]) -> str:
        items = schema.get("items")
        if items is not None and not isinstance(items, list):
            return f"Array<{self.type(items)}>"
        tuple_items = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else items
        if isinstance(tuple_items, list) and tuple_items:
            return "[" + ", ".join(self.type(i) for i in tuple_items) + "]"
        return "unknown[]"

    def _object(self, schema: dict[str, Any]) -> str:
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        names = sorted(properties)
        members = [f"{_key(n)}{'' if n in required else '?'}: {self.type(properties[n])};" for n in names]
        extra = schema.get("additionalProperties")
        if extra is not None and extra is not False:
            members.append(f"[key: string]: {'unknown' if extra is True else self.type(extra)};")
        elif extra is None and not names:
            members.append("[key: string]: unknown;")
        if not members:
            return "{}"
        comments = [self._comment(properties[n]) for n in names]
        if not any(comments):
            return "{ " + " ".join(members) + " }"
        lines = ["{"]
        for comment, member in zip(comments, members):
            lines += [f"  // {line}" for line in comment]
            lines.append("  " + member.replace("\n", "\n  "))
        lines += ["  " + m for m in members[len(names):]]
        return "\n".join([*lines, "}"])

    def _comment(self, schema: Any) -> list[str]:
        if not isinstance(schema, dict):
            return []
        description = schema.get("description")
        lines = [line.strip() for line in _NEWLINES.split(description.strip())] if isinstance(description, str) else []
        lines = [line for line in lines if line]
        tags = _tags(schema) if self.tags else ""
        return [*lines, tags] if tags else lines


def _tags(schema: dict[str, Any]) -> str:
    tags: list[str] = []
    kind = schema.get("type")
    if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
        tags.append("@integer")
    tags += [f"@{k} {schema[k]}" for k in _TAGS if isinstance(schema.get(k), (int, float, str))
             and not isinstance(schema.get(k), bool)]
    if schema.get("uniqueItems") is True:
        tags.append("@uniqueItems")
    if schema.get("default") is not None:
        tags.append(f"@default {_js(schema['default'])}")
    if schema.get("deprecated") is True:
        tags.append("@deprecated")
    return " ".join(_NEWLINES.sub(" ", t) for t in tags if len(t) <= MAX_TAG_CHARS)


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else _js(name)


def _union(types: Iterable[str]) -> str:
    unique = list(dict.fromkeys(types))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique) if unique else "never"


def resolve_ref(ref: str, root: Any) -> Any:
    """The subschema a local ``$ref`` (``#/$defs/Item``) names in ``root``; ``None`` otherwise."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    from urllib.parse import unquote

    current = root
    for segment in (s for s in ref[2:].split("/") if s):
        key = unquote(segment).replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current if isinstance(current, (dict, bool)) else None


def schema_type(schema: Any, max_chars: int | None = None) -> str:
    """A JSON Schema as a TypeScript type expression."""
    rendered = _Renderer(schema, True).type(schema)
    if max_chars is None or len(rendered) <= max_chars:
        return rendered
    plain = _Renderer(schema, False).type(schema)
    return plain if len(plain) <= max_chars else "unknown"


def signature(name: str, parameters: Any, output_schema: Any) -> str:
    """``name(args: In): Promise<Out>;`` with the script identifier."""
    args = schema_type(parameters, INPUT_MAX_CHARS) if parameters is not None else "unknown"
    result = schema_type(output_schema) if output_schema is not None else "unknown"
    return f"{identifier(name)}(args: {args}): Promise<{result}>;"


def tool_description(description: str, guidelines: Sequence[str] = ()) -> str:
    """A tool's description with its prompt guidelines (the system prompt has them only for declared tools)."""
    bullets = [f"- {g.strip()}" for g in guidelines if g.strip()]
    return f"{description.strip()}\n\n" + "\n".join(bullets) if bullets else description


def sample(name: str, description: str, parameters: Any, output_schema: Any) -> str:
    """What ``ALL_TOOLS``, ``describeTool`` and the codemode description show of a tool."""
    declaration = f"declare const tools: {{ {signature(name, parameters, output_schema)} }};"
    return f"{(description or '').strip()}\n\ncodemode declaration:\n```ts\n{declaration}\n```"


__all__ = ["TEXT_OUTPUT", "identifier", "resolve_ref", "sample", "schema_type", "signature", "tool_description"]
