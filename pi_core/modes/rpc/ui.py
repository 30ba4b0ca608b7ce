"""``ctx.ui`` in RPC mode: dialogs travel to the host as ``extension_ui_request`` records and the
host answers with ``extension_ui_response`` lines on stdin (pi's extension UI sub-protocol).

Dialogs (``select``, ``confirm``, ``input``, ``editor``) wait for the answer with the request's id;
a timeout (enforced here, not by the host), an abort ``signal``, a ``{"cancelled": true}`` answer or the end of input
gives the dialog's "no answer" value. Notices (``notify``, ``setStatus``, ``setWidget``,
``setTitle``, ``set_editor_text``) are fire-and-forget.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...ai.abort import unless_aborted
from ...extensions.context import UI

if TYPE_CHECKING:
    from ...ai.abort import AbortSignal

Send = Callable[[dict[str, Any]], None]


class RpcUI(UI):
    """The RPC mode's :class:`pi_core.UI`; ``has_ui`` is true, as in pi."""

    has_ui = True

    def __init__(self, send: Send | None = None) -> None:
        self._send_to: Send | None = send
        self._early: list[dict[str, Any]] = []
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed = False

    def attach(self, send: Send) -> None:
        """Start writing to the host; notices made before (plugins' ``session_start`` at start-up) go
        out first, in order."""
        self._send_to = send
        early, self._early = self._early, []
        for record in early:
            send(record)

    def _send(self, record: dict[str, Any]) -> None:
        if self._send_to is None:
            self._early.append(record)
        else:
            self._send_to(record)

    # -- dialogs -------------------------------------------------------------------------------

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        answer = await self._ask({"method": "select", "title": title, "options": list(options)}, timeout, signal)
        value = answer.get("value")
        return value if isinstance(value, str) and not answer.get("cancelled") else None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        answer = await self._ask({"method": "confirm", "title": title, "message": message}, timeout, signal)
        return answer.get("confirmed") is True and not answer.get("cancelled")

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        request = {"method": "input", "title": title, "placeholder": placeholder or None}
        return _text(await self._ask(request, timeout, signal))

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return _text(await self._ask({"method": "editor", "title": title, "prefill": prefill or None}, None))

    # -- notices -------------------------------------------------------------------------------

    async def notify(self, message: str, level: str = "info") -> None:  # type: ignore[override]
        self._notice({"method": "notify", "message": message, "notifyType": level})

    async def set_status(self, key: str, text: str | None) -> None:
        self._notice({"method": "setStatus", "statusKey": key, "statusText": text})

    async def set_widget(self, key: str, lines: Sequence[str] | Callable[..., Any] | None, *,
                         placement: str | None = None) -> None:
        """Show lines of text above/below the host's editor (``None`` removes the widget); a component
        factory cannot travel, so it is left out, as in pi."""
        if callable(lines):
            return
        self._notice({"method": "setWidget", "widgetKey": key,
                      "widgetLines": None if lines is None else list(lines), "widgetPlacement": placement})

    async def set_title(self, title: str) -> None:
        self._notice({"method": "setTitle", "title": title})

    async def custom(self, factory: Callable[..., Any], *, overlay: bool = False,
                     overlay_options: dict[str, Any] | None = None,
                     on_handle: Callable[[Any], Any] | None = None) -> Any:
        """Components are drawn by a terminal: ``None`` at once, and the client is told nothing, as in pi
        (the plugin gets its "cancel" value and may say so itself)."""
        return None

    async def set_theme(self, theme: Any) -> dict[str, Any]:
        return {"success": False, "error": "Theme switching not supported in RPC mode"}

    async def set_editor_text(self, text: str) -> None:
        self._notice({"method": "set_editor_text", "text": text})

    async def paste_to_editor(self, text: str) -> None:
        await self.set_editor_text(text)

    def get_editor_text(self) -> str:
        """The host keeps its editor's state; RPC has no way to ask for it synchronously."""
        return ""

    # -- the host's side -----------------------------------------------------------------------

    def resolve(self, response: dict[str, Any]) -> bool:
        """Deliver an ``extension_ui_response``; False for ids nobody waits for (ignored, as in pi)."""
        future = self._pending.pop(str(response.get("id")), None)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def close(self) -> None:
        """No more answers can come (input ended): open dialogs get their "no answer" value."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_result({"cancelled": True})
        self._pending.clear()

    @property
    def pending(self) -> int:
        return len(self._pending)

    # -- internals -----------------------------------------------------------------------------

    async def _ask(self, request: dict[str, Any], timeout: float | None,
                   signal: AbortSignal | None = None) -> dict[str, Any]:
        if self._closed or self._send_to is None or (signal is not None and signal.aborted):
            return {"cancelled": True}
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if timeout is not None:
            request["timeout"] = int(timeout * 1000)
        self._send(_request(request_id, request))
        try:
            answer = await unless_aborted(asyncio.wait_for(future, timeout) if timeout is not None else future, signal)
        except TimeoutError:
            return {"cancelled": True}
        finally:
            self._pending.pop(request_id, None)
        return {"cancelled": True} if answer is None else answer

    def _notice(self, fields: dict[str, Any]) -> None:
        self._send(_request(str(uuid.uuid4()), fields))


def _request(request_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "extension_ui_request", "id": request_id, **{k: v for k, v in fields.items() if v is not None}}


def _text(answer: dict[str, Any]) -> str | None:
    value = answer.get("value")
    return value if isinstance(value, str) and not answer.get("cancelled") else None


__all__ = ["RpcUI"]
