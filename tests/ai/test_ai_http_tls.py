"""TLS for provider requests: the trust store is read at the first https connection, and verification
is exactly httpx's default (``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else certifi)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import trustme

from pi_core.ai.http import (
    DeferredTrustContext,
    aclose_shared_client,
    post_stream,
    shared_client,
)


class _Ok(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b"data: {}\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(tls: ssl.SSLContext | None) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://{'localhost' if tls else '127.0.0.1'}:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def https_url(ca: trustme.CA) -> Iterator[str]:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(tls)
    yield from _serve(tls)


@pytest.fixture
def http_url() -> Iterator[str]:
    yield from _serve(None)


async def _post(url: str) -> tuple[int, bytes, DeferredTrustContext]:
    try:
        async with post_stream(url, {"hello": 1}, {}, style="openai") as response:
            body = await response.aread()
        transport = shared_client()._transport
        return response.status_code, body, transport._pool._ssl_context
    finally:
        await aclose_shared_client()


def test_plain_http_never_reads_the_trust_store(http_url: str) -> None:
    status, body, context = asyncio.run(_post(http_url))
    assert (status, body) == (200, b"data: {}\n\n")
    assert isinstance(context, DeferredTrustContext)
    assert context.cert_store_stats()["x509_ca"] == 0


def test_https_verifies_against_ssl_cert_file(https_url: str, ca: trustme.CA, tmp_path, monkeypatch) -> None:
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    status, body, context = asyncio.run(_post(https_url))
    assert (status, body) == (200, b"data: {}\n\n")
    assert context.cert_store_stats()["x509_ca"] == 1  # ours, and nothing else


def test_https_with_an_untrusted_certificate_is_refused(https_url: str, monkeypatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(_post(https_url))


def test_the_context_verifies_hostnames_and_certificates() -> None:
    context = DeferredTrustContext()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    context.load_trust()
    context.load_trust()  # once only
    assert context.cert_store_stats()["x509_ca"] > 50  # certifi's bundle
