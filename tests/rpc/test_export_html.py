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
from pi_core.modes.interactive.theme import TOKENS as THEME_TOKENS

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
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert not re.search(r"https?:|//", page.split("<main>")[0])  # the page loads nothing


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


# -- markdown, themes and nested calls, through `pi --export` -------------------------------------------------

class Tree(HTMLParser):
    """Each piece of text with the tags it is inside (``tag`` or ``tag.class``), and each start tag with its
    attributes."""

    VOID = {"meta", "img", "br", "hr", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.pieces: list[tuple[tuple[str, ...], str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            css = dict(attrs).get("class")
            self.stack.append(f"{tag}.{css}" if css else tag)

    def handle_endtag(self, tag: str) -> None:
        names = [name.split(".")[0] for name in self.stack]
        if tag in names:
            del self.stack[len(names) - 1 - names[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        self.pieces.append((tuple(self.stack), data))

    def text_in(self, selector: str) -> str:
        """The text inside ``selector``: a tag (``pre``) or a tag with its class (``details.nested``)."""
        return "".join(data for path, data in self.pieces
                       if any(selector in (name, name.split(".")[0]) for name in path))


def tree(page: str) -> Tree:
    parsed = Tree()
    parsed.feed(page)
    return parsed


def session_with(path: Path, *messages: dict) -> Path:
    header = {"type": "session", "version": 3, "id": "s-md", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}
    entries = [header]
    for index, message in enumerate(messages):
        entries.append({"type": "message", "id": f"m{index}", "parentId": f"m{index - 1}" if index else None,
                        "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
    path.write_text("".join(map(line, entries)))
    return path


def pi_export(pi_exe: list[str], source: Path, out: Path, *flags: str) -> str:
    done = subprocess.run([*pi_exe, *flags, "--export", str(source), str(out)], cwd=out.parent,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return out.read_text()


ANSWER = """## Plan

1. read the file
   - then *edit* it
2. run the tests

```python
def greet(name):
    return f"hi {name}"
```

| tool | calls |
|------|------:|
| read | 2 |

See [the docs](https://example.com/docs?a=1&b=2) and [bad](javascript:alert(7)).

<script>alert(1)</script> <b>bold?</b>
"""


def test_answers_are_rendered_as_markdown_and_raw_html_stays_text(tmp_path: Path, pi_exe: list[str]) -> None:
    source = session_with(tmp_path / "s.jsonl",
                          {"role": "user", "timestamp": 1, "content": [{"type": "text", "text": "plan it"}]},
                          {"role": "assistant", "timestamp": 2, "model": "m", "stopReason": "stop",
                           "content": [{"type": "text", "text": ANSWER}]})
    page = pi_export(pi_exe, source, tmp_path / "out.html")
    doc = tree(page)
    tags = [tag for tag, _attrs in doc.tags]
    assert doc.text_in("h2") == "Plan"
    assert "read the file" in doc.text_in("ol") and doc.text_in("ul").strip() == "then edit it"
    assert doc.text_in("em") == "edit"
    assert doc.text_in("th") == "toolcalls" and doc.text_in("td") == "read2"
    code = [attrs for tag, attrs in doc.tags if tag == "code" and attrs.get("class")]
    assert code == [{"class": "language-python"}]
    keywords = [attrs.get("class") for tag, attrs in doc.tags if tag == "span"]
    assert "syntaxKeyword" in keywords and "syntaxString" in keywords  # pygments, coloured by the theme
    assert 'def greet(name):\n    return f"hi {name}"' in doc.text_in("pre")
    links = [attrs for tag, attrs in doc.tags if tag == "a"]
    assert [a["href"] for a in links] == ["https://example.com/docs?a=1&b=2"]
    assert doc.text_in("a") == "the docs"
    assert "[bad](javascript:alert(7))" in "".join(data for _path, data in doc.pieces)
    assert "script" not in tags and "b" not in tags and "<script>alert(1)</script> <b>bold?</b>" in doc.text_in("p")
    assert "<script" not in page


def test_the_export_takes_the_theme_setting_and_its_export_colours(tmp_path: Path, pi_exe: list[str],
                                                                    agent_dir: Path) -> None:
    colours = {token: "#445566" for token in THEME_TOKENS}
    colours.update(mdHeading="#c0ffee", syntaxKeyword="#abcdef", userMessageBg="#102030")
    (agent_dir / "themes").mkdir(parents=True)
    (agent_dir / "themes" / "sea.json").write_text(json.dumps(
        {"name": "sea", "vars": {"deep": "#010203"}, "colors": colours,
         "export": {"pageBg": "deep", "cardBg": "#0a0b0c", "infoBg": 17}}))
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "sea"}))
    source = session_with(tmp_path / "s.jsonl",
                          {"role": "assistant", "timestamp": 2, "model": "m", "stopReason": "stop",
                           "content": [{"type": "text", "text": "# Title"}]})
    page = pi_export(pi_exe, source, tmp_path / "sea.html")
    root = theme_vars(page)
    assert root["mdHeading"] == "#c0ffee" and root["syntaxKeyword"] == "#abcdef"
    assert (root["pageBg"], root["cardBg"], root["infoBg"]) == ("#010203", "#0a0b0c", "#00005f")
    assert "color:var(--mdHeading)" in page and "background:var(--pageBg)" in page
    # --use-theme picks another theme for this export only; pi's built-in light carries pi's export colours
    light = theme_vars(pi_export(pi_exe, source, tmp_path / "light.html", "--use-theme", "light"))
    assert (light["pageBg"], light["cardBg"], light["infoBg"]) == ("#efeeee", "#f7f6f6", "#ede3dd")
    assert light["mdHeading"] != "#c0ffee"


def test_a_theme_without_export_colours_derives_them_from_the_user_message_colour(tmp_path: Path) -> None:
    from pi_core.export_html import export_colours
    from pi_core.modes.interactive.theme import build_theme, builtin_theme

    colours = {token: "#445566" for token in THEME_TOKENS}
    dark = build_theme({"name": "d", "colors": {**colours, "userMessageBg": "#646464"}})
    light = build_theme({"name": "l", "colors": {**colours, "userMessageBg": "#f0f0f0"}})
    assert export_colours(dark) == ("#464646", "#555555", "#787364")
    assert export_colours(light) == ("#e6e6e6", "#f0f0f0", "#faf5dc")
    # system leaves the backgrounds to the terminal: a dark page, and pi's fallback
    assert export_colours(builtin_theme("system")) == ("#18181e", "#1e1e24", "#3c3728")


def theme_vars(page: str) -> dict[str, str]:
    root = re.search(r":root\{([^}]*)\}", page)
    assert root is not None
    pairs = (pair.split(":", 1) for pair in root.group(1).split(";"))
    return {name.removeprefix("--"): value for name, value in pairs}


def test_nested_calls_are_listed_under_the_tool_call(tmp_path: Path, pi_exe: list[str]) -> None:
    record = {"complete": False, "calls": [
        {"id": "n1", "name": "read", "arguments": {"path": "a.py"}, "status": "ok", "durationMs": 12},
        {"id": "n2", "name": "bash", "arguments": {"command": "make <all>"}, "status": "error", "durationMs": 5,
         "error": "boom\nsecond line"},
        {"id": "n3", "name": "write", "argumentsBytes": 9000, "status": "unfinished"}]}
    source = session_with(
        tmp_path / "s.jsonl",
        {"role": "assistant", "timestamp": 2, "model": "m", "stopReason": "toolUse",
         "content": [{"type": "toolCall", "id": "c1", "name": "codemode", "arguments": {"code": "..."}}]},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "codemode", "isError": False, "timestamp": 3,
         "content": [{"type": "text", "text": "done"}], "nestedCalls": record})
    doc = tree(pi_export(pi_exe, source, tmp_path / "out.html"))
    nested = [attrs for tag, attrs in doc.tags if tag == "details" and attrs.get("class") == "nested"]
    assert len(nested) == 1
    assert doc.text_in("details.nested").split("\n") == [
        "Nested calls: 3 (incomplete record)" + '✓ read {"path":"a.py"} 12ms', '✗ bash {"command":"make <all>"} 5ms',
        "    boom", "    second line", "… write [arguments omitted, 9000 bytes]"]
    assert "details.call" in [name for path, _data in doc.pieces for name in path
                              if any(n == "details.nested" for n in path)]  # inside the call it belongs to
