"""Markdown and tool-view rendering snapshots: what an answer looks like in the terminal (markdown-it-py
layout, pygments colours, OSC 8 links), and streaming a document in any pieces prints the same rows."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_core.modes.interactive.blocks import preview, tool_block
from pi_core.modes.interactive.markdown import MarkdownRenderer, MarkdownStream, render_markdown
from pi_core.modes.interactive.style import Palette, display_width, strip_ansi

DOC = """# Release notes

Version **2.1** fixes the `checkout` total; see [the issue](https://example.com/issues/42) for details.

- rounding now happens last
- two new tests
  1. VAT on discounts
  2. empty baskets
- docs updated

| Case | Before | After |
|------|--------|-------|
| 41.99 + tax | 50.38 | 50.39 |
| empty | error | 0.00 |

> Upgrade soon: the old total was wrong
> by a cent.

```python
def total(items):
    return round(sum(items), 2)  # last
```

---
"""

PLAIN = """\
# Release notes

Version 2.1 fixes the `checkout` total;
see the issue
(https://example.com/issues/42) for
details.

- rounding now happens last
- two new tests
  1. VAT on discounts
  2. empty baskets
- docs updated

Case        │ Before │ After
────────────┼────────┼──────
41.99 + tax │ 50.38  │ 50.39
empty       │ error  │ 0.00

> Upgrade soon: the old total was wrong by
> a cent.

```python
  def total(items):
      return round(sum(items), 2)  # last
```

──────────────────────────────────────────"""


def test_markdown_snapshot_without_colour() -> None:
    rows = render_markdown(Palette(False), DOC, 42)
    assert "\n".join(rows) == PLAIN
    assert all(display_width(r) <= 42 for r in rows)


def test_markdown_with_colour_uses_theme_tokens_links_and_highlighting() -> None:
    rows = render_markdown(Palette(True), DOC, 60)
    text = "\n".join(rows)
    assert "\x1b]8;;https://example.com/issues/42\x1b\\" in text  # an OSC 8 hyperlink, no URL printed
    assert "(https://example.com" not in text
    code = next(r for r in rows if "def" in strip_ansi(r) and "total" in strip_ansi(r))
    assert "\x1b[35mdef\x1b[0m" in code  # pygments: keyword
    comment = next(r for r in rows if "# last" in strip_ansi(r))
    assert "\x1b[90m# last\x1b[0m" in comment
    heading = next(r for r in rows if strip_ansi(r) == "Release notes")
    assert heading.startswith("\x1b[35;1;4m")
    assert strip_ansi(next(r for r in rows if "Case" in strip_ansi(r))).split() == \
        ["Case", "│", "Before", "│", "After"]


def test_table_too_wide_for_the_terminal_wraps_its_cells() -> None:
    doc = "| a | b |\n|---|---|\n| " + "word " * 20 + "| short |\n"
    rows = render_markdown(Palette(False), doc, 30)
    assert all(display_width(r) <= 30 for r in rows)
    assert sum("word" in r for r in rows) > 2 and "short" in "\n".join(rows)


def test_streamed_blocks_are_printed_when_the_next_begins() -> None:
    stream = MarkdownStream(MarkdownRenderer(Palette(False)))
    assert stream.feed("First paragraph\nstill first.\n", 40) == []
    assert stream.feed("\n", 40) == []
    assert stream.feed("Second", 40) == ["First paragraph still first."]
    assert stream.live(40) == ["", "Second"]
    assert stream.feed(" one.\n\n```sh\nls\n", 40) == ["", "Second one."]
    assert stream.live(40) == ["", "```sh", "  ls", "```"]
    assert stream.close(40) == ["", "```sh", "  ls", "```"]


_PIECES = ["# Head\n", "para one ", "**bold** ", "`code` ", "\n", "\n", "- item\n", "  - sub\n", "| a | b |\n",
           "|---|---|\n", "| 1 | 2 |\n", "> quote\n", "```py\n", "x = 1\n", "```\n", "text", " ", "1. first\n"]


@settings(max_examples=120, deadline=None)
@given(parts=st.lists(st.sampled_from(_PIECES), max_size=25), cuts=st.lists(st.integers(0, 400), max_size=30),
       width=st.integers(10, 60))
# "*" alone at the end looks like a new list, but "**bold** " turns it into a lazy continuation of "1. first"
@example(parts=["# Head\n"] * 3 + ["para one ", "\n", "text"] + ["1. first\n"] * 2 + ["**bold** "], cuts=[54],
         width=10)
@example(parts=["1. first\n", "*", "*bold** "], cuts=[9, 10], width=40)
def test_streaming_in_any_pieces_prints_the_whole_document_once(parts: list[str], cuts: list[int],
                                                                 width: int) -> None:
    text = "".join(parts)
    points = sorted({c for c in cuts if c < len(text)} | {0, len(text)})
    stream = MarkdownStream(MarkdownRenderer(Palette(False)))
    rows: list[str] = []
    for start, end in zip(points, points[1:], strict=False):
        rows += stream.feed(text[start:end], width)
    rows += stream.close(width)
    assert rows == render_markdown(Palette(False), text, width) if text.strip() else rows == []


def test_command_output_shows_its_last_lines_and_a_file_its_first() -> None:
    p = Palette(False)
    output = {"content": [{"type": "text", "text": "\n".join(f"line {i}" for i in range(1, 41))}]}
    bash = tool_block(p, "bash", {"command": "pytest -q"}, output, 80, duration=4.25)
    assert bash[0] == "● bash  pytest -q  Took 4.2s"
    assert bash[1:] == ["  … 35 earlier lines (ctrl+o to expand)", *[f"  line {i}" for i in range(36, 41)]]
    read = preview(p, "read", output, 80)
    assert read[0] == "  line 1" and read[-1] == "  … 34 more lines (ctrl+o to expand)"
    assert len(preview(p, "bash", output, 80, expanded=True)) == 40


def test_edit_diff_marks_the_changed_words() -> None:
    from pi_core.toolkit.diff import edit_diff

    diff = edit_diff("a.py", "def f(x):\n    return x + 1\n", "def f(x):\n    return x * 2\n")
    rows = tool_block(Palette(True), "edit", {"path": "a.py", "edits": [{}]}, {"content": [], "details": diff}, 80)
    removed = next(r for r in rows if strip_ansi(r).startswith("  -2"))
    added = next(r for r in rows if strip_ansi(r).startswith("  +2"))
    assert removed == "  \x1b[31m-2 \x1b[0m\x1b[31m    return x \x1b[0m\x1b[31;7m+\x1b[0m\x1b[31m \x1b[0m\x1b[31;7m1\x1b[0m"
    assert added == "  \x1b[32m+2 \x1b[0m\x1b[32m    return x \x1b[0m\x1b[32;7m*\x1b[0m\x1b[32m \x1b[0m\x1b[32;7m2\x1b[0m"
    plain = tool_block(Palette(False), "edit", {"path": "a.py", "edits": [{}]}, {"content": [], "details": diff}, 80)
    assert plain == ["● edit  a.py (1 edit)", "   1 def f(x):", "  -2     return x + 1", "  +2     return x * 2"]


def test_read_and_write_views_are_highlighted_by_file_name() -> None:
    source = {"content": [{"type": "text", "text": "import os\nprint(os.sep)\n"}]}
    rows = preview(Palette(True), "read", source, 80, args={"path": "tool.py"})
    assert rows[0] == "  \x1b[35mimport\x1b[0m \x1b[36mos\x1b[0m" or "\x1b[35mimport\x1b[0m" in rows[0]
    written = preview(Palette(True), "write", {"content": [{"type": "text", "text": "Wrote it"}]}, 80,
                      args={"path": "x.json", "content": '{"a": 1}'})
    assert strip_ansi(written[0]) == '  {"a": 1}' and "\x1b[" in written[0]
    unknown = preview(Palette(True), "read", source, 80, args={"path": "notes.unknownext"})
    assert unknown[0] == "  \x1b[90mimport os\x1b[0m"  # no lexer: plain tool output colour
