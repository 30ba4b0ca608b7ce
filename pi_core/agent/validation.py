"""Validating a tool call's arguments against the tool's JSON Schema, coercing types as pi does.

pi validates with AJV and ``coerceTypes``: ``"3"`` is accepted for a number, ``"true"`` for a boolean,
``5`` for a string. Models get numbers-as-strings wrong often enough that refusing them would waste
turns. This covers the JSON Schema subset tool schemas use: ``type`` (or a list of types),
``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``, ``const``, ``anyOf`` /
``oneOf``, numeric and length bounds. Unknown keywords are ignored (like AJV's ``strict: false``).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from typing import Any

_MISSING = object()


@dataclass(frozen=True)
class ValidationIssue:
    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path or '(arguments)'}: {self.problem}"


class ToolArgumentsError(ValueError):
    """The arguments do not fit the schema; ``str()`` is the text the model receives."""

    def __init__(self, tool_name: str, issues: list[ValidationIssue], received: Any) -> None:
        self.tool_name, self.issues, self.received = tool_name, issues, received
        lines = "\n".join(f"  - {issue}" for issue in issues)
        shown = json.dumps(received, indent=2, ensure_ascii=False, default=str)
        super().__init__(f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{shown}')


def validate_arguments(tool_name: str, schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """Return a coerced copy of ``arguments``, or raise :class:`ToolArgumentsError`."""
    issues: list[ValidationIssue] = []
    value = _check(copy.deepcopy(arguments), schema or {}, "", issues)
    if not isinstance(value, dict):
        issues.append(ValidationIssue("", "expected an object"))
    if issues:
        raise ToolArgumentsError(tool_name, issues, arguments)
    return value


def _check(value: Any, schema: dict[str, Any], path: str, issues: list[ValidationIssue]) -> Any:
    if not isinstance(schema, dict):
        return value
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _check_union(value, schema[key], path, issues)
    types = schema.get("type")
    if types is not None:
        value, ok = _coerce(value, types if isinstance(types, list) else [types])
        if not ok:
            issues.append(ValidationIssue(path, f"expected {' or '.join(map(str, _as_list(types)))}, "
                                                f"got {_kind(value)}"))
            return value
    if "const" in schema and value != schema["const"]:
        issues.append(ValidationIssue(path, f"must be {json.dumps(schema['const'])}"))
    if "enum" in schema and value not in schema["enum"]:
        issues.append(ValidationIssue(path, "must be one of " + ", ".join(json.dumps(v) for v in schema["enum"])))
    if isinstance(value, dict):
        return _check_object(value, schema, path, issues)
    if isinstance(value, list):
        return _check_array(value, schema, path, issues)
    _check_bounds(value, schema, path, issues)
    return value


def _check_union(value: Any, options: list[Any], path: str, issues: list[ValidationIssue]) -> Any:
    for option in options:
        attempt: list[ValidationIssue] = []
        result = _check(copy.deepcopy(value), option, path, attempt)
        if not attempt:
            return result
    issues.append(ValidationIssue(path, "does not match any allowed shape"))
    return value


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str,
                  issues: list[ValidationIssue]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            issues.append(ValidationIssue(_join(path, name), "missing"))
    extra = schema.get("additionalProperties", True)
    for name in list(value):
        if name in properties:
            value[name] = _check(value[name], properties[name], _join(path, name), issues)
        elif extra is False:
            issues.append(ValidationIssue(_join(path, name), "unexpected property"))
        elif isinstance(extra, dict):
            value[name] = _check(value[name], extra, _join(path, name), issues)
    return value


def _check_array(value: list[Any], schema: dict[str, Any], path: str, issues: list[ValidationIssue]) -> list[Any]:
    items = schema.get("items")
    if isinstance(items, dict):
        value = [_check(v, items, _join(path, str(i)), issues) for i, v in enumerate(value)]
    if "minItems" in schema and len(value) < schema["minItems"]:
        issues.append(ValidationIssue(path, f"needs at least {schema['minItems']} item(s)"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        issues.append(ValidationIssue(path, f"allows at most {schema['maxItems']} item(s)"))
    return value


def _check_bounds(value: Any, schema: dict[str, Any], path: str, issues: list[ValidationIssue]) -> None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            issues.append(ValidationIssue(path, f"must be >= {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            issues.append(ValidationIssue(path, f"must be <= {schema['maximum']}"))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            issues.append(ValidationIssue(path, f"must have at least {schema['minLength']} character(s)"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            issues.append(ValidationIssue(path, f"must have at most {schema['maxLength']} character(s)"))


def _coerce(value: Any, types: list[str]) -> tuple[Any, bool]:
    if any(_is(value, t) for t in types):
        return value, True
    for target in types:
        converted = _convert(value, target)
        if converted is not _MISSING:
            return converted, True
    return value, False


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    return {
        "string": lambda: isinstance(value, str),
        "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": lambda: isinstance(value, bool),
        "object": lambda: isinstance(value, dict),
        "array": lambda: isinstance(value, list),
        "null": lambda: value is None,
    }.get(kind, lambda: True)()


def _convert(value: Any, kind: str) -> Any:
    """AJV's coercion table (scalars only; no array wrapping)."""
    if kind in ("number", "integer"):
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                return _MISSING
            if math.isfinite(number) and (kind == "number" or number.is_integer()):
                return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() \
                    else number
        if value is None:
            return 0
        return _MISSING
    if kind == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        return "" if value is None else _MISSING
    if kind == "boolean":
        return {"true": True, "false": False, 1: True, 0: False}.get(value, False if value is None else _MISSING) \
            if isinstance(value, (str, int, type(None))) else _MISSING
    if kind == "null":
        return None if value in ("", 0, False) else _MISSING
    return _MISSING


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


__all__ = ["ToolArgumentsError", "ValidationIssue", "validate_arguments"]
