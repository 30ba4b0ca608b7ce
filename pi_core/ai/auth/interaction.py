"""What a sign-in flow may ask the user and tell them: :class:`LoginInteraction` and its events.

The host implements the interaction: ``pi auth login`` in a terminal, ``/login`` in the interactive UI,
an SDK host however it likes. Flows only ever talk to it, so one flow works everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable


@dataclass
class LoginOption:
    """One choice of :meth:`LoginInteraction.select`; the first option is the default method."""

    id: str
    label: str
    description: str = ""


@dataclass
class AuthUrlEvent:
    """Open ``url`` in a browser to sign in."""

    url: str
    instructions: str = ""
    type: Literal["auth_url"] = "auth_url"


@dataclass
class DeviceCodeEvent:
    """Open ``verification_uri`` and enter ``user_code``."""

    user_code: str
    verification_uri: str
    interval: float | None = None
    expires_in: float | None = None
    type: Literal["device_code"] = "device_code"


@dataclass
class ProgressEvent:
    """A sign-in flow reports progress (``Waiting for the browser...``)."""

    message: str
    type: Literal["progress"] = "progress"


@dataclass
class InfoEvent:
    """A sign-in flow tells the user something that needs no answer."""

    message: str
    type: Literal["info"] = "info"


LoginEvent = AuthUrlEvent | DeviceCodeEvent | ProgressEvent | InfoEvent


@runtime_checkable
class LoginInteraction(Protocol):
    """The host side of a sign-in. Every prompt returns the user's answer or raises
    :class:`LoginCancelled`; :meth:`manual_code` may also be cancelled by the flow (when the browser
    redirect arrives first), so hosts must let that prompt be interrupted."""

    async def select(self, message: str, options: Sequence[LoginOption]) -> str:
        """The ``id`` of the chosen option."""
        ...

    async def secret(self, message: str) -> str:
        """A secret (an API key), not echoed."""
        ...

    async def text(self, message: str, placeholder: str = "") -> str:
        ...

    async def manual_code(self, message: str, placeholder: str = "") -> str:
        """A pasted authorization code or redirect URL."""
        ...

    def notify(self, event: LoginEvent) -> None:
        ...


class LoginCancelled(Exception):
    """The user cancelled the sign-in."""

    def __init__(self, message: str = "Login cancelled") -> None:
        super().__init__(message)


__all__ = ["AuthUrlEvent", "DeviceCodeEvent", "InfoEvent", "LoginCancelled", "LoginEvent", "LoginInteraction",
           "LoginOption", "ProgressEvent"]
