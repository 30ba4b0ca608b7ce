"""RPC envelopes: responses as pi writes them, and reading command fields with clear errors.

A response is ``{"id"?, "type": "response", "command", "success": true, "data"?}`` or
``{"id"?, "type": "response", "command", "success": false, "error"}`` — in that key order, ``id``
only when the request had one, ``data`` only for commands that return something.
"""

from __future__ import annotations

from typing import Any

#: Marks "this command returns nothing" (pi sends no ``data`` key), as opposed to ``data: null``.
NO_DATA: Any = object()


class RpcError(Exception):
    """A command failed; the message becomes the response's ``error``."""


def success(request_id: Any, command: str, data: Any = NO_DATA) -> dict[str, Any]:
    record = _head(request_id, command, True)
    if data is not NO_DATA:
        record["data"] = data
    return record


def failure(request_id: Any, command: str | None, message: str) -> dict[str, Any]:
    record = _head(request_id, command, False)
    record["error"] = message
    return record


def _head(request_id: Any, command: str | None, ok: bool) -> dict[str, Any]:
    record: dict[str, Any] = {} if request_id is None else {"id": request_id}
    record["type"] = "response"
    if command is not None:
        record["command"] = command
    record["success"] = ok
    return record


def field(command: dict[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = True,
          default: Any = None) -> Any:
    """``command[name]`` checked against ``kind``; a missing optional field gives ``default``."""
    if name not in command or command[name] is None:
        if required:
            raise RpcError(f'{command.get("type")}: missing required field "{name}"')
        return default
    value = command[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RpcError(f'{command.get("type")}: field "{name}" must be {_kind_name(kind)}')
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", list: "an array", dict: "an object"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


__all__ = ["NO_DATA", "RpcError", "failure", "field", "success"]
