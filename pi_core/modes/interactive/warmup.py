"""Imports the first answer needs, done in a background thread once the editor is up.

The HTTP client (httpx and its dependencies), the stream client and the markdown parser are imported when
first used, which is the first answer: the import then runs on the event loop, and keys typed while the
first answer starts echo a tenth of a second late. Imported here, while the user types the first prompt,
they cost the loop nothing (an import that the loop needs meanwhile waits for this one to finish).
"""

from __future__ import annotations

import importlib
import threading

MODULES = ("httpx", "msgspec", "pi_core.ai.client", "pi_core.ai.http", "pi_core.ai.sse", "pi_core.ai.wire",
           # what httpx imports at its first connection
           "anyio._backends._asyncio", "httpcore._async.connection_pool", "httpcore._async.http11",
           "httpcore._backends.anyio", "h11", "certifi", "idna", "unicodedata", "mimetypes", "http.cookiejar")


def warm_up() -> threading.Thread:
    thread = threading.Thread(target=_import_all, name="pi-warm-up", daemon=True)
    thread.start()
    return thread


def _import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional module missing is found again, and reported, when used
            continue
    from .markdown import block_parser, parser

    parser()
    block_parser()


__all__ = ["MODULES", "warm_up"]
