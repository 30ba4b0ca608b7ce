"""JSON text exactly as JavaScript's ``JSON.stringify`` / ``JSON.parse`` produce and accept it.

pi writes every session line with ``JSON.stringify``. Python's ``json`` agrees with it on almost
everything (compact separators, escapes, raw non-ASCII) but not on numbers: JavaScript prints ``0.000018``
where Python prints ``1.8e-05`` and ``5`` where Python prints ``5.0``. It also orders integer-like object
keys first and escapes lone surrogates. :func:`dumps` is a small one-pass encoder that does all of
that (strings are quoted by ``json``'s C helper).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from json.encoder import encode_basestring as _quote  # the C version where available

_SURROGATE = re.compile("[\ud800-\udfff]")
_INDEX_KEY = re.compile(r"(?:0|[1-9]\d{0,9})\Z")
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


def _is_array_index(key: object) -> bool:
    return isinstance(key, str) and bool(_INDEX_KEY.match(key)) and int(key) <= 2**32 - 2


def _ordered_items(value: dict[str, Any]) -> list[tuple[str, Any]]:
    """JavaScript's property order: integer-like keys first, ascending, then the rest as inserted."""
    items = list(value.items())
    index = sorted((kv for kv in items if _is_array_index(kv[0])), key=lambda kv: int(kv[0]))
    return index + [kv for kv in items if not _is_array_index(kv[0])]


def _float(value: float) -> str:
    text = value.__repr__()
    if "e" in text or text[-2:] == ".0" or text[-1] in "nf":  # exponent, integral, nan/inf
        return js_number(value)
    return text  # positional: Python and JavaScript print the same shortest digits


def _scalar(value: Any, kind: type) -> str:
    if kind is int:
        return value.__repr__() if -_MAX_SAFE <= value <= _MAX_SAFE else js_number(float(value))
    if kind is float:
        return _float(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise TypeError(f"{kind.__name__} is not JSON data")


def _encode(value: Any, out: Any) -> None:
    # One pass, scalars inline: about twice the C encoder's time, and exact where it is not.
    kind = value.__class__
    if kind is dict:
        if not value:
            out("{}")
            return
        items: Any = value.items()
        if any(k[:1].isdigit() for k in value if k.__class__ is str):
            items = _ordered_items(value)
        sep = "{"
        for key, item in items:
            if key.__class__ is not str:
                raise TypeError(f"object keys must be strings, not {type(key).__name__}")
            item_kind = item.__class__
            if item_kind is str:
                out(sep + _quote(key) + ":" + _quote(item))
            elif item_kind is dict or item_kind is list or item_kind is tuple:
                out(sep + _quote(key) + ":")
                _encode(item, out)
            else:
                out(sep + _quote(key) + ":" + _scalar(item, item_kind))
            sep = ","
        out("}")
    elif kind is list or kind is tuple:
        if not value:
            out("[]")
            return
        sep = "["
        for item in value:
            item_kind = item.__class__
            if item_kind is str:
                out(sep + _quote(item))
            elif item_kind is dict or item_kind is list or item_kind is tuple:
                out(sep)
                _encode(item, out)
            else:
                out(sep + _scalar(item, item_kind))
            sep = ","
        out("]")
    elif kind is str:
        out(_quote(value))
    else:
        out(_scalar(value, kind))


def dumps(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON data (dict with str keys, list, str, int, float, bool, None)."""
    parts: list[str] = []
    _encode(value, parts.append)
    text = "".join(parts)
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def dumps_line(value: Any) -> bytes:
    """:func:`dumps` plus a newline, as UTF-8: one session file line."""
    text = dumps(value)
    return (text + "\n").encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _js_int(text: str) -> int | float:
    """An integer literal; one past Python's digit limit (4300) is what ``JSON.parse`` makes of it, a
    double (``Infinity`` from 309 digits on), instead of a ``ValueError``."""
    return int(text) if len(text) <= 4300 else float(text)


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_js_int)
_fast: Any = None


def _fast_decode() -> Any:
    global _fast
    import msgspec

    _fast = msgspec.json.Decoder().decode
    return _fast


def loads(text: str | bytes) -> Any:
    """Parse one JSON text as ``JSON.parse`` would (no NaN/Infinity; invalid UTF-8 becomes U+FFFD).

    msgspec parses it; what msgspec refuses but ``JSON.parse`` accepts (lone surrogate escapes, numbers
    beyond a double, integers of thousands of digits, invalid UTF-8) is parsed again by the standard
    library (an integer beyond Python's 4300-digit limit becomes a float, as in JavaScript). A value nested too deeply
    for either raises ``ValueError``, like any other text that is not JSON.
    """
    try:
        return (_fast or _fast_decode())(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except Exception:  # msgspec.DecodeError / ValidationError: try the exact, slower parser
        pass
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
    try:
        return _decoder.decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def loads_many(text: str) -> Any:
    """Parse ``text`` (one JSON value) with the same rules as :func:`loads`; for bulk array parsing."""
    return loads(text)


__all__ = ["dumps", "dumps_line", "js_number", "loads", "loads_many"]
