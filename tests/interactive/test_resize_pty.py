"""The terminal changing size in a pseudo-terminal: an answer being written when the window narrows is laid out
at the new width (the scrollback above keeps its width, as regular mode must)."""

from __future__ import annotations

import re

import pytest
from test_interactive_pty import quit_app, running, wait_idle  # noqa: F401  (running is a fixture)

pytestmark = pytest.mark.timeout(90)


def test_an_answer_streaming_through_a_resize_takes_the_new_width(running) -> None:  # noqa: F811
    words = " ".join(f"word{i:03d}" for i in range(90))
    app = running([{"text": words, "delta_delay": 0.03}])
    app.type("one")
    app.wait_for("word010")  # the answer has begun at 80 columns
    app.resize(50, 24)
    app.wait_for("word089", timeout=30)
    wait_idle(app)
    text = app.text()
    answer = text[text.rindex("› one"):].splitlines()
    rows = [row for row in answer if "word" in row]
    assert rows and all(re.fullmatch(r"word\d{3}( word\d{3})*", row.strip()) for row in rows), rows
    assert all(len(row) <= 50 for row in rows)
    assert " ".join(" ".join(rows).split()) == words  # every word once, none cut by the terminal's wrapping
    quit_app(app)
