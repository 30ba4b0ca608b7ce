"""Building blocks for sign-in flows: PKCE, the loopback redirect server, device-code polling, and the
HTTP calls to authorization servers.

``PI_OAUTH_CALLBACK_HOST`` sets the address the loopback server listens on (default ``127.0.0.1``; pi
reads the same variable), for example ``0.0.0.0`` inside a container whose port is forwarded.
``PI_OAUTH_URL_OVERRIDES`` (``https://auth.example=http://127.0.0.1:8080,...``) sends the requests of
sign-in flows whose URL starts with the left side to the right side instead: an authorization server
behind a company proxy, or a local test server.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlsplit

from .interaction import LoginCancelled, LoginInteraction

if TYPE_CHECKING:
    import httpx


# -- PKCE and state ------------------------------------------------------------------------------------
def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str]:
    """``(verifier, challenge)`` for PKCE with ``S256`` (RFC 7636)."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, pkce_challenge(verifier)


def pkce_challenge(verifier: str) -> str:
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def random_state() -> str:
    return secrets.token_hex(16)


def decode_jwt_claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWT (unverified; used only to read account ids the token carries)."""
    import json

    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


# -- URLs and HTTP -------------------------------------------------------------------------------------
def auth_url(url: str) -> str:
    """``url`` after ``PI_OAUTH_URL_OVERRIDES``."""
    for pair in os.environ.get("PI_OAUTH_URL_OVERRIDES", "").split(","):
        source, sep, target = pair.strip().partition("=")
        if sep and source and url.startswith(source):
            return target + url[len(source):]
    return url


async def auth_request(method: str, url: str, *, json: Any = None, data: dict[str, str] | None = None,
                       headers: dict[str, str] | None = None, timeout: float = 30.0) -> httpx.Response:
    """One request to an authorization or token server (with the URL overrides applied)."""
    import httpx

    from ..http import shared_client, user_agent

    all_headers = {"user-agent": user_agent(), "accept": "application/json", **(headers or {})}
    try:
        return await shared_client().request(method, auth_url(url), json=json, data=data, headers=all_headers,
                                             timeout=timeout)
    except httpx.TimeoutException as exc:
        raise OAuthError(f"{urlsplit(url).netloc} did not answer within {timeout:.0f} s") from exc
    except httpx.HTTPError as exc:
        raise OAuthError(f"could not reach {urlsplit(url).netloc}: {exc}") from exc


class OAuthError(RuntimeError):
    """An authorization server refused or failed a step of the sign-in (the message names the step)."""


def token_fields(response: httpx.Response, step: str) -> dict[str, Any]:
    """The JSON body of a token response; raises :class:`OAuthError` with the server's answer otherwise."""
    text = response.text
    if response.status_code >= 400:
        raise OAuthError(f"{step} failed ({response.status_code}): {text[:500] or response.reason_phrase}")
    try:
        body = response.json()
    except ValueError as exc:
        raise OAuthError(f"{step} returned something that is not JSON: {text[:200]!r}") from exc
    if not isinstance(body, dict):
        raise OAuthError(f"{step} returned an unexpected answer: {text[:200]!r}")
    return body


def expires_at(expires_in: Any, margin_s: float = 0.0) -> int:
    """Milliseconds since 1970 when a token valid for ``expires_in`` seconds expires, minus a margin."""
    try:
        seconds = float(expires_in)
    except (TypeError, ValueError) as exc:
        raise OAuthError(f"token response has no usable expires_in ({expires_in!r})") from exc
    return int(time.time() * 1000 + (seconds - margin_s) * 1000)


# -- loopback redirect ---------------------------------------------------------------------------------
_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>pi</title></head>
<body style="font-family: sans-serif; margin: 4em auto; max-width: 36em"><h2>{title}</h2><p>{detail}</p></body></html>"""


def _page(title: str, detail: str = "") -> bytes:
    return _PAGE.format(title=html.escape(title), detail=html.escape(detail)).encode()


class CallbackServer:
    """An HTTP server on a loopback port that receives the authorization redirect
    (``GET <path>?code=...&state=...``) once. Use :func:`start_callback_server`."""

    def __init__(self, provider_name: str, path: str, state: str | None) -> None:
        self.provider_name, self.path, self.state = provider_name, path, state
        self.redirect_uri = ""
        self.query: dict[str, str] = {}
        """Every parameter of the redirect that was accepted (a flow may need more than ``code``)."""
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    async def wait(self) -> str | None:
        """The authorization code, or ``None`` when :meth:`cancel` was called first."""
        return await asyncio.shield(self._result)

    def cancel(self) -> None:
        if not self._result.done():
            self._result.set_result(None)

    async def close(self) -> None:
        self.cancel()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 10)
            while (line := await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            status, body = self._answer(request_line.decode("latin-1"))
        except (asyncio.TimeoutError, ConnectionError, UnicodeDecodeError):
            status, body = 400, _page("Bad request.")
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}.get(status, "Error")
        writer.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n"
                     f"cache-control: no-store\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
                     .encode() + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def _answer(self, request_line: str) -> tuple[int, bytes]:
        parts = request_line.split()
        if len(parts) < 2 or parts[0] != "GET":
            return 404, _page("Not found.")
        target = urlsplit(parts[1])
        if target.path != self.path:
            return 404, _page("Not found.")
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        if self.state is not None and query.get("state") != self.state:
            return 400, _page("The sign-in state does not match.", "Start the sign-in again from pi.")
        if self._result.done():
            return 409, _page("This sign-in was already handled.")
        if query.get("error"):
            detail = query.get("error_description") or query["error"]
            self._result.set_exception(OAuthError(f"{self.provider_name} refused the sign-in: {detail}"))
            return 400, _page(f"{self.provider_name} refused the sign-in.", detail)
        code = query.get("code")
        if not code:
            return 400, _page("The redirect has no authorization code.")
        self.query = query
        self._result.set_result(code)
        return 200, _page(f"Signed in to {self.provider_name}.", "You can close this page and return to pi.")


async def start_callback_server(provider_name: str, *, port: int, path: str, state: str | None,
                                redirect_host: str | None = None) -> CallbackServer:
    """Listen for the redirect on ``port`` (``0`` = any free port). Raises ``OSError`` if it is taken."""
    host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
    server = CallbackServer(provider_name, path, state)
    server._server = await asyncio.start_server(server._handle, host, port)
    bound = server._server.sockets[0].getsockname()[1]
    shown = redirect_host or host
    if ":" in shown:
        shown = f"[{shown}]"
    server.redirect_uri = f"http://{shown}:{bound}{path}"
    return server


@dataclass
class CallbackOrPaste:
    kind: Literal["callback", "manual"]
    value: str


async def callback_or_paste(interaction: LoginInteraction, callback: CallbackServer | None, message: str,
                            placeholder: str = "") -> CallbackOrPaste:
    """Whichever comes first: the browser's redirect to ``callback``, or a code/URL the user pastes (for
    a browser on another machine). Without a callback server only the paste is waited for."""
    paste = asyncio.ensure_future(interaction.manual_code(message, placeholder))
    if callback is None:
        return CallbackOrPaste("manual", await paste)
    redirect = asyncio.ensure_future(callback.wait())
    try:
        done, _ = await asyncio.wait({paste, redirect}, return_when=asyncio.FIRST_COMPLETED)
        if redirect in done and redirect.result() is not None:
            return CallbackOrPaste("callback", redirect.result())
        return CallbackOrPaste("manual", await paste)
    finally:
        for task in (paste, redirect):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def parse_pasted_code(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from a pasted redirect URL, ``code#state``, a query string or a bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        return query.get("code"), query.get("state")
    if "#" in value:
        code, _, state = value.partition("#")
        return code or None, state or None
    if "code=" in value:
        query = {k: v[0] for k, v in parse_qs(value).items()}
        return query.get("code"), query.get("state")
    return value, None


# -- device code (RFC 8628) ----------------------------------------------------------------------------
@dataclass
class Poll:
    """One poll's outcome: ``complete`` (with ``value``), ``pending``, ``slow_down`` or ``failed``."""

    status: Literal["complete", "pending", "slow_down", "failed"]
    value: Any = None
    message: str = ""
    interval: float | None = None


MIN_POLL_SECONDS = 1.0


async def poll_device_code(poll: Callable[[], Awaitable[Poll]], *, interval: float | None,
                           expires_in: float | None, wait_first: bool = False) -> Any:
    """Poll until the user has approved the device code; the value of the completing poll.

    The interval defaults to 5 s (RFC 8628 §3.2); ``slow_down`` adds 5 s or uses the interval the
    server names (§3.5).
    """
    deadline = time.monotonic() + expires_in if expires_in else float("inf")
    delay = max(MIN_POLL_SECONDS, interval if interval is not None else 5.0)
    slowed = False
    if wait_first:
        await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
    while time.monotonic() < deadline:
        result = await poll()
        if result.status == "complete":
            return result.value
        if result.status == "failed":
            raise OAuthError(result.message or "device sign-in failed")
        if result.status == "slow_down":
            slowed = True
            delay = max(MIN_POLL_SECONDS, result.interval if result.interval else delay + 5.0)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        await asyncio.sleep(min(delay, remaining))
    raise OAuthError("The device code expired before the sign-in was approved." +
                     (" The server asked to slow down: check this machine's clock." if slowed else ""))




# -- a standard device-code sign-in ----------------------------------------------------------------------
class DeviceCodeOAuth:
    """An :class:`~pi_core.ai.OAuthFlow` for a plain RFC 8628 device authorization grant with refresh
    tokens (form-encoded requests, JSON answers). Providers with a twist subclass it and override
    :meth:`credential` (how a token answer becomes the stored credential) or :meth:`refresh`."""

    is_subscription = True

    def __init__(self, name: str, *, client_id: str, device_url: str, token_url: str, scope: str | None = None,
                 device_fields: dict[str, str] | None = None, margin_s: float = 0.0,
                 default_expires_in: float | None = None, https_only: bool = True) -> None:
        self.name, self.client_id, self.scope = name, client_id, scope
        self.device_url, self.token_url = device_url, token_url
        self.device_fields = device_fields or {}
        self.margin_s, self.default_expires_in, self.https_only = margin_s, default_expires_in, https_only

    def urls(self) -> tuple[str, str]:
        """``(device authorization URL, token URL)``; override to read them from the environment."""
        return self.device_url, self.token_url

    async def _post(self, url: str, fields: dict[str, str]) -> tuple[int, dict[str, Any]]:
        response = await auth_request("POST", url, data=fields)
        try:
            body = response.json()
        except ValueError:
            body = None
        return response.status_code, body if isinstance(body, dict) else {}

    def _verification(self, body: dict[str, Any]) -> str:
        for field in ("verification_uri_complete", "verification_uri"):
            value = body.get(field)
            if isinstance(value, str) and value:
                scheme = urlsplit(value).scheme
                if scheme == "https" or (scheme == "http" and not self.https_only):
                    return value
                raise OAuthError(f"{self.name}: untrusted verification address in the device code answer")
        raise OAuthError(f"{self.name}: the device code answer has no verification address")

    async def login(self, interaction: LoginInteraction) -> dict[str, Any]:
        from .interaction import DeviceCodeEvent

        device_url, token_url = self.urls()
        fields = {"client_id": self.client_id, **({"scope": self.scope} if self.scope else {}), **self.device_fields}
        status, body = await self._post(device_url, fields)
        if status >= 400 or not isinstance(body.get("device_code"), str) or not isinstance(body.get("user_code"), str):
            detail = body.get("error_description") or body.get("error") or body
            raise OAuthError(f"{self.name} device authorization failed ({status}): {detail}")
        interval = body.get("interval") if isinstance(body.get("interval"), (int, float)) and body["interval"] > 0 \
            else None
        expires_in = body.get("expires_in") if isinstance(body.get("expires_in"), (int, float)) else None
        interaction.notify(DeviceCodeEvent(body["user_code"], self._verification(body), interval, expires_in))

        async def poll() -> Poll:
            code, answer = await self._post(token_url, {
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": self.client_id,
                "device_code": body["device_code"]})
            if code < 400 and isinstance(answer.get("access_token"), str):
                return Poll("complete", answer)
            error = answer.get("error")
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                wait = answer.get("interval")
                return Poll("slow_down", interval=wait if isinstance(wait, (int, float)) else None)
            if error in ("access_denied", "authorization_denied"):
                return Poll("failed", message=f"The {self.name} sign-in was denied.")
            if error == "expired_token":
                return Poll("failed", message=f"The {self.name} device code expired; sign in again.")
            return Poll("failed", message=f"{self.name} device sign-in failed ({code}): {answer or 'no answer'}")

        tokens = await poll_device_code(poll, interval=interval, expires_in=expires_in, wait_first=True)
        return await self.credential(tokens, None, interaction)

    async def credential(self, tokens: dict[str, Any], previous: dict[str, Any] | None,
                         interaction: LoginInteraction | None = None) -> dict[str, Any]:
        refresh = tokens.get("refresh_token") or (previous or {}).get("refresh")
        if not isinstance(refresh, str) or not refresh:
            raise OAuthError(f"{self.name}: the token answer has no refresh_token")
        expires_in = tokens.get("expires_in", self.default_expires_in)
        return {"type": "oauth", "access": tokens["access_token"], "refresh": refresh,
                "expires": expires_at(expires_in, self.margin_s)}

    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]:
        _, token_url = self.urls()
        code, answer = await self._post(token_url, {"grant_type": "refresh_token", "client_id": self.client_id,
                                                    "refresh_token": credential["refresh"]})
        if code >= 400 or not isinstance(answer.get("access_token"), str):
            detail = answer.get("error_description") or answer.get("error") or answer
            raise OAuthError(f"{self.name} token refresh failed ({code}): {detail}")
        return await self.credential(answer, credential)

    def to_auth(self, credential: dict[str, Any]) -> Any:
        from .types import AuthResult

        return AuthResult(api_key=credential["access"], source=f"{self.name} sign-in", kind="oauth")


__all__ = ["CallbackOrPaste", "CallbackServer", "DeviceCodeOAuth", "LoginCancelled", "OAuthError", "Poll",
           "auth_request", "auth_url", "callback_or_paste", "decode_jwt_claims", "expires_at", "parse_pasted_code", "pkce_challenge",
           "pkce_pair", "poll_device_code", "random_state", "start_callback_server", "token_fields"]
