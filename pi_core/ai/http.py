"""HTTP plumbing shared by provider implementations: one pooled client per event loop, timeouts that
are always set, pi's user agent, and a streaming POST that turns error responses into
:class:`~pi_core.ai.errors.ProviderHTTPError` with the SDK-style text.

httpx is imported inside the functions, so importing a provider plugin stays cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import ssl
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Self

from .errors import ErrorStyle, ProviderError, ProviderHTTPError

if TYPE_CHECKING:
    import httpx

#: Seconds. ``read`` is an idle timeout: the longest silence allowed between two chunks.
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0
WRITE_TIMEOUT = 60.0

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def user_agent() -> str:
    """``pi/<version> (<os>; python/<version>; <arch>)``, shaped like pi's ``pi/1.6.0 (linux; node/…; x64)``."""
    from .._version import __version__

    system = sys.platform.replace("win32", "windows")
    return f"pi/{__version__} ({system}; python/{platform.python_version()}; {platform.machine() or 'unknown'})"


def make_timeout(read: float | None = None) -> httpx.Timeout:
    import httpx

    return httpx.Timeout(connect=CONNECT_TIMEOUT, read=read or READ_TIMEOUT, write=WRITE_TIMEOUT,
                         pool=CONNECT_TIMEOUT)


def shared_client() -> httpx.AsyncClient:
    """The pooled client of the running event loop (created on first use, kept for the loop's life)."""
    import httpx

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(timeout=make_timeout(), follow_redirects=True, trust_env=True,
                                   verify=DeferredTrustContext())
        _clients[loop] = client
    return client


def preload() -> None:
    """Import what the first request imports (the client, its transport and socket layer) now: for a
    process that is waiting on something else anyway (see :mod:`pi_core.ai.turn_helper`)."""
    import anyio  # noqa: F401 - the transport's sockets
    import httpcore  # noqa: F401 - imported when the client's transport is made
    import httpx  # noqa: F401


class DeferredTrustContext(ssl.SSLContext):
    """A verifying TLS client context whose certificate store is read at the first TLS connection.

    Reading the CA bundle takes ~20 ms; a run against a local ``http://`` model server never needs
    it. What is trusted is exactly httpx's default: ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else certifi.
    """

    _trust_lock = threading.Lock()
    _trust_loaded = False

    def __new__(cls) -> Self:
        return super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostname checked

    def load_trust(self) -> None:
        with self._trust_lock:
            if self._trust_loaded:
                return
            if os.environ.get("SSL_CERT_FILE"):
                self.load_verify_locations(cafile=os.environ["SSL_CERT_FILE"])
            elif os.environ.get("SSL_CERT_DIR"):
                self.load_verify_locations(capath=os.environ["SSL_CERT_DIR"])
            else:
                import certifi

                self.load_verify_locations(cafile=certifi.where())
            self._trust_loaded = True

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self.load_trust()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self.load_trust()
        return super().wrap_socket(*args, **kwargs)


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine (local model servers usually need no API key)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.")


async def aclose_shared_client() -> None:
    """Close the running loop's pooled client (hosts call this at shutdown)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Merge header dicts, later layers winning, case-insensitively; a ``None`` value removes a header."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            if value is None:
                merged.pop(key.lower(), None)
            else:
                merged[key.lower()] = (key, str(value))
    return dict(merged.values())


_encode: Any = None


def encode_json(payload: Any) -> bytes:
    """A request body as UTF-8 JSON: msgspec (about ten times the standard library's speed, which a
    long conversation sent every turn needs), the standard library for what msgspec refuses."""
    global _encode
    if _encode is None:
        import msgspec

        _encode = msgspec.json.Encoder().encode
    try:
        return _encode(payload)
    except (TypeError, ValueError):  # a lone surrogate (JSON "\ud83d"), a value msgspec does not take
        pass
    from .errors import js_json

    text = js_json(payload)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate slipped through: drop it
        from .request import sanitize_surrogates

        return sanitize_surrogates(text).encode("utf-8")


@contextlib.asynccontextmanager
async def post_stream(url: str, payload: Any, headers: Mapping[str, str], *, style: ErrorStyle,
                      client: httpx.AsyncClient | None = None, read_timeout: float | None = None,
                      observer: Any = None) -> AsyncIterator[httpx.Response]:
    """POST JSON and yield the open streaming response; raise :class:`ProviderHTTPError` on non-2xx.
    ``payload`` may be ready ``bytes`` (a body that was signed, for example). An ``observer``
    (:class:`~pi_core.ai.options.RequestObserver`) sees the headers before they go and the response's
    status and headers before its body is read.

    The body is never buffered: read it with ``response.aiter_bytes()``. Leaving the block (also by
    cancellation, which is how an abort arrives) closes the connection.
    """
    import httpx

    from .wire import BodyStream, encode_body

    http = client or shared_client()
    body: Any = bytes(payload) if isinstance(payload, (bytes, bytearray)) else encode_body(payload)
    all_headers = merge_headers({"content-type": "application/json", "user-agent": user_agent()}, headers)
    if isinstance(body, list):  # a long conversation's turns, sent as they were encoded
        body = BodyStream(body)
        all_headers["content-length"] = str(body.length)
    removed: list[str] = []
    if observer is not None:
        changed = await observer.headers(dict(all_headers))
        removed = [k for k, v in changed.items() if v is None]
        all_headers = {k: v for k, v in changed.items() if v is not None}
    request = http.build_request("POST", url, content=body, headers=all_headers,
                                 timeout=make_timeout(read_timeout) if read_timeout else httpx.USE_CLIENT_DEFAULT)
    for name in removed:  # a plugin removed it: also the client's default (user-agent, ...)
        request.headers.pop(name, None)
    idle = read_timeout or READ_TIMEOUT
    try:
        response = await http.send(request, stream=True)
    except httpx.ReadTimeout as exc:
        raise idle_timeout(idle, "after the request was sent, before the response began") from exc
    try:
        if observer is not None:
            await observer.response(response.status_code, dict(response.headers))
        if response.status_code >= 400:
            raw = await response.aread()
            text = raw.decode("utf-8", "replace")
            raise ProviderHTTPError(response.status_code, text, style, headers=response.headers,
                                    reason=response.reason_phrase)
        yield response
    except httpx.ReadTimeout as exc:
        raise idle_timeout(idle, "in the middle of the response") from exc
    finally:
        await response.aclose()


#: How an idle-timeout error text begins (:func:`pi_core.ai.retry.is_idle_timeout` looks for it).
IDLE_TIMEOUT_PREFIX = "Provider idle timeout"


def idle_timeout(seconds: float, where: str) -> ProviderError:
    """The error for a response that went silent: a clear text, classified transient (retried once)."""
    return ProviderError(f"{IDLE_TIMEOUT_PREFIX}: nothing received for {seconds:g} s {where} "
                         f"(the limit is httpIdleTimeoutMs, or retry.provider.timeoutMs when set)")


__all__ = ["DeferredTrustContext", "aclose_shared_client", "is_loopback_url", "merge_headers", "post_stream", "shared_client", "user_agent"]
