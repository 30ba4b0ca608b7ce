"""JSON text exactly as JavaScript's ``JSON.stringify`` / ``JSON.parse`` produce and accept it.

pi writes every session line with ``JSON.stringify``. Python's ``json`` agrees with it on almost
everything (compact separators, escapes, raw non-ASCII) but not on numbers: JavaScript prints ``0.000018``
where Python prints ``1.8e-05`` and ``5`` where Python prints ``5.0``. It also orders integer-like object
keys first and escapes lone surrogates. :func:`dumps` fixes these up only when the fast C encoder's
output shows it might need it, so the common line costs one ``json.dumps`` and one regex scan.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_encode = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=True, check_circular=True
).encode

# Output fragments that may differ from JavaScript: exponent floats, integral floats (``5.0``),
# integers beyond 2**53 (and 1e21), integer-like keys, NaN/Infinity. False positives inside strings
# only cost the careful path.
_SUSPECT = re.compile(r"\d[eE][-+]?\d|\.0(?:[,}\]]|$)|\d{16}|[{,]\"\d+\":|NaN|Infinity")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|-?Infinity|NaN')
_SURROGATE = re.compile("[\ud800-\udfff]")
_INDEX_KEY = re.compile(r"^(?:0|[1-9]\d{0,9})$")
_MAX_SAFE = 2**53


def js_number(value: float) -> str:
    """``value`` as JavaScript's ``Number.prototype.toString`` prints it (NaN and infinities: ``null``)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    mantissa, _, exp = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    significant = digits.lstrip("0")
    point = len(int_part) + (int(exp) if exp else 0) - (len(digits) - len(significant))
    s = significant.rstrip("0")
    sign = "-" if value < 0 else ""
    return sign + _place_point(s, point)


def _place_point(s: str, point: int) -> str:
    """Digits ``s`` with the decimal point ``point`` places from their start (ECMA-262 Number::toString)."""
    k = len(s)
    if k <= point <= 21:
        return s + "0" * (point - k)
    if 0 < point <= 21:
        return s[:point] + "." + s[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + s
    e = point - 1
    exponent = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    return (s if k == 1 else s[0] + "." + s[1:]) + exponent


def _js_token(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] == '"':
        return token
    if token in ("NaN", "Infinity", "-Infinity"):
        return "null"
    if "." in token or "e" in token or "E" in token:
        return js_number(float(token))
    if len(token) >= 16 and abs(int(token)) > _MAX_SAFE:
        return js_number(float(int(token)))
    return token


def _is_array_index(key: object) -> bool:
    return isinstance(key, str) and bool(_INDEX_KEY.match(key)) and int(key) <= 2**32 - 2


def _order_keys(value: Any) -> Any:
    """A copy with JavaScript's property order: integer-like keys first, ascending, then the rest."""
    if isinstance(value, dict):
        items = [(k, _order_keys(v)) for k, v in value.items()]
        index = [kv for kv in items if _is_array_index(kv[0])]
        if index:
            rest = [kv for kv in items if not _is_array_index(kv[0])]
            items = sorted(index, key=lambda kv: int(kv[0])) + rest
        return dict(items)
    if isinstance(value, (list, tuple)):
        return [_order_keys(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON-like Python data (dict, list, str, int, float, bool, None)."""
    text = _encode(value)
    if _SUSPECT.search(text):
        if re.search(r"[{,]\"\d+\":", text):
            text = _encode(_order_keys(value))
        text = _TOKEN.sub(_js_token, text)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def loads(text: str | bytes) -> Any:
    """Parse one JSON text as ``JSON.parse`` would (no NaN/Infinity; invalid UTF-8 becomes U+FFFD)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    return _decoder.decode(text)


def loads_many(text: str) -> Any:
    """Parse ``text`` (one JSON value) with the same rules as :func:`loads`; for bulk array parsing."""
    return _decoder.decode(text)


__all__ = ["dumps", "js_number", "loads", "loads_many"]
