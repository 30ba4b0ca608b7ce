"""Terminal geometry helpers of ``pi_core.tui``: widths per grapheme cluster, cutting, slicing and wrapping
styled text, and code highlighting for renderers."""

from __future__ import annotations

import pytest

from pi_core.tui import highlight_code, slice_by_column, truncate_to_width, visible_width, wrap_text_with_ansi

RED, RESET = "\x1b[31m", "\x1b[0m"


@pytest.mark.parametrize(("text", "columns"), [
    ("hello", 5), ("中文", 4), ("👍🏽", 2), ("👨‍👩‍👧‍👦", 2), ("🇯🇵", 2), ("e\u0301", 1), ("❤️", 2),
    (f"{RED}red{RESET}", 3), ("\x1b]8;;https://x.dev\x07link\x1b]8;;\x07", 4), ("\x1b_pi:c\x07ab", 2), ("a\tb", 5), ("", 0),
])
def test_visible_width_counts_what_the_terminal_draws(text: str, columns: int) -> None:
    assert visible_width(text) == columns


def test_truncate_keeps_wide_characters_whole_and_styling_closed() -> None:
    assert truncate_to_width("日本語abc", 5) == "日本…"
    assert truncate_to_width("日本語abc", 4) == "日…"  # the second character would straddle the edge
    assert truncate_to_width("👍🏽👍🏽👍🏽", 5) == "👍🏽👍🏽…"  # a skin-toned thumb is one 2-column cell
    cut = truncate_to_width(f"{RED}hello world{RESET}", 6)
    assert cut == f"{RED}hello{RESET}…" and visible_width(cut) == 6
    assert truncate_to_width("short", 10) == "short"
    assert truncate_to_width("short", 10, pad=True) == "short     "
    assert truncate_to_width("abcdef", 4, "...") == "a..."
    assert truncate_to_width("abcdef", 3, "") == "abc"
    assert truncate_to_width("abc", 0) == ""


def test_slice_by_column_keeps_the_styling_in_force() -> None:
    line = f"{RED}hello{RESET} world"
    assert slice_by_column(line, 2, 6) == f"{RED}llo{RESET} wo"
    assert slice_by_column("中文字", 2, 2) == "文"
    assert slice_by_column("中文字", 1, 3, strict=True) == "文"  # 中 starts before the slice
    assert slice_by_column("abc", 1, 0) == ""


def test_wrap_text_breaks_at_spaces_and_carries_the_styling() -> None:
    assert wrap_text_with_ansi("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]
    assert wrap_text_with_ansi("abcdefghijklmnop", 6) == ["abcdef", "ghijkl", "mnop"]
    assert wrap_text_with_ansi("one\n\ntwo", 10) == ["one", "", "two"]
    assert wrap_text_with_ansi("", 10) == [""]
    rows = wrap_text_with_ansi(f"{RED}the quick brown{RESET} fox", 10)
    assert rows == [f"{RED}the quick{RESET}", f"{RED}brown{RESET} fox"]
    assert all(visible_width(row) <= 10 for row in wrap_text_with_ansi("中文" * 20 + " 👍🏽" * 9, 7))


def test_highlight_code_by_language_by_path_and_plain() -> None:
    lines = highlight_code("def f():\n    return 1\n", "python")
    assert len(lines) == 2 and "\x1b[" in lines[0] and "def" in lines[0]
    assert "\x1b[" in "".join(highlight_code('{"a": 1}', path="data.json"))
    assert highlight_code("just text", "no-such-language") == ["just text"]


def test_highlight_code_follows_a_theme_without_colour() -> None:
    from pi_core import UI

    assert highlight_code("x = 1", "python", theme=UI().theme) == ["x = 1"]
