"""Overlays and components that take the keyboard, driven in a pseudo-terminal: pi's overlay-test and
overlay-qa-tests examples (placement, stacking, focus between non-capturing panels, hiding through the
handle, the ``visible`` option, ``max_height``, animation), snake (a component moved by a timer) and
key-release events (kitty's flag 2) for components that ask for them."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (the fixture)

from pi_core.tui import visible_width

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
KEY_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "interactive" / "key_release_plugin.py"
pytestmark = pytest.mark.timeout(120)


def example(name: str) -> dict[str, Any]:
    return {"extensions": [str(EXAMPLES / f"{name}.py")]}


def rows_with(app: Any, text: str) -> list[int]:
    return [index for index, row in enumerate(app.display()) if text in row]


def column_of(app: Any, text: str) -> int:
    row = next(r for r in app.display() if text in r)
    return row.index(text)


def editor_is_back(app: Any) -> bool:
    return "thinking" in app.display()[-1]


def test_overlay_test_is_drawn_over_the_conversation_with_its_own_frame(running) -> None:  # noqa: F811
    app = running([{"text": "\n\n".join(f"answer line {n}" for n in range(1, 16))}], **example("overlay_test"))
    app.type("tell me")
    app.wait_for("answer line 15", 30)
    app.settle(0.3)
    app.type("/overlay-test")
    app.wait_for("Actions ───")
    app.wait_for(lambda: rows_with(app, "╰─"))
    screen = app.display()
    top, bottom = rows_with(app, "╭─")[0], rows_with(app, "╰─")[-1]
    assert screen[top].index("╭") == 5 and screen[top].rstrip().endswith("╮") and len(screen[top].rstrip()) == 75
    framed = [row for row in screen[top:bottom + 1] if "Emoji" not in row]  # pyte cannot draw a ZWJ family
    assert all(visible_width(row.rstrip()) == 75 for row in framed), framed  # wide text, styling: the border stays
    assert any(row.startswith("answer line") for row in screen[:top])  # the conversation is there, behind
    assert any("Wide: 中文日本語" in row for row in framed)
    app.send("ab")
    app.wait_for("▶ Search: ab")
    app.send("\x1b[B")
    app.send("cd")
    app.wait_for("▶ Run: cd")
    app.send("\x7f")
    app.wait_for("▶ Run: c")
    app.send("\r")
    app.wait_for('Run: "c"')
    app.wait_for(lambda: editor_is_back(app))
    app.type("/overlay-corner")
    app.wait_for("Actions ───")
    app.wait_for(lambda: rows_with(app, "╰─"))
    frame = app.display()[rows_with(app, "╭─")[0]]
    assert rows_with(app, "╭─")[0] == 1 and frame.index("╭") == 80 - 1 - 70  # top-right, one cell of margin
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app))
    assert not rows_with(app, "Overlay Test")  # closed without a notice, as in pi
    # drawn on the alternate screen: a terminal shows the conversation as it was when it closes (pyte,
    # which does not keep a second screen, shows what the overlay drew over instead)
    assert app.raw.count(b"\x1b[?1049h") == 2 and app.raw.count(b"\x1b[?1049l") == 2
    app.type("still editing")
    app.wait_for("echo: still editing", 30)
    quit_app(app)


def test_stacked_overlays_take_the_keys_front_first(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-stack")
    app.wait_for(lambda: all(rows_with(app, f"Overlay #{n}") for n in (1, 2, 3)), 20)
    first, second, third = (rows_with(app, f"Overlay #{n}")[0] for n in (1, 2, 3))
    assert first < second < third  # each 4 rows lower (offset_y)
    assert column_of(app, "Overlay #3") - column_of(app, "Overlay #2") == 8  # and 8 columns further right
    app.send("\r")
    app.wait_for(lambda: not rows_with(app, "Overlay #3") and rows_with(app, "Overlay #2"))
    app.send("\x1b")
    app.wait_for(lambda: not rows_with(app, "Overlay #2") and rows_with(app, "Overlay #1"))
    app.send("\r")
    app.wait_for("Closed in order: Overlay 1, Overlay 2, Overlay 3")
    assert app.raw.count(b"\x1b[?1049h") == 1  # one screen for all three
    quit_app(app)


def test_a_non_capturing_panel_beside_an_overlay_that_takes_the_keys(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-passive")
    app.wait_for("Non-Capturing Demo")
    app.wait_for("00:02", 10)  # the timer panel is redrawn from its timer
    timer = rows_with(app, "Timer")[0]
    assert timer == 1 and app.display()[timer].rstrip().endswith("╮") and len(app.display()[timer].rstrip()) == 98
    app.send("hi")
    app.wait_for("> hi")
    assert rows_with(app, "focused=true inputs=2")  # the keys went to the overlay that captures them
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "Timer"))
    quit_app(app)


def test_focus_moves_between_non_capturing_panels_through_their_handles(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-focus")
    app.wait_for("Current focus: Controller")
    assert rows_with(app, "Alpha visible")  # Beta and Gamma are under the controller
    app.send("\t")
    app.wait_for(lambda: rows_with(app, "Alpha FOCUSED"))  # drawn on top of the controller now
    app.send("xy")
    app.wait_for('Keys: "x" "y"')
    assert rows_with(app, "Input: > xy")
    app.send("\t")
    app.wait_for(lambda: rows_with(app, "Beta FOCUSED") and rows_with(app, "Alpha visible"))
    app.send("z")
    app.wait_for('Keys: "z"')
    app.send("\x1b")  # dismisses Beta; the focus moves on to Gamma
    app.wait_for(lambda: rows_with(app, "Gamma FOCUSED") and not rows_with(app, "Beta"))
    app.send("\x03")
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "Alpha"))
    quit_app(app)


def test_streaming_controller_cycles_the_focus_with_unfocus(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-streaming")
    app.wait_for("Streaming line 2", 15)
    assert rows_with(app, "Current focus: Controller") and not rows_with(app, "● FOCUSED")
    app.send("\t")
    app.wait_for(lambda: rows_with(app, "● FOCUSED") == [4])  # panel A: rows 1-9
    app.send("ab")
    app.wait_for(lambda: rows_with(app, "> ab") == [6])
    app.send("\t")  # panel A hands the focus back (unfocus), the controller gives it to panel B (focus)
    app.wait_for(lambda: rows_with(app, "● FOCUSED") == [13])  # panel B: rows 10-18
    app.send("cd")
    app.wait_for(lambda: rows_with(app, "> cd") == [15])
    app.send("\t")
    app.send("\t")  # C, then the controller again
    app.wait_for(lambda: not rows_with(app, "● FOCUSED") and rows_with(app, "Controller (this panel)"))
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "Panel A"))
    quit_app(app)


def test_set_hidden_gives_the_editor_back_until_the_overlay_shows_again(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-toggle")
    app.wait_for("Toggle count: 0")
    app.send("t")
    app.wait_for(lambda: app.raw.count(b"\x1b[?1049l") == 1, 5)  # hidden: the overlay's screen is gone...
    app.wait_for("Toggle count: 1", 10)  # ...and back a second later, with the keyboard
    assert app.raw.count(b"\x1b[?1049h") == 2
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "Toggle Demo"))
    quit_app(app)


@pytest.mark.parametrize("columns", [100, 80])
def test_visible_shows_the_side_panel_only_on_a_wide_terminal(running, columns: int) -> None:  # noqa: F811
    app = running(columns=columns, **example("overlay_qa_tests"))
    app.type("/overlay-sidepanel")
    if columns == 100:
        app.wait_for("Responsive Sidepanel")
        row = app.display()[rows_with(app, "Responsive Sidepanel")[0]]
        assert len(row.rstrip()) == 99 and row.index("│") == 99 - 30  # 25% is under min_width 30; margin 1
        app.send("\x1b[B")
        app.wait_for("→ Messages")
        app.send("\x1b")
        app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "Sidepanel"))
    else:
        app.settle(0.5)
        assert not rows_with(app, "Responsive Sidepanel") and editor_is_back(app)  # hidden: the editor keeps keys
        assert app.raw.count(b"\x1b[?1049h") == 0
    quit_app(app)


def test_max_height_cuts_the_rows_below_it(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-maxheight")
    app.wait_for("Line 6 of 14")
    top = rows_with(app, "MaxHeight Test")[0]
    assert rows_with(app, "Line 6 of 14")[0] == top + 9 and not rows_with(app, "Line 7 of 14")
    assert not any("╰" in row for row in app.display()[top:])  # the bottom border is cut off too
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app))
    quit_app(app)


def test_an_animated_overlay_is_redrawn_from_its_timer(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-animation")
    app.wait_for("Frame: ")

    def frame() -> int:
        match = re.search(r"Frame: (\d+)", app.text())
        return int(match.group(1)) if match else -1

    first = frame()
    app.wait_for(lambda: frame() >= first + 10, 10)
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app))
    quit_app(app)


def test_percent_and_anchor_positions(running) -> None:  # noqa: F811
    app = running(columns=100, **example("overlay_qa_tests"))
    app.type("/overlay-percent")
    app.wait_for("rowPercent: 0 (top)")
    assert rows_with(app, "Percent Test") == [0] and column_of(app, "╭") == (100 - 30) // 2
    app.send(" ")
    app.send(" ")
    app.wait_for("rowPercent: 100 (bottom)")
    assert rows_with(app, "╰")[-1] == 23
    app.send("\x1b")
    app.wait_for(lambda: editor_is_back(app))
    app.type("/overlay-anchors")
    app.wait_for("Current: top-left")
    assert rows_with(app, "Anchor Test") == [0] and column_of(app, "╭") == 0
    app.send("\x1b[C")
    app.send("\x1b[C")
    app.wait_for("Current: top-right")
    assert app.display()[0].rstrip().endswith("╮") and len(app.display()[0].rstrip()) == 100
    app.send("\r")
    app.wait_for("Selected: top-right")
    quit_app(app)


def test_snake_moves_on_its_own_pauses_into_the_session_and_resumes(running) -> None:  # noqa: F811
    app = running(env={"PI_SNAKE_SEED": "7"}, **example("snake"))
    app.type("/snake")
    app.wait_for("SNAKE")

    def head() -> tuple[int, int]:
        for y, row in enumerate(app.display()):
            if "██" in row:
                return row.index("██"), y
        return -1, -1

    start = head()
    app.wait_for(lambda: head()[0] >= start[0] + 4, 10)  # moving right by itself, a cell (2 columns) a tick
    app.send("\x1b[A")
    app.wait_for(lambda: head()[1] < start[1], 10)  # steered up
    app.send("\x1b")  # pauses and saves the game in the session
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "SNAKE"))
    app.type("/snake")
    app.wait_for("PAUSED")
    paused = head()
    time.sleep(0.5)
    assert head() == paused  # a resumed game waits for a key
    app.send("x")
    app.wait_for(lambda: head() != paused, 10)
    app.send("q")  # quits and forgets the game
    app.wait_for(lambda: editor_is_back(app) and not rows_with(app, "SNAKE"))
    app.type("/snake")
    app.wait_for("SNAKE")
    fresh = head()
    app.wait_for(lambda: head()[0] > fresh[0], 10)  # a new game runs at once
    assert not rows_with(app, "PAUSED")
    app.send("q")
    app.wait_for(lambda: editor_is_back(app))
    quit_app(app)


def test_key_releases_reach_only_components_that_ask_for_them(running) -> None:  # noqa: F811
    app = running(extensions=[str(KEY_LOG)])
    app.type("/keys")
    app.wait_for("key log: (nothing yet)")
    assert b"\x1b[>3u" not in app.raw
    app.send("w")
    app.send("\x1b[119;1:3u")  # what a kitty terminal sends when w is let go
    app.send("\x1b[99;5u")
    app.wait_for("key log: press w, press ctrl+c")  # the release was not delivered
    app.send("q")
    app.wait_for("keys seen: 2")
    app.type("/keys-release")
    app.wait_for("key log: (nothing yet)")
    app.wait_for(lambda: b"\x1b[>3u" in app.raw)  # the terminal is asked for releases while it is focused
    app.send("w")
    app.send("\x1b[119;1:3u")
    app.send("\x1b[1;1:3A")
    app.wait_for("key log: press w, release w, release up")
    app.send("q")
    app.wait_for("keys seen: 3")
    assert app.raw.rindex(b"\x1b[<u") > app.raw.rindex(b"\x1b[>3u")  # and switched off again
    quit_app(app)
