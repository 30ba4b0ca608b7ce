"""The read tool: raw text, paging, truncation with continuation hints, images, errors."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest
from conftest import load_tool, recorded_results, run_tool, run_tool_error

from pi_core import ImageContent, TextContent

READ = load_tool("read")

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def test_schema_is_pi_16s() -> None:
    assert READ.name == "read"
    params = READ.parameters
    assert list(params) == ["type", "required", "properties"]
    assert params["required"] == ["path"]
    assert list(params["properties"]) == ["path", "offset", "limit"]
    assert [p["type"] for p in params["properties"].values()] == ["string", "number", "number"]
    assert READ.capabilities.reads and READ.capabilities.concurrency_safe and not READ.capabilities.writes


def test_recorded_reads_match_pi(workspace) -> None:
    for scenario in ("b_json_tools", "b2_all_tools"):
        ws = workspace(scenario)
        for rec in recorded_results(scenario, "read"):
            result = run_tool(READ, rec["arguments"], ws)
            assert not result.is_error
            assert [c.model_dump(by_alias=True, exclude_none=True) for c in result.content] == rec["content"]


def test_missing_file_is_an_error_naming_the_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "missing.py").write_text("x")
    text = run_tool_error(READ, {"path": "missing.txt"}, tmp_path)
    assert str(tmp_path / "missing.txt") in text
    assert "not found" in text.lower()
    assert "missing.py" in text  # a close name is suggested


def test_directory_and_offset_errors(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert "directory" in run_tool_error(READ, {"path": "d"}, tmp_path)
    (tmp_path / "f.txt").write_text("a\nb\n")
    text = run_tool_error(READ, {"path": "f.txt", "offset": 10}, tmp_path)
    assert "10" in text and "3 lines" in text
    assert "limit" in run_tool_error(READ, {"path": "f.txt", "limit": 0}, tmp_path)


def test_truncates_at_2000_lines_with_continuation_hint(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    result = run_tool(READ, {"path": "big.txt"}, tmp_path)
    text = result.text_content()
    body, footer = text.rsplit("\n\n", 1)
    assert body.split("\n") == [f"line {i}" for i in range(1, 2001)]
    assert footer == "[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert result.details["truncation"]["outputLines"] == 2000
    rest = run_tool(READ, {"path": "big.txt", "offset": 2001}, tmp_path).text_content()
    assert rest == "".join(f"line {i}\n" for i in range(2001, 2501))


def test_truncates_at_50kb(tmp_path: Path) -> None:
    line = "x" * 99
    (tmp_path / "wide.txt").write_text((line + "\n") * 1000)
    result = run_tool(READ, {"path": "wide.txt"}, tmp_path)
    body, footer = result.text_content().rsplit("\n\n", 1)
    shown = body.split("\n")
    assert len(shown) == 512 and all(s == line for s in shown)  # 512 * 100 - 1 bytes <= 51200
    assert footer == "[Showing lines 1-512 of 1001 (50.0KB limit). Use offset=513 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "bytes"


def test_first_line_over_the_limit_points_at_bash(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("y" * 60000 + "\nshort\n")
    text = run_tool(READ, {"path": "one.txt"}, tmp_path).text_content()
    assert text.startswith("[Line 1 is 58.6KB") and "yyyy" not in text
    assert "sed -n '1p' one.txt | head -c 51200" in text


def test_limit_stops_early_with_remaining_count(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\nd\ne")
    text = run_tool(READ, {"path": "f.txt", "offset": 2, "limit": 2}, tmp_path).text_content()
    assert text == "b\nc\n\n[2 more lines in file. Use offset=4 to continue.]"
    assert run_tool(READ, {"path": "f.txt", "offset": 4, "limit": 10}, tmp_path).text_content() == "d\ne"


def test_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert run_tool(READ, {"path": "w.txt"}, tmp_path).text_content() == "one\r\ntwo\r\n"


def test_png_detected_by_content_not_name(tmp_path: Path) -> None:
    (tmp_path / "picture.txt").write_bytes(PNG_1X1)
    result = run_tool(READ, {"path": "picture.txt"}, tmp_path)
    text, image = result.content
    assert isinstance(text, TextContent) and "image/png" in text.text
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG_1X1
    (tmp_path / "fake.png").write_text("not an image")
    assert run_tool(READ, {"path": "fake.png"}, tmp_path).text_content() == "not an image"


@pytest.mark.parametrize(("data", "mime"), [
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40, "image/jpeg"),
    (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "image/gif"),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 30, "image/webp"),
])
def test_other_image_formats_are_attachments(tmp_path: Path, data: bytes, mime: str) -> None:
    (tmp_path / "img.bin").write_bytes(data)
    result = run_tool(READ, {"path": "img.bin"}, tmp_path)
    image = result.content[-1]
    assert isinstance(image, ImageContent) and image.mime_type == mime
    assert base64.b64decode(image.data) == data


def _bmp_2x2() -> bytes:
    # 24-bit bottom-up BMP: bottom row blue, red; top row green, white.
    rows = [bytes([255, 0, 0, 0, 0, 255]) + b"\x00\x00", bytes([0, 255, 0, 255, 255, 255]) + b"\x00\x00"]
    pixels = b"".join(rows)
    header = struct.pack("<IiiHHIIiiII", 40, 2, 2, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(pixels), 0, 0, 54) + header + pixels


def test_bmp_is_converted_to_png(tmp_path: Path) -> None:
    (tmp_path / "img.bmp").write_bytes(_bmp_2x2())
    result = run_tool(READ, {"path": "img.bmp"}, tmp_path)
    image = result.content[-1]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    idat = png[png.index(b"IDAT") + 4:]
    raw = zlib.decompressobj().decompress(idat)
    top, bottom = raw[1:9], raw[10:18]
    assert top == bytes([0, 255, 0, 255, 255, 255, 255, 255])
    assert bottom == bytes([0, 0, 255, 255, 255, 0, 0, 255])


def test_binary_file_is_described_not_dumped(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02garbage" * 100)
    result = run_tool(READ, {"path": "blob.bin"}, tmp_path)
    assert not result.is_error and "binary" in result.text_content()
    assert "garbage" not in result.text_content()


def test_path_forms(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi")
    assert run_tool(READ, {"path": "@a.txt"}, tmp_path).text_content() == "hi"
    assert run_tool(READ, {"path": str(tmp_path / "a.txt")}, tmp_path / "..").text_content() == "hi"
    (tmp_path / "Shot 10.00.00\u202fAM.png").write_text("macos")
    assert run_tool(READ, {"path": "Shot 10.00.00 AM.png"}, tmp_path).text_content() == "macos"
