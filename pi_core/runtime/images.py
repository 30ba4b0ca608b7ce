"""The ``images`` settings applied to what reaches the model.

``images.autoResize`` (default on): images in prompts and tool results over the model's
``inputLimits.images.resize`` (pi's defaults: 2000 px a side, 4.5 MiB encoded) are scaled down when they
enter the session (as pi does, so the session file holds what was sent).
``images.blockImages``: no image is sent at all; each is replaced by a short text when the request
is built, so turning the setting off later sends the stored images again.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from ..ai.types import ImageContent, Model, TextContent

BLOCKED_TEXT = "Image reading is disabled."


def normalize_images(content: Sequence[Any], *, auto_resize: bool, model: Model | None = None) -> list[Any]:
    """``content`` with each image converted to a sendable format (BMP to PNG) and, with ``auto_resize``,
    shrunk to ``model``'s ``inputLimits.images.resize``; a note saying what changed follows a changed image.
    Other blocks pass unchanged."""
    if not any(isinstance(block, ImageContent) for block in content):
        return list(content)
    from ..toolkit.images import ResizeLimits, prepare_image

    limits = ResizeLimits.from_json(((getattr(model, "input_limits", None) or {}).get("images") or {}).get("resize"))

    out: list[Any] = []
    for block in content:
        if not isinstance(block, ImageContent):
            out.append(block)
            continue
        try:
            data = base64.b64decode(block.data, validate=True)
        except (binascii.Error, ValueError):
            out.append(block)  # not ours to judge; the provider reports a bad image
            continue
        prepared = prepare_image(data, block.mime_type, resize=auto_resize, limits=limits)
        if prepared.data is None or not prepared.notes:
            out.append(block if prepared.data is not None else TextContent(text=" ".join(prepared.notes)))
            continue
        out.append(ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type))
        out.append(TextContent(text=" ".join(prepared.notes)))
    return out


def block_images(messages: list[Any]) -> list[Any]:
    """Request messages with every image of user and tool-result messages replaced by a note (one note
    for consecutive images); the stored messages are not changed."""
    out = []
    for message in messages:
        content = getattr(message, "content", None)
        if getattr(message, "role", None) not in ("user", "toolResult") or not isinstance(content, list) \
                or not any(isinstance(block, ImageContent) for block in content):
            out.append(message)
            continue
        blocks: list[Any] = []
        for block in content:
            if isinstance(block, ImageContent):
                if blocks and isinstance(blocks[-1], TextContent) and blocks[-1].text == BLOCKED_TEXT:
                    continue
                block = TextContent(text=BLOCKED_TEXT)
            blocks.append(block)
        out.append(message.model_copy(update={"content": blocks}))
    return out


__all__ = ["BLOCKED_TEXT", "block_images", "normalize_images"]
