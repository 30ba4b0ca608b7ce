"""An MCP server that requires OAuth, with its own authorization server, on the SDK's server API.

``python oauth_server.py PORT [--expires-in S] [--no-dcr] [--client ID:SECRET] [--cimd] [--iss]``

FastMCP serves ``/mcp`` (bearer token required), the protected resource metadata, and an authorization
server (``/authorize``, ``/token``, ``/register``, its metadata) backed by the in-memory provider below,
which approves every authorization at once (the test plays the browser by following the redirect).
``--cimd`` advertises Client ID Metadata Documents and accepts URL client IDs without fetching them
(no network in tests); ``--iss`` advertises and sends the RFC 9207 ``iss`` parameter; ``--advertise-as URL``
names another authorization server in the protected resource metadata (a misconfigured server). Test routes:
``POST /test/revoke`` drops every access token (refresh tokens stay, unless ``?refresh=1``), ``GET /test/log`` lists what
happened (registrations, grants, refreshes) as JSON.
"""

from __future__ import annotations

import argparse
import secrets
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken, TokenError,
                                      construct_redirect_uri)
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class LoopbackClient(OAuthClientInformationFull):
    """A URL client ID (metadata document): any loopback redirect URI is accepted (RFC 8252)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is None or redirect_uri.host not in ("127.0.0.1", "localhost"):
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' is not a loopback URI")
        return redirect_uri


class Provider:
    def __init__(self, issuer: str, expires_in: int, cimd: bool, iss: bool) -> None:
        self.issuer = issuer
        self.expires_in = expires_in
        self.cimd = cimd
        self.iss = iss
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.log: list[dict[str, Any]] = []

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if self.cimd and client_id.startswith("https://"):
            return LoopbackClient(client_id=client_id, redirect_uris=None, token_endpoint_auth_method="none",
                                  grant_types=["authorization_code", "refresh_token"])
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        self.clients[client_info.client_id] = client_info
        self.log.append({"event": "register", "client_id": client_info.client_id,
                         "client_name": client_info.client_name,
                         "redirect_uris": [str(u) for u in client_info.redirect_uris or []]})

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=str(client.client_id),
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        self.log.append({"event": "authorize", "client_id": client.client_id, "redirect_uri": str(params.redirect_uri),
                         "scopes": params.scopes or []})
        extra = {"iss": self.issuer} if self.iss else {}
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, **extra)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.expires_in, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.expires_in,
                          refresh_token=refresh, scope=" ".join(scopes) or None)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.log.append({"event": "grant", "client_id": client.client_id})
        return self._issue(str(client.client_id), authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        self.log.append({"event": "refresh", "client_id": client.client_id})
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is not None and found.expires_at is not None and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--no-dcr", action="store_true")
    parser.add_argument("--client", action="append", default=[], help="ID:SECRET of a pre-registered client")
    parser.add_argument("--cimd", action="store_true")
    parser.add_argument("--iss", action="store_true")
    parser.add_argument("--advertise-as", help="authorization server named in the protected resource metadata")
    args = parser.parse_args()
    issuer = f"http://127.0.0.1:{args.port}"
    provider = Provider(issuer, args.expires_in, args.cimd, args.iss)
    for pair in args.client:
        client_id, _, secret = pair.partition(":")
        provider.clients[client_id] = LoopbackClient(
            client_id=client_id, client_secret=secret or None, redirect_uris=None,
            token_endpoint_auth_method="client_secret_post" if secret else "none",
            grant_types=["authorization_code", "refresh_token"])
    registration = ClientRegistrationOptions(enabled=not args.no_dcr)
    server = FastMCP("guarded", auth_server_provider=provider, auth=AuthSettings(  # type: ignore[arg-type]
        issuer_url=AnyHttpUrl(issuer), resource_server_url=AnyHttpUrl(f"{issuer}/mcp"),
        client_registration_options=registration, revocation_options=RevocationOptions(enabled=True),
        validate_token_resource=False))

    @server.tool(description="Say who the caller is signed in as.")
    async def whoami(ctx: Context) -> str:
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"signed in as {token.client_id if token else 'nobody'}"

    app = server.streamable_http_app()
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, RevocationOptions(enabled=True))
    document = metadata.model_dump(mode="json", exclude_none=True)
    if args.cimd:
        document["client_id_metadata_document_supported"] = True
        document["token_endpoint_auth_methods_supported"] = ["none", "client_secret_post"]
    if args.iss:
        document["authorization_response_iss_parameter_supported"] = True

    async def as_metadata(request: Request) -> JSONResponse:
        return JSONResponse(document)

    async def revoke(request: Request) -> JSONResponse:
        provider.access.clear()
        if request.query_params.get("refresh"):
            provider.refresh.clear()
        return JSONResponse({"ok": True})

    async def log(request: Request) -> JSONResponse:
        return JSONResponse(provider.log)

    async def resource_metadata(request: Request) -> JSONResponse:
        return JSONResponse({"resource": f"{issuer}/mcp", "authorization_servers": [args.advertise_as],
                             "bearer_methods_supported": ["header"]})

    if args.advertise_as:  # a server that names the wrong authorization server
        app.router.routes.insert(0, Route("/.well-known/oauth-protected-resource/mcp", resource_metadata))
    app.router.routes[0:0] = [Route("/.well-known/oauth-authorization-server", as_metadata, methods=["GET"]),
                              Route("/test/revoke", revoke, methods=["POST"]), Route("/test/log", log, methods=["GET"])]
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
