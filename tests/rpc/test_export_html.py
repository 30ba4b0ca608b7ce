"""HTML export of session files: a real pi 1.6 session, a hostile one, and ``pi --export``."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rpc_client import FIXTURES

from pi_core.export_html import export_session_html

PI_SESSION = FIXTURES / "c_rpc" / "session.jsonl"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


class Collector(HTMLParser):
    """Tags, attributes and text of a page (to check structure, not string fragments)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Collector:
    collector = Collector()
    collector.feed(page)
    return collector


def line(entry: dict) -> str:
    return json.dumps(entry) + "\n"


def hostile_session(path: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": "/tmp/<cwd>"}
    user = {"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": "<script>alert(1)</script> & \"quotes\""},
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "image", "mimeType": 'image/png" onerror="alert(2)', "data": PNG},
        {"type": "image", "mimeType": "image/png", "data": '"><script>alert(3)</script>'}]}
    assistant = {"role": "assistant", "timestamp": 2, "model": "m<1>", "stopReason": "toolUse", "content": [
        {"type": "thinking", "thinking": "plan </details><script>alert(4)</script>"},
        {"type": "text", "text": "Looking."},
        {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "echo '<b>'"}}]}
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": True, "timestamp": 3,
              "content": [{"type": "text", "text": "</pre><img src=x onerror=alert(5)>"}]}
    bash = {"role": "bashExecution", "command": "ls <dir>", "output": "a\nb\n", "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 4}
    entries = [header]
    for index, message in enumerate([user, assistant, result, bash]):
        entries.append({"type": "message", "id": f"e{index}", "parentId": f"e{index - 1}" if index else None,
                        "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
    entries.append({"type": "compaction", "id": "e9", "parentId": "e3", "timestamp": "2026-01-01T00:00:02.000Z",
                    "summary": "## Goal <u>x</u>", "firstKeptEntryId": "e3", "tokensBefore": 99})
    path.write_text("".join(map(line, entries)))
    return path


def test_pi_session_renders_messages_tool_calls_and_results(tmp_path: Path) -> None:
    out = export_session_html(PI_SESSION, tmp_path / "page.html")
    page = out.read_text()
    doc = parse(page)
    text = "".join(doc.text)
    for expected in ("Hello", "Hi there! How can I help?", "Run echo rpc-ok", "rpc-ok", "The command printed rpc-ok.",
                     "After the abort I am answering normally again.", "01a23729-051c-7245-9ba2-4280f760ed84",
                     "fake/fake-model", "Request was aborted"):
        assert expected in text, expected
    summaries = [t for t in doc.tags if t[0] == "details"]
    assert any("call" in (attrs.get("class") or "") for _t, attrs in summaries)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page.split("<main>")[0]


def test_everything_from_the_session_is_escaped(tmp_path: Path) -> None:
    page = export_session_html(hostile_session(tmp_path / "s.jsonl"), tmp_path / "out.html").read_text()
    doc = parse(page)
    assert [t for t, _a in doc.tags if t == "script"] == []
    images = [attrs for tag, attrs in doc.tags if tag == "img"]
    assert len(images) == 1 and images[0]["src"] == f"data:image/png;base64,{PNG}"
    assert not any(k.startswith("on") for _t, attrs in doc.tags for k in attrs)
    text = "".join(doc.text)
    assert "<script>alert(1)</script> & \"quotes\"" in text and "</pre><img src=x onerror=alert(5)>" in text
    assert "plan </details><script>alert(4)</script>" in text and "## Goal <u>x</u>" in text
    assert "$ ls <dir>" in text and "/tmp/<cwd>" in text
    failed = [attrs for tag, attrs in doc.tags if tag == "details" and "failed" in (attrs.get("class") or "")]
    assert len(failed) == 1  # the erroring tool call is marked


def test_missing_and_invalid_files_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        export_session_html(tmp_path / "nope.jsonl", tmp_path / "x.html")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a session\n")
    with pytest.raises(ValueError, match="not a valid pi session"):
        export_session_html(bad, tmp_path / "y.html")
    assert not (tmp_path / "x.html").exists()


def test_cli_export_writes_the_page(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "pi_core", "--export", str(PI_SESSION), "page.html"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0, result.stderr
    assert re.search(r"page\.html", result.stdout)
    assert "The command printed rpc-ok." in (tmp_path / "page.html").read_text()
