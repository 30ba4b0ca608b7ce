"""Reading JSON that came from outside: ``JSON.parse``'s grammar, a depth and size limit, clear errors.

Python's parser recurses once per nesting level, so a 2 KB line of ``[[[[...`` raises
``RecursionError`` — not a ``ValueError`` — and takes down whatever was reading (the RPC loop, a
settings load, a provider stream). Every JSON text the program did not write itself goes through
:func:`parse_json`: RPC stdin, settings, ``models.json``, ``auth.json``, ``mcp.json``, tool-call
arguments from a model, provider stream chunks. It raises :class:`JSONInputError` (a ``ValueError``)
for anything it will not take, so callers keep their ``except ValueError``.

What is refused, besides malformed JSON: nesting deeper than :data:`JSON_MAX_DEPTH` (pydantic's and
jiter's limit; no message, setting or tool call needs more), a text over ``max_bytes`` when the
caller gives one, ``NaN``/``Infinity`` (not JSON), and numbers too large for a float (``1e400``,
which ``JSON.parse`` turns into ``Infinity`` and ``JSON.stringify`` then into ``null``).
:func:`json_safe` does that last step for output: non-finite floats become ``null``.

This module imports only the standard library, so every layer (the model layer included) can use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

JSON_MAX_DEPTH = 200
"""Deepest nesting of arrays and objects :func:`parse_json` accepts by default."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


class JSONInputError(ValueError):
    """JSON the program will not take: malformed, nested too deeply, too large or out of range.

    The message says which; ``str(error)`` is meant for the user.
    """


def _reject_constant(name: str) -> Any:
    raise JSONInputError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONInputError(f"the number {_clip(text)} is too large")
    return value


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def parse_json(text: str | bytes | bytearray, *, max_depth: int = JSON_MAX_DEPTH,
               max_bytes: int | None = None) -> Any:
    """Parse one JSON text as ``JSON.parse`` would, within limits; raises :class:`JSONInputError`.

    :param text: the JSON text; bytes are decoded as UTF-8 (invalid bytes become U+FFFD, as in Node).
    :param max_depth: the deepest nesting of arrays/objects accepted.
    :param max_bytes: refuse longer texts (counted in characters for ``str``); ``None`` for no limit.
    """
    if isinstance(text, (bytes, bytearray)):
        if max_bytes is not None and len(text) > max_bytes:
            raise JSONInputError(_too_large(len(text), max_bytes))
        text = bytes(text).decode("utf-8", errors="replace")
    elif max_bytes is not None and len(text) > max_bytes:
        raise JSONInputError(_too_large(len(text), max_bytes))
    if nesting_exceeds(text, max_depth):
        raise JSONInputError(_too_deep(max_depth))
    try:
        return _decoder.decode(text)
    except JSONInputError:
        raise
    except RecursionError:  # unbalanced openers ("[[[[" with no end) are not counted by the pre-check
        raise JSONInputError(_too_deep(max_depth)) from None
    except ValueError as exc:  # JSONDecodeError, or an integer over Python's digit limit
        raise JSONInputError(_describe(exc)) from None


def nesting_exceeds(text: str, max_depth: int) -> bool:
    """Whether the arrays/objects of ``text`` nest deeper than ``max_depth`` (strings are skipped).

    Linear for ordinary documents: the bracket count settles most texts at once; otherwise the
    brackets outside strings are reduced pair by pair, one nesting level per (C-speed) pass.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return False
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(max_depth):
        reduced = _PAIR.sub("", skeleton)
        if reduced == skeleton:  # empty, or brackets that do not pair up: the parser will say so
            return False
        skeleton = reduced
    return _PAIR.search(skeleton) is not None


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (what ``JSON.stringify`` writes)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _too_deep(max_depth: int) -> str:
    return f"nested more than {max_depth} levels deep"


def _too_large(size: int, max_bytes: int) -> str:
    return f"{size} bytes is over the limit of {max_bytes} bytes"


def _describe(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    text = str(exc)
    return "an integer with too many digits" if "digits" in text else text


def _clip(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:20]}..."


__all__ = ["JSON_MAX_DEPTH", "JSONInputError", "json_safe", "nesting_exceeds", "parse_json"]
