"""Overlays drawn over the conversation (``ctx.ui.custom(..., overlay=True, overlay_options=...)``): pi's
overlay-test example in a pseudo-terminal — the framed box sits over the conversation's last rows, placed by
pi's options, and the conversation is as it was once the overlay closes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_interactive_pty import quit_app, running  # noqa: F401  (the fixture)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "overlay_test.py"
pytestmark = pytest.mark.timeout(120)


def box(app: Any) -> list[tuple[int, int, str]]:
    """The overlay's rows on screen: (row, column of the frame, row text)."""
    return [(index, row.index("│"), row) for index, row in enumerate(app.display()) if "│" in row]


def test_the_overlay_is_drawn_over_the_conversation(running) -> None:  # noqa: F811
    app = running([{"text": "\n\n".join(f"answer line {n}" for n in range(1, 16))}], extensions=[str(EXAMPLE)])
    app.type("tell me")
    app.wait_for("answer line 15", 30)
    app.settle(0.3)
    app.type("/overlay")
    app.wait_for("Overlay counter")
    app.settle(0.3)
    rows = box(app)
    first, left, _ = rows[0]
    assert 20 < left < 40  # centred on the 80 columns
    screen = app.display()
    assert "╭" in screen[first - 1] and "╰" in screen[rows[-1][0] + 1]
    above = screen[:first - 1]
    assert any("answer line" in row for row in above)  # the conversation is there, behind
    behind = [row for index, row in enumerate(screen) if first - 1 <= index <= rows[-1][0] + 1]
    assert any(row.startswith("answer line") for row in behind)  # ...left of the box too
    app.send("+")
    app.send("+")
    app.wait_for("value: 2")
    app.send("\r")
    app.wait_for("Overlay closed with 2")
    app.type("/overlay-corner")
    app.wait_for("Overlay counter")
    app.settle(0.3)
    rows = box(app)
    assert rows[0][0] == 2  # one row of margin, then the frame's top row
    frame = app.display()[1]
    assert frame.rstrip().endswith("╮") and len(frame.rstrip()) == 79 and frame.index("╭") == 49  # 30 wide
    app.send("\x1b")
    app.wait_for("Overlay closed with None")
    # drawn on the alternate screen: a terminal shows the conversation as it was when it closes (pyte,
    # which does not keep a second screen, shows what the overlay drew over instead)
    assert app.raw.count(b"\x1b[?1049h") == 2 and app.raw.count(b"\x1b[?1049l") == 2
    app.type("still editing")
    app.wait_for("echo: still editing", 30)
    quit_app(app)
