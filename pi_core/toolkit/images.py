"""Recognising images by their bytes (not their names) and making them sendable to a model.

Models accept PNG, JPEG, GIF and WebP. BMP files are converted to PNG here (uncompressed BMPs, the
common kind, with the standard library only). Images over the :class:`ResizeLimits` (by default
:data:`MAX_IMAGE_SIDE` pixels a side and 4.5 MiB of base64, pi's defaults) are scaled down with Pillow
(a dependency; should it be missing, they are sent as they are).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SNIFF_BYTES = 4100
MAX_IMAGE_SIDE = 2000
MAX_IMAGE_BYTES = 4.5 * 1024 * 1024
"""Encoded (base64) size an image stays under: headroom below Anthropic's 5 MB limit, as in pi."""
_PNG_SIG = b"\x89PNG\r\n\x1a\n"


def detect_image_mime(data: bytes) -> str | None:
    """The MIME type of a supported image (jpeg, png, gif, webp, bmp) from its first bytes, else None.

    Animated PNGs are not treated as images (providers reject them); JPEG-LS neither.
    """
    if data.startswith(b"\xff\xd8\xff"):
        return None if data[3:4] == b"\xf7" else "image/jpeg"
    if data.startswith(_PNG_SIG):
        return "image/png" if _is_png(data) and not _is_apng(data) else None
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM" and _is_bmp(data):
        return "image/bmp"
    return None


def detect_image_mime_file(path: Path) -> str | None:
    with open(path, "rb") as f:
        return detect_image_mime(f.read(SNIFF_BYTES))


def _is_png(data: bytes) -> bool:
    return len(data) >= 16 and struct.unpack(">I", data[8:12])[0] == 13 and data[12:16] == b"IHDR"


def _is_apng(data: bytes) -> bool:
    pos = 8
    while pos + 8 <= len(data):
        length = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        if kind == b"acTL":
            return True
        if kind == b"IDAT":
            return False
        pos += 12 + length
    return False


def _is_bmp(data: bytes) -> bool:
    if len(data) < 30:
        return False
    file_size, _, pixel_offset, dib = struct.unpack("<IIII", data[2:18])
    if (file_size and file_size < 26) or pixel_offset < 14 + dib or (file_size and pixel_offset >= file_size):
        return False
    if dib == 12:
        planes, bpp = struct.unpack("<HH", data[22:26])
    elif 40 <= dib <= 124:
        planes, bpp = struct.unpack("<HH", data[26:30])
    else:
        return False
    return planes == 1 and bpp in (1, 4, 8, 16, 24, 32)


@dataclass
class PreparedImage:
    """Image bytes ready to attach, or ``None`` data with a reason in ``notes``."""

    data: bytes | None
    mime_type: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ResizeLimits:
    """How large an image may enter the conversation (a model's ``inputLimits.images.resize`` in
    ``models.json``, pi's defaults otherwise). ``max_bytes`` limits the base64-encoded size."""

    max_width: int = MAX_IMAGE_SIDE
    max_height: int = MAX_IMAGE_SIDE
    max_bytes: float = MAX_IMAGE_BYTES
    jpeg_quality: int = 80

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ResizeLimits:
        """pi's ``{maxWidth, maxHeight, maxBytes, jpegQuality}``; omitted or invalid fields keep the defaults."""
        data = data if isinstance(data, dict) else {}
        fields = {"max_width": "maxWidth", "max_height": "maxHeight", "max_bytes": "maxBytes",
                  "jpeg_quality": "jpegQuality"}
        given = {name: data[key] for name, key in fields.items()
                 if isinstance(data.get(key), (int, float)) and not isinstance(data.get(key), bool) and data[key] > 0}
        if "jpeg_quality" in given:
            given["jpeg_quality"] = min(100, int(given["jpeg_quality"]))
        return cls(**given)


def prepare_image(data: bytes, mime_type: str, *, max_side: int = MAX_IMAGE_SIDE, resize: bool = True,
                  limits: ResizeLimits | None = None) -> PreparedImage:
    """Convert to a model-supported format and (with ``resize``) shrink an image over ``limits`` (default:
    ``max_side`` pixels a side and pi's byte limit)."""
    notes: list[str] = []
    if mime_type == "image/bmp":
        png = bmp_to_png(data)
        if png is None:
            return PreparedImage(None, mime_type, ["[Image not attached: this BMP variant cannot be converted.]"])
        data, mime_type = png, "image/png"
        notes.append("[Image converted from image/bmp to image/png.]")
    limits = limits or ResizeLimits(max_side, max_side)
    resized = _maybe_resize(data, limits) if resize else None
    if resized is not None:
        data, mime_type, note = resized
        notes.append(note)
    return PreparedImage(data, mime_type, notes)


def _encoded_size(size: int) -> int:
    return -(-size // 3) * 4


def _maybe_resize(data: bytes, limits: ResizeLimits) -> tuple[bytes, str, str] | None:
    """pi's strategy: fit the dimensions, take the smaller of PNG and JPEG (at ``jpeg_quality``), then lower
    JPEG qualities, then three quarters of the size at a time, until the encoded size fits; ``None`` when the
    image is within the limits already, cannot be read, or cannot be made to fit."""
    try:
        from PIL import Image  # optional: only used when installed
    except ImportError:
        return None
    import io

    try:
        with Image.open(io.BytesIO(data)) as img:
            width, height = img.size
            if getattr(img, "is_animated", False):
                return None
            if width <= limits.max_width and height <= limits.max_height \
                    and _encoded_size(len(data)) < limits.max_bytes:
                return None
            img.load()
            found = _shrink(img, _fit(width, height, limits), limits)
    except Exception:  # a broken image is sent unchanged; the provider reports what it dislikes
        return None
    if found is None:
        return None
    encoded, mime, (w, h) = found
    return encoded, mime, f"[Image scaled from {width}x{height} to {w}x{h}.]"


def _fit(width: int, height: int, limits: ResizeLimits) -> tuple[int, int]:
    if width > limits.max_width:
        height, width = round(height * limits.max_width / width), int(limits.max_width)
    if height > limits.max_height:
        width, height = round(width * limits.max_height / height), int(limits.max_height)
    return max(1, width), max(1, height)


def _shrink(img: Any, size: tuple[int, int], limits: ResizeLimits) -> tuple[bytes, str, tuple[int, int]] | None:
    from PIL import Image

    qualities = list(dict.fromkeys([limits.jpeg_quality, 85, 70, 55, 40]))
    while True:
        small = img.resize(size, Image.Resampling.LANCZOS)
        png = (_encode(small, "PNG"), "image/png")
        rgb = small.convert("RGB")
        jpegs = [(_encode(rgb, "JPEG", quality), "image/jpeg") for quality in qualities]
        preferred = [jpegs[0], png] if len(jpegs[0][0]) < len(png[0]) else [png, jpegs[0]]
        for encoded, mime in [*preferred, *jpegs[1:]]:
            if _encoded_size(len(encoded)) < limits.max_bytes:
                return encoded, mime, size
        smaller = (max(1, size[0] * 3 // 4), max(1, size[1] * 3 // 4))
        if smaller == size:
            return None
        size = smaller


def _encode(img: Any, fmt: str, quality: int | None = None) -> bytes:
    import io

    out = io.BytesIO()
    img.save(out, format=fmt, **({"quality": quality} if quality is not None else {}))
    return out.getvalue()


def bmp_to_png(data: bytes) -> bytes | None:
    """Convert an uncompressed (BI_RGB / standard BI_BITFIELDS) BMP to PNG; ``None`` if unsupported."""
    try:
        rows, width, height = _bmp_rows(data)
    except (struct.error, IndexError, ValueError):
        return None
    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return _PNG_SIG + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _bmp_rows(data: bytes) -> tuple[list[bytes], int, int]:
    pixel_offset, dib = struct.unpack("<II", data[10:18])
    if dib == 12:
        width, height, _, bpp = struct.unpack("<HhHH", data[18:26])
        compression, colors_used, palette_entry = 0, 0, 3
    else:
        width, height, _, bpp, compression = struct.unpack("<iiHHI", data[18:34])
        colors_used = struct.unpack("<I", data[46:50])[0] if dib >= 40 else 0
        palette_entry = 4
    if compression not in (0, 3) or width <= 0 or height == 0 or bpp == 16:
        raise ValueError("unsupported BMP")
    bottom_up = height > 0
    height = abs(height)
    palette: list[bytes] = []
    if bpp <= 8:
        start = 14 + dib
        for i in range(colors_used or (1 << bpp)):
            b, g, r = data[start + i * palette_entry:start + i * palette_entry + 3]
            palette.append(bytes((r, g, b, 255)))
    stride = ((width * bpp + 31) // 32) * 4
    rows = [_bmp_row(data[pixel_offset + y * stride:pixel_offset + (y + 1) * stride], width, bpp, palette)
            for y in range(height)]
    if bottom_up:
        rows.reverse()
    return rows, width, height


def _bmp_row(row: bytes, width: int, bpp: int, palette: list[bytes]) -> bytes:
    if len(row) < (width * bpp + 7) // 8:
        raise ValueError("truncated BMP")
    if bpp == 24:
        return b"".join(bytes((row[i + 2], row[i + 1], row[i], 255)) for i in range(0, width * 3, 3))
    if bpp == 32:
        # The alpha byte of BI_RGB BMPs is usually unused (zero); treat such images as opaque.
        has_alpha = any(row[i + 3] for i in range(0, width * 4, 4))
        return b"".join(bytes((row[i + 2], row[i + 1], row[i], row[i + 3] if has_alpha else 255))
                        for i in range(0, width * 4, 4))
    per_byte = 8 // bpp
    mask = (1 << bpp) - 1
    out = []
    for x in range(width):
        byte = row[x // per_byte]
        shift = 8 - bpp * (x % per_byte + 1)
        out.append(palette[(byte >> shift) & mask])
    return b"".join(out)


__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_SIDE", "PreparedImage", "ResizeLimits", "bmp_to_png", "detect_image_mime",
           "detect_image_mime_file", "prepare_image"]
