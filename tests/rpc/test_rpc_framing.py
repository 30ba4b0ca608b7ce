"""Strict JSONL framing: split on LF only, one CR stripped, U+2028 and friends kept inside records."""

from __future__ import annotations

import json

import pytest

from pi_core.modes.rpc.jsonl import LineSplitter, parse_record, serialize


def feed_all(chunks: list[bytes]) -> list[str]:
    splitter = LineSplitter()
    out = [record for chunk in chunks for record in splitter.feed(chunk)]
    return out + splitter.end()


def test_records_split_on_lf_only() -> None:
    text = '{"m":"a\u2028b\u2029c\x85d\x0be\x0cf\rg"}'
    data = (text + "\n" + '{"n":1}\r\n').encode()
    assert feed_all([data]) == [text, '{"n":1}']


def test_records_survive_any_chunking_including_split_characters() -> None:
    data = '{"m":"naïve — 日本 \u2028"}\n{"k":2}\n'.encode()
    expected = feed_all([data])
    for size in (1, 2, 3, 5, 7):
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        assert feed_all(chunks) == expected
    assert json.loads(expected[0])["m"] == "naïve — 日本 \u2028"


def test_final_unterminated_record_counts_at_end_of_input() -> None:
    assert feed_all([b'{"a":1}\n{"b":2}']) == ['{"a":1}', '{"b":2}']
    assert feed_all([b'{"a":1}\n']) == ['{"a":1}']


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert feed_all([b'{"a":"\xff"}\n']) == ['{"a":"\ufffd"}']


def test_output_lines_escape_line_separators_and_lone_surrogates() -> None:
    line = serialize({"type": "x", "text": "a\u2028b\u2029c\ud800"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert b"\\u2028" in line and b"\\u2029" in line and b"\\ud800" in line
    line.decode("utf-8")  # always valid UTF-8
    assert json.loads(line)["text"] == "a\u2028b\u2029c\ud800"


def test_raw_data_is_spliced_in_as_the_data_field() -> None:
    line = serialize({"id": "1", "type": "response", "command": "get_tree", "success": True}, '{"tree":[]}')
    assert json.loads(line) == {"id": "1", "type": "response", "command": "get_tree", "success": True,
                                "data": {"tree": []}}


@pytest.mark.parametrize("text", ["NaN", '{"a":Infinity}', "{not json", '{"a":1} x'])
def test_parse_rejects_what_json_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_record(text)
