"""Provider errors and the message texts pi's JavaScript SDKs give them.

The text matters: overflow detection, retry classification and the CLI's stderr (``400: {...}`` for
``pi -p``) all work on ``AssistantMessage.error_message``. The formats, per wire protocol:

* OpenAI style (``openai-completions``, ``openai-responses``): ``"<status>: <JSON of body.error>"`` when
  the body has an ``error`` object (pi 1.6 prints the SDK error's body); an empty body gives
  ``"<status> status code (no body)"``; plain text gives ``"<status> <text>"``.
* Anthropic: ``"<status> <JSON body>"`` (the SDK stringifies the whole body; a top-level ``message``
  string is used as is).
* Google: the JSON of the body (``{"error":{"code":429,...}}``), as ``@google/genai`` raises it; a
  non-JSON body is wrapped in that shape.

JSON is written compactly with non-ASCII kept, as ``JSON.stringify`` does. Bodies are cut at 4000 chars.
"""

from __future__ import annotations

import json
import re
from email.utils import parsedate_to_datetime
from typing import Any, Literal

ErrorStyle = Literal["openai", "anthropic", "google"]
MAX_BODY_CHARS = 4000


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact separators, non-ASCII characters unescaped."""
    global _fast
    if _fast is None:
        import msgspec

        _fast = msgspec.json.Encoder().encode
    try:
        out = _fast(value)
    except (TypeError, ValueError, OverflowError):  # a lone surrogate, a type msgspec does not take
        return _js_encode(value)
    # msgspec writes the same text, a few times faster (every tool call of a long conversation goes
    # through here), except for floats in exponent form ("1e20" where this always wrote "1e+20")
    return _js_encode(value) if _EXPONENT.search(out) else out.decode()


# One encoder for every call: ``json.dumps`` with options builds a new one each time.
_js_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_fast: Any = None
_EXPONENT = re.compile(rb"[0-9][eE][-+]?[0-9]")


def _truncate(text: str) -> str:
    if len(text) <= MAX_BODY_CHARS:
        return text
    return f"{text[:MAX_BODY_CHARS]}... [truncated {len(text) - MAX_BODY_CHARS} chars]"


def _parse(body: str) -> Any:
    from ..safejson import parse_json

    try:
        return parse_json(body)
    except ValueError:
        return None


def format_http_error(status: int, body: str, style: ErrorStyle = "openai", reason: str = "") -> str:
    """The error message text for an HTTP error response, in the given SDK's format."""
    text = body.strip()
    parsed = _parse(text) if text else None
    if style == "google":
        if not isinstance(parsed, dict):
            parsed = {"error": {"message": text, "code": status, "status": reason}}
        return _truncate(js_json(parsed))
    if not text:
        return f"{status} status code (no body)"
    if parsed is None:
        return f"{status} {_truncate(text)}"
    if style == "anthropic":
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return f"{status} {parsed['message']}"
        return f"{status} {_truncate(js_json(parsed))}"
    detail = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(detail, dict) and detail:
        return f"{status}: {_truncate(js_json(detail))}"
    if isinstance(detail, str) and detail:
        return f"{status} {detail}"
    return f"{status}: {_truncate(js_json(parsed))}"


def retry_after_ms(headers: Any) -> int | None:
    """The server-requested delay from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0, int(float(value)))
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0, int(float(value) * 1000))
    except ValueError:
        pass
    try:
        import time

        when = parsedate_to_datetime(value).timestamp()
        return max(0, int((when - time.time()) * 1000))
    except (TypeError, ValueError):
        return None


class ProviderError(Exception):
    """An error a provider reported; ``str(error)`` is the text for ``error_message``."""

    def __init__(self, message: str, *, status: int | None = None, retry_after_ms: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_ms = retry_after_ms


class ProviderHTTPError(ProviderError):
    """A non-2xx response. ``body`` is the raw response text."""

    def __init__(self, status: int, body: str, style: ErrorStyle = "openai", *, headers: Any = None,
                 reason: str = "") -> None:
        super().__init__(format_http_error(status, body, style, reason), status=status,
                         retry_after_ms=retry_after_ms(headers))
        self.body = body


class MissingApiKeyError(ProviderError):
    """No API key could be found for a provider that needs one."""

    def __init__(self, provider: str, hint: str | None = None) -> None:
        super().__init__(f"No API key for provider: {provider}" + (f". {hint}" if hint else ""))
        self.provider = provider
        self.hint = hint


def describe_exception(exc: BaseException) -> str:
    """A one-line error text for any exception a request can raise (httpx errors named like the SDKs)."""
    if isinstance(exc, ProviderError):
        return str(exc)
    name = type(exc).__name__
    detail = str(exc).strip() or repr(exc)
    module = type(exc).__module__
    if module.startswith(("httpx", "httpcore")):
        if "Timeout" in name:
            return f"Request timed out: {detail}" if str(exc).strip() else "Request timed out."
        if name in ("ConnectError", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError",
                    "ProxyError", "LocalProtocolError", "CloseError"):
            return f"Connection error: {detail}"
        return f"{name}: {detail}"
    if isinstance(exc, (ConnectionError, OSError)):
        return f"Connection error: {detail}"
    return detail if str(exc).strip() else name


__all__ = [
    "ErrorStyle",
    "MissingApiKeyError",
    "ProviderError",
    "ProviderHTTPError",
    "describe_exception",
    "format_http_error",
    "js_json",
    "retry_after_ms",
]
