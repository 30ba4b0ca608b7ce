"""OAuth for streamable HTTP servers, on the MCP SDK's ``OAuthClientProvider``.

OAuth applies to an HTTP server without an ``Authorization`` header. A connection never starts a browser
sign-in: it sends the stored access token, refreshes it when it expired, and after a 401 refreshes once
more; when that is not possible the server "needs sign-in" (:class:`NeedsSignIn`). ``pi mcp login`` and
``/mcp login`` run the SDK's authorization code flow with PKCE (:func:`sign_in`) against a loopback
redirect (``http://127.0.0.1:<port>/callback``) or a redirected URL the user pastes, identifying pi with
a configured client, pi's Client ID Metadata Document, or dynamic client registration. The state is kept
in ``mcp-auth.json`` in pi's format (:mod:`plugins.mcp.auth_store`), re-read before every request, so a
sign-in or refresh by another process (pi or this pi) is picked up on the next request.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import create_client_registration_request, extract_field_from_www_auth
from mcp.client.streamable_http import MCP_PROTOCOL_VERSION, streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata, OAuthToken, \
    ProtectedResourceMetadata

from pi_core import __version__

from .auth_store import AuthStore, normalize_url
from .config import ConfigValueError, ServerEntry, resolve_map, resolve_value

#: pi's Client ID Metadata Documents (``client.json`` and ``<callback id>/client.json``).
CIMD_BASE = "https://pi.dev/oauth"
CLIENT_NAME = "pi"
CALLBACK_HOST = "127.0.0.1"
CALLBACK_PATH = "/callback"
REGISTRATION_MODES = ("auto", "dcr", "cimd")
# The SDK logs failed refreshes and flows; without a handler Python would print them to stderr, into the
# terminal UI. What matters reaches the user as the server's state and mcp.log.
logging.getLogger("mcp").addHandler(logging.NullHandler())
SIGN_IN_HINT = 'run "/mcp login {name}" or "pi mcp login {name}"'


class NeedsSignIn(Exception):
    """The server rejected the connection and no stored credentials could fix that."""


class SignInError(Exception):
    """A sign-in failed; the message says why."""


def oauth_applies(entry: ServerEntry) -> bool:
    """HTTP servers without a configured ``Authorization`` header use OAuth when they ask for it."""
    headers = entry.config.get("headers") or {}
    return entry.is_http and not any(k.lower() == "authorization" for k in headers)


def is_cimd_callback(callback_url: str | None) -> bool:
    """Whether pi's documents list the redirect URI: a loopback ``/callback`` (not ``[::1]``)."""
    if callback_url is None:
        return True
    parts = urlsplit(callback_url)
    return parts.hostname in ("localhost", "127.0.0.1") and parts.path == CALLBACK_PATH


def callback_id(server_url: str) -> str:
    """12 characters identifying a server URL in server-specific callback paths (as pi computes them)."""
    href = normalize_url(server_url).split("#", 1)[0]
    return base64.urlsafe_b64encode(hashlib.sha256(href.encode()).digest()[:9]).decode().rstrip("=")


@dataclass
class OAuthSettings:
    client_id: str | None = None
    client_secret: str | None = None
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    client_name: str | None = None
    registration: str = "auto"
    auth_server_metadata_url: str | None = None

    @classmethod
    def of(cls, entry: ServerEntry) -> OAuthSettings:
        raw = entry.config.get("oauth") or {}
        where = f'MCP server "{entry.name}" oauth'

        def value(key: str) -> str | None:
            item = raw.get(key)
            return resolve_value(item, f"{where}.{key}") if isinstance(item, str) else None

        return cls(client_id=value("clientId"), client_secret=value("clientSecret"),
                   callback_port=raw.get("callbackPort") if isinstance(raw.get("callbackPort"), int) else None,
                   callback_url=raw.get("callbackUrl"), scope=raw.get("scope"), client_name=raw.get("clientName"),
                   registration=raw.get("clientRegistration") or "auto",
                   auth_server_metadata_url=raw.get("authServerMetadataUrl"))

    def offers_cimd(self) -> bool:
        if self.registration != "auto":
            return self.registration == "cimd"
        return not self.client_id and not self.client_name and is_cimd_callback(self.callback_url)

    def redirect_url(self, port: int) -> str:
        """The redirect URI for a listener on ``port``: ``callbackUrl`` as written when it has a port."""
        if self.callback_url is None:
            return f"http://{CALLBACK_HOST}:{port}{CALLBACK_PATH}"
        parts = urlsplit(self.callback_url)
        if parts.port:
            return self.callback_url
        host = parts.netloc if parts.netloc.startswith("[") else parts.hostname or CALLBACK_HOST
        return urlunsplit((parts.scheme, f"{host}:{port}", parts.path or "/", parts.query, ""))

    def listen_port(self) -> int:
        if self.callback_url is not None and urlsplit(self.callback_url).port:
            return int(urlsplit(self.callback_url).port or 0)
        return self.callback_port or 0

    def listen_host(self) -> str:
        host = urlsplit(self.callback_url).hostname if self.callback_url else None
        return CALLBACK_HOST if host in (None, "localhost") else str(host)


class StoreStorage:
    """The SDK's ``TokenStorage`` on one server's entry of ``mcp-auth.json``."""

    def __init__(self, store: AuthStore, entry: ServerEntry, settings: OAuthSettings) -> None:
        self.store = store
        self.name = entry.name
        self.url = entry.config["url"]
        self.server_url = normalize_url(self.url)
        self.settings = settings
        self.redirect_url: str | None = None
        """A stored registration is used only while it lists this redirect URI (sign-in sets it)."""

    def state(self) -> dict[str, Any]:
        state = self.store.load(self.name, self.url)
        return state if state is not None and state.get("serverUrl") == self.server_url else {}

    def change(self, change: Callable[[dict[str, Any]], None]) -> None:
        self.store.modify(self.name, self.url, change)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self.state().get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = tokens.model_dump(mode="json", exclude_none=True)

        def put(state: dict[str, Any]) -> None:
            old = state.get("tokens")
            if "refresh_token" not in record and isinstance(old, dict) and old.get("refresh_token"):
                record["refresh_token"] = old["refresh_token"]  # a refresh that returns none keeps the old one
            state["tokens"] = record
            if tokens.expires_in is None:
                state.pop("tokensExpireAt", None)
            else:
                state["tokensExpireAt"] = int(time.time() * 1000 + tokens.expires_in * 1000)
            state.pop("codeVerifier", None)
            state.pop("oauthState", None)

        self.change(put)

    def expires_at(self) -> float | None:
        at = self.state().get("tokensExpireAt")
        return at / 1000 if isinstance(at, (int, float)) else None

    def configured_client(self) -> OAuthClientInformationFull | None:
        if not self.settings.client_id:
            return None
        return OAuthClientInformationFull(
            client_id=self.settings.client_id, client_secret=self.settings.client_secret or None,
            token_endpoint_auth_method="client_secret_post" if self.settings.client_secret else "none",
            redirect_uris=[self.redirect_url] if self.redirect_url else None)  # type: ignore[list-item]

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        configured = self.configured_client()
        if configured is not None:
            return configured
        info = self.state().get("clientInformation")
        if not isinstance(info, dict):
            return None
        try:
            client = OAuthClientInformationFull.model_validate(info)
        except ValueError:
            return None
        if self.redirect_url is not None and self.redirect_url not in [str(u) for u in client.redirect_uris or []]:
            return None  # registered for another redirect URI: register again
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.settings.client_id:
            return
        record = client_info.model_dump(mode="json", exclude_none=True)
        record.pop("issuer", None)

        def put(state: dict[str, Any]) -> None:
            state["clientInformation"] = record

        self.change(put)

    def discovery(self) -> dict[str, Any]:
        found = self.state().get("discovery")
        return found if isinstance(found, dict) else {}

    def save_discovery(self, auth_server_url: str | None, metadata: OAuthMetadata | None,
                       resource: ProtectedResourceMetadata | None) -> None:
        if auth_server_url is None and metadata is None:
            return
        record: dict[str, Any] = {"authorizationServerUrl": auth_server_url or str(metadata.issuer)}  # type: ignore[union-attr]
        if metadata is not None:
            record["authorizationServerMetadata"] = metadata.model_dump(mode="json", exclude_none=True)
        if resource is not None:
            record["resourceMetadata"] = resource.model_dump(mode="json", exclude_none=True)

        def put(state: dict[str, Any]) -> None:
            state["discovery"] = record

        self.change(put)


class PiOAuthProvider(OAuthClientProvider):
    """The SDK's provider with pi's rules. ``interactive`` (sign-in) runs the SDK's whole flow; otherwise
    (connections) only stored tokens and refreshes are used, and :class:`NeedsSignIn` ends the request."""

    def __init__(self, storage: StoreStorage, settings: OAuthSettings, *, interactive: bool = False,
                 redirect_url: str = f"http://{CALLBACK_HOST}{CALLBACK_PATH}",
                 redirect_handler: Callable[[str], Awaitable[None]] | None = None,
                 callback_handler: Callable[[], Awaitable[tuple[str, str | None]]] | None = None,
                 timeout: float = 300.0) -> None:
        metadata = OAuthClientMetadata(
            redirect_uris=[redirect_url],  # type: ignore[list-item]
            client_name=settings.client_name or CLIENT_NAME, grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], scope=settings.scope,
            token_endpoint_auth_method="client_secret_post" if settings.client_secret else "none")
        super().__init__(storage.url, metadata, storage, redirect_handler, callback_handler, timeout,
                         client_metadata_url=f"{CIMD_BASE}/client.json" if settings.offers_cimd() else None)
        self.storage = storage
        self.settings = settings
        self.interactive = interactive
        self.redirect_url = redirect_url
        self.needs_sign_in: str | None = None
        """Why the server needs sign-in, once a request found that out."""
        self.failure: BaseException | None = None
        self.iss_supported = False
        self.refreshed = False
        self.configured_issuer: str | None = None
        """The issuer of ``authServerMetadataUrl``'s document, trusted instead of the advertised server."""

    async def _initialize(self) -> None:
        """Load the stored state (again: another process may have signed in or refreshed)."""
        storage = self.storage
        tokens = await storage.get_tokens()
        if tokens is None or self.context.current_tokens is None or \
                tokens.access_token != self.context.current_tokens.access_token:
            self.context.current_tokens = tokens
            self.context.token_expiry_time = storage.expires_at() if tokens else None
        self.context.client_info = await storage.get_client_info()
        discovery = storage.discovery()
        with contextlib.suppress(ValueError):
            if self.context.oauth_metadata is None and isinstance(discovery.get("authorizationServerMetadata"), dict):
                self.context.oauth_metadata = OAuthMetadata.model_validate(discovery["authorizationServerMetadata"])
            if self.context.protected_resource_metadata is None and isinstance(discovery.get("resourceMetadata"), dict):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    discovery["resourceMetadata"])
        if self.context.auth_server_url is None and isinstance(discovery.get("authorizationServerUrl"), str):
            self.context.auth_server_url = discovery["authorizationServerUrl"]
        self._initialized = True

    # -- connections ---------------------------------------------------------------------------

    async def _auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self.interactive:
            gen = self._sign_in_flow(request)
            try:
                outgoing = await gen.__anext__()
                while True:
                    answer = yield outgoing
                    outgoing = await gen.asend(answer)
            except StopAsyncIteration:
                return
            except BaseException as exc:
                self.failure = exc
                raise
        async with self.context.lock:
            await self._initialize()
            self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION)
            refreshed = False
            if self.context.current_tokens is not None and not self.context.is_token_valid():
                refreshed = True
                if self.context.can_refresh_token():
                    gen = self._refresh()
                    response = None
                    try:
                        outgoing = await gen.__anext__()
                        while True:
                            response = yield outgoing
                            outgoing = await gen.asend(response)
                    except StopAsyncIteration:
                        pass
            if self.context.is_token_valid():
                self._add_auth_header(request)
            response = yield request
            if response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope":
                self._need_sign_in("the server asks for more scope")
            if response.status_code != 401:
                return
            if not refreshed and self.context.can_refresh_token():
                gen = self._refresh()
                try:
                    outgoing = await gen.__anext__()
                    while True:
                        answer = yield outgoing
                        outgoing = await gen.asend(answer)
                except StopAsyncIteration:
                    pass
                if self.context.is_token_valid():
                    self._add_auth_header(request)
                    response = yield request
                    if response.status_code != 401:
                        return
            self._need_sign_in("the server rejected the stored credentials" if self.context.current_tokens
                               or refreshed else "the server requires OAuth sign-in")

    def _need_sign_in(self, why: str) -> None:
        self.needs_sign_in = why
        raise NeedsSignIn(why)

    async def _refresh(self) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Refresh under pi's per-server lock; tokens another process refreshed meanwhile are used as they are."""
        used = self.context.current_tokens.access_token if self.context.current_tokens else None
        async with self.storage.store.refresh_lock(self.storage.name, self.storage.url):
            stored = await self.storage.get_tokens()
            if stored is not None and stored.access_token != used:
                self.context.current_tokens = stored
                self.context.token_expiry_time = self.storage.expires_at()
                if self.context.is_token_valid():
                    return
            refresh_request = await self._refresh_token()
            response = yield refresh_request
            self.refreshed = await self._handle_refresh_response(response)

    # -- sign-in -------------------------------------------------------------------------------

    async def _sign_in_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The SDK's flow, watched: choose the client ID metadata document once the authorization
        server's metadata is known, and use ``authServerMetadataUrl`` instead of discovery."""
        self.storage.redirect_url = self.redirect_url
        await self._initialize()
        inner = super()._auth_flow(request)
        try:
            outgoing = await inner.__anext__()
            while True:
                outgoing = self._substitute(outgoing)
                response = yield outgoing
                await self._inspect(outgoing, response)
                outgoing = await inner.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()

    def _merge_scope(self) -> None:
        """The configured ``scope`` first, then what the server asks for (the SDK keeps only the latter)."""
        if self.settings.scope:
            words = self.settings.scope.split()
            words += [w for w in (self.context.client_metadata.scope or "").split() if w not in words]
            self.context.client_metadata.scope = " ".join(words)

    def _substitute(self, outgoing: httpx.Request) -> httpx.Request:
        metadata = self.context.oauth_metadata
        endpoint = str(metadata.registration_endpoint) if metadata and metadata.registration_endpoint else None
        if self.settings.scope and outgoing.method == "POST" and (
                str(outgoing.url) == endpoint or endpoint is None and outgoing.url.path == "/register"):
            self._merge_scope()  # register with the configured scope too
            return create_client_registration_request(
                metadata, self.context.client_metadata, self.context.get_authorization_base_url(self.context.server_url))
        configured = self.settings.auth_server_metadata_url
        if configured and outgoing.method == "GET" and "/.well-known/" in outgoing.url.path and \
                ("oauth-authorization-server" in outgoing.url.path or "openid-configuration" in outgoing.url.path):
            return httpx.Request("GET", configured, headers=outgoing.headers)
        return outgoing

    async def _inspect(self, outgoing: httpx.Request, response: httpx.Response) -> None:
        path = outgoing.url.path
        if outgoing.method != "GET" or response.status_code != 200 or not (
                "oauth-authorization-server" in path or "openid-configuration" in path
                or str(outgoing.url) == self.settings.auth_server_metadata_url):
            return
        try:
            raw = json.loads(await response.aread())
            metadata = OAuthMetadata.model_validate(raw)
        except ValueError:
            return
        self.iss_supported = raw.get("authorization_response_iss_parameter_supported") is True
        self._choose_client(raw)

    def _expected_issuer(self) -> str:
        return self.configured_issuer or super()._expected_issuer()

    def _select_authorization_server(self, advertised: list[str]) -> str:
        return self.configured_issuer or super()._select_authorization_server(advertised)

    def _choose_client(self, metadata: dict[str, Any]) -> None:
        """pi's documents when the server supports them for public clients: ``client.json`` when it sends
        ``iss`` in authorization responses, else a document and redirect path specific to this server."""
        if not self.settings.offers_cimd() or self.context.client_info is not None:
            return
        supported = metadata.get("client_id_metadata_document_supported") is True and \
            "none" in (metadata.get("token_endpoint_auth_methods_supported") or [])
        if not supported:
            if self.settings.registration == "cimd":
                raise SignInError('The authorization server does not support Client ID Metadata Documents for '
                                  'public clients; remove oauth.clientRegistration "cimd"')
            self.context.client_metadata_url = None
            return
        if self.iss_supported:
            self.context.client_metadata_url = f"{CIMD_BASE}/client.json"
            return
        ident = callback_id(self.storage.url)
        parts = urlsplit(self.redirect_url)
        self.redirect_url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + f"/{ident}", "", ""))
        self.context.client_metadata.redirect_uris = [self.redirect_url]  # type: ignore[list-item]
        self.context.client_metadata_url = f"{CIMD_BASE}/{ident}/client.json"

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        self._merge_scope()
        return await super()._perform_authorization_code_grant()

    async def _handle_token_response(self, response: httpx.Response) -> None:
        await super()._handle_token_response(response)
        self.storage.save_discovery(self.context.auth_server_url, self.context.oauth_metadata,
                                    self.context.protected_resource_metadata)


# -- the loopback redirect ---------------------------------------------------------------------------

SUCCESS_PAGE = "<!doctype html><title>pi</title><p>Signed in to the MCP server. You may now close this page.</p>"
ERROR_PAGE = "<!doctype html><title>pi</title><p>Sign-in failed: {message}</p>"


class Loopback:
    """A one-shot HTTP listener for the authorization server's redirect."""

    def __init__(self) -> None:
        self.result: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.server: asyncio.AbstractServer | None = None
        self.port = 0
        self.path = CALLBACK_PATH

    async def start(self, host: str, port: int, path: str) -> None:
        self.path = path or CALLBACK_PATH
        self.server = await asyncio.start_server(self._handle, host, port)
        self.port = int(self.server.sockets[0].getsockname()[1])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.split()
            target = parts[1] if len(parts) >= 2 else "/"
            path = urlsplit(target).path
            if not path.startswith(self.path) or "code=" not in target and "error=" not in target:
                body, status = "Not found", "404 Not Found"
            else:
                query = parse_qs(urlsplit(target).query)
                error = query.get("error_description", query.get("error", [""]))[0]
                body = ERROR_PAGE.format(message=_html(error)) if error else SUCCESS_PAGE
                status = "200 OK"
                if not self.result.done():
                    self.result.set_result(f"http://{CALLBACK_HOST}:{self.port}{target}")
            data = body.encode()
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                         f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
            await writer.drain()
        except (OSError, asyncio.TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await self.server.wait_closed()


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def parse_redirect(url: str) -> tuple[str, str | None, str | None]:
    """``(code, state, iss)`` of a redirected URL; raises :class:`SignInError` for an error response."""
    query = parse_qs(urlsplit(url.strip()).query)
    if "error" in query:
        raise SignInError(f"The authorization server refused: {query.get('error_description', query['error'])[0]}")
    code = query.get("code", [""])[0]
    if not code:
        raise SignInError("The pasted URL has no authorization code.")
    return code, query.get("state", [None])[0], query.get("iss", [None])[0]


# -- signing in ----------------------------------------------------------------------------------

ShowUrl = Callable[[str], Awaitable[None]]
Paste = Callable[[], Awaitable[str | None]]


def open_browser(url: str) -> bool:
    """Open ``url`` with the browser configured in ``$BROWSER`` (pi opens none otherwise), in a thread of
    its own: a browser command may not return before the sign-in it is part of has finished."""
    if not os.environ.get("BROWSER"):
        return False
    import threading
    import webbrowser

    def run() -> None:
        with contextlib.suppress(Exception):  # the printed URL is the fallback
            webbrowser.open(url)

    threading.Thread(target=run, daemon=True, name="pi-mcp-browser").start()
    return True


async def sign_in(entry: ServerEntry, store: AuthStore, *, show_url: ShowUrl, paste: Paste | None = None,
                  timeout: float = 300.0) -> str:
    """Sign in to ``entry`` (stored tokens and refresh first, then the browser flow); returns a summary.
    Raises :class:`SignInError` with the reason."""
    settings = OAuthSettings.of(entry)
    storage = StoreStorage(store, entry, settings)
    loopback = Loopback()
    path = urlsplit(settings.callback_url).path if settings.callback_url else CALLBACK_PATH
    port = settings.listen_port() or _registered_port(storage, settings)
    try:
        await loopback.start(settings.listen_host(), port, path)
    except OSError as exc:
        if port and not settings.listen_port():  # the port a stored client was registered with is taken
            port = 0
            with contextlib.suppress(OSError):
                await loopback.start(settings.listen_host(), 0, path)
        if loopback.server is None:
            raise SignInError(f"Could not listen for the sign-in redirect on port {port}: {exc}") from exc
    provider: PiOAuthProvider

    async def redirect(url: str) -> None:
        await show_url(url)

    async def callback() -> tuple[str, str | None]:
        waiters: set[asyncio.Future[Any]] = {loopback.result}
        pasted: asyncio.Future[Any] | None = None
        if paste is not None:
            pasted = asyncio.ensure_future(paste())
            waiters.add(pasted)
        try:
            while True:
                done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                if loopback.result in done:
                    url = loopback.result.result()
                    break
                assert pasted is not None
                answer = pasted.result()
                if not answer or not answer.strip():  # the paste dialog was cancelled (or stdin ended)
                    raise SignInError("Sign-in cancelled.")
                url = answer
                break
        finally:
            if pasted is not None and not pasted.done():
                pasted.cancel()
        code, state, iss = parse_redirect(url)
        issuer = str(provider.context.oauth_metadata.issuer) if provider.context.oauth_metadata else None
        if provider.iss_supported and issuer and (iss is None or iss.rstrip("/") != issuer.rstrip("/")):
            raise SignInError(f"The authorization response came from {iss or 'an unnamed issuer'}, not {issuer}.")
        return code, state

    provider = PiOAuthProvider(storage, settings, interactive=True, redirect_url=settings.redirect_url(loopback.port),
                               redirect_handler=redirect, callback_handler=callback, timeout=timeout)
    try:
        if settings.auth_server_metadata_url:
            provider.configured_issuer = await _configured_issuer(settings.auth_server_metadata_url)
        headers = resolve_map(entry.config.get("headers"), f'MCP server "{entry.name}" header')
        with anyio.fail_after(timeout):
            async with httpx.AsyncClient(headers=headers, auth=provider, timeout=httpx.Timeout(30, read=60)) as http:
                async with streamable_http_client(entry.config["url"], http_client=http) as (read, write, _):
                    async with ClientSession(read, write, client_info=types.Implementation(
                            name="pi", version=__version__)) as session:
                        await session.initialize()
    except ConfigValueError as exc:
        raise SignInError(str(exc)) from exc
    except TimeoutError as exc:
        raise SignInError(f"Sign-in did not finish within {timeout:g} s.") from exc
    except BaseException as exc:  # noqa: BLE001 - the flow's own failure explains it best
        failure = provider.failure or _first(exc)
        if isinstance(failure, (KeyboardInterrupt, asyncio.CancelledError)):
            raise
        raise SignInError(_describe(failure)) from exc
    finally:
        await loopback.close()
    if provider.failure is not None:
        raise SignInError(_describe(provider.failure))
    tokens = storage.state().get("tokens")
    if not isinstance(tokens, dict):
        return f'"{entry.name}" does not need sign-in: it accepted the connection without credentials.'
    return f'Signed in to MCP server "{entry.name}".'


async def _configured_issuer(url: str) -> str:
    """The issuer named by the configured authorization server metadata document."""
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.get(url, headers={"Accept": "application/json"})
            answer.raise_for_status()
            return str(OAuthMetadata.model_validate_json(answer.content).issuer)
    except (httpx.HTTPError, ValueError) as exc:
        raise SignInError(f"Could not read oauth.authServerMetadataUrl {url}: {_describe(exc)}") from exc


def _registered_port(storage: StoreStorage, settings: OAuthSettings) -> int:
    """The loopback port of a stored registration, so it stays in use (its redirect URI must match)."""
    if settings.client_id:
        return 0
    info = storage.state().get("clientInformation")
    uris = info.get("redirect_uris") if isinstance(info, dict) else None
    for uri in uris or []:
        parts = urlsplit(str(uri))
        if parts.hostname == settings.listen_host() and parts.port:
            return int(parts.port)
    return 0


def _first(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _first(exc)
    if isinstance(exc, (SignInError, OAuthFlowError)):
        return str(exc)
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return str(exc) or type(exc).__name__


def connection_auth(entry: ServerEntry, store: AuthStore) -> PiOAuthProvider:
    """The auth of a connection to ``entry``: stored tokens and refreshes only."""
    settings = OAuthSettings.of(entry)
    return PiOAuthProvider(StoreStorage(store, entry, settings), settings)


__all__ = ["NeedsSignIn", "OAuthSettings", "PiOAuthProvider", "SIGN_IN_HINT", "SignInError", "connection_auth",
           "oauth_applies", "open_browser", "sign_in"]
