"""The edit tool and its matcher cascade: exact, tolerant-but-unique, near misses, atomicity."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, load_tool, recorded_results, run_tool, run_tool_error

from pi_core import Edit, EditError, apply_edits, closest_region

EDIT = load_tool("edit")


def edit(path: Path, *pairs: tuple[str, str]):
    return run_tool(EDIT, {"path": path.name, "edits": [{"oldText": o, "newText": n} for o, n in pairs]},
                    path.parent)


def edit_error(path: Path, *pairs: tuple[str, str]) -> str:
    return run_tool_error(EDIT, {"path": path.name, "edits": [{"oldText": o, "newText": n} for o, n in pairs]},
                          path.parent)


def test_schema_is_pi_16s() -> None:
    params = EDIT.parameters
    assert params["required"] == ["path", "edits"]
    assert list(params["properties"]) == ["path", "edits"]
    edits = params["properties"]["edits"]
    assert list(edits) == ["type", "items", "description"]
    assert edits["items"]["required"] == ["oldText", "newText"]
    assert list(edits["items"]["properties"]) == ["oldText", "newText"]


def test_recorded_edit_matches_pi(workspace) -> None:
    ws = workspace("b_json_tools")
    (rec,) = [r for r in recorded_results("b_json_tools", "edit") if not r["isError"]]
    result = run_tool(EDIT, rec["arguments"], ws)
    assert not result.is_error
    assert result.details == rec["details"]
    assert "1 block" in result.text_content() and "hello.py" in result.text_content()
    after = (FIXTURES / "b_json_tools" / "workspace_after" / "hello.py").read_bytes()
    assert (ws / "hello.py").read_bytes() == after


def test_recorded_failures_leave_the_file_alone(workspace) -> None:
    ws = workspace("f_tool_errors")
    before = (ws / "config.txt").read_bytes()
    not_found, not_unique = recorded_results("f_tool_errors", "edit")
    text = run_tool_error(EDIT, not_found["arguments"], ws)
    assert "Could not find" in text and "config.txt" in text
    assert "1 | name = demo" in text  # the closest region, numbered
    text = run_tool_error(EDIT, not_unique["arguments"], ws)
    assert "2 times" in text and "lines 2, 3" in text
    assert (ws / "config.txt").read_bytes() == before


def test_legacy_arguments_are_folded_into_edits(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("alpha beta\n")
    run_tool(EDIT, {"path": "a.txt", "oldText": "beta", "newText": "gamma"}, tmp_path)
    assert f.read_text() == "alpha gamma\n"
    run_tool(EDIT, {"path": "a.txt", "edits": '[{"oldText": "alpha", "newText": "delta"}]'}, tmp_path)
    assert f.read_text() == "delta gamma\n"
    run_tool(EDIT, {"path": "a.txt", "edits": {"oldText": "gamma", "newText": "x"}}, tmp_path)
    assert f.read_text() == "delta x\n"


def test_multiple_edits_are_atomic(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("one = 1\ntwo = 2\nthree = 3\n")
    text = edit_error(f, ("one = 1", "one = 10"), ("four = 4", "four = 40"))
    assert "edits[1]" in text
    assert f.read_text() == "one = 1\ntwo = 2\nthree = 3\n"
    result = edit(f, ("three = 3", "three = 30"), ("one = 1", "one = 10"))
    assert "2 blocks" in result.text_content()
    assert f.read_text() == "one = 10\ntwo = 2\nthree = 30\n"


def test_overlapping_and_empty_and_no_change(tmp_path: Path) -> None:
    f = tmp_path / "o.txt"
    f.write_text("abcdef\n")
    assert "overlap" in edit_error(f, ("abcd", "x"), ("cdef", "y"))
    assert "empty" in edit_error(f, ("", "x"))
    assert "No change" in edit_error(f, ("abc", "abc"))
    assert f.read_text() == "abcdef\n"


def test_crlf_and_bom_are_preserved(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\nline three\r\n")
    edit(f, ("line two\n", "line 2\nline 2b\n"))
    assert f.read_bytes() == b"\xef\xbb\xbfline one\r\nline 2\r\nline 2b\r\nline three\r\n"


def test_mixed_line_endings_keep_untouched_lines(tmp_path: Path) -> None:
    f = tmp_path / "mix.txt"
    f.write_bytes(b"a\r\nb\nc\r\n")
    edit(f, ("c", "C"))
    assert f.read_bytes() == b"a\r\nb\nC\r\n"


def test_trailing_whitespace_tolerated_when_unique(tmp_path: Path) -> None:
    f = tmp_path / "t.py"
    f.write_text("def f():   \n    return 1  \n")
    result = edit(f, ("def f():\n    return 1", "def f():\n    return 2"))
    assert "trailing whitespace" in result.text_content()
    assert f.read_text() == "def f():\n    return 2  \n"


def test_unicode_lookalikes_tolerated(tmp_path: Path) -> None:
    f = tmp_path / "u.txt"
    f.write_text("print(\u201chello\u201d)  # caf\u00e9 \u2014 done\n")
    edit(f, ('print("hello")  # caf\u00e9 - done', 'print("bye")'))
    assert f.read_text() == 'print("bye")\n'


def test_indentation_tolerated_and_reindented(tmp_path: Path) -> None:
    f = tmp_path / "i.py"
    f.write_text("class A:\n    def m(self):\n        return 1\n")
    result = edit(f, ("def m(self):\n    return 1\n", "def m(self):\n    return 2\n"))
    assert "indentation" in result.text_content()
    assert f.read_text() == "class A:\n    def m(self):\n        return 2\n"


def test_tolerant_match_must_be_unique(tmp_path: Path) -> None:
    f = tmp_path / "d.py"
    f.write_text("if a:\n    x = 1\nif b:\n        x = 1\n")
    text = edit_error(f, ("x   =   1", "x = 2"))
    assert "2 times" in text and "lines 2, 4" in text and "indentation" in text
    assert f.read_text() == "if a:\n    x = 1\nif b:\n        x = 1\n"
    g = tmp_path / "e.py"
    g.write_text("if a:\n    x = 1\n")
    edit(g, ("x   =   1", "x = 2"))
    assert g.read_text() == "if a:\n    x = 2\n"


def test_near_miss_shows_closest_region_with_line_numbers(tmp_path: Path) -> None:
    f = tmp_path / "n.py"
    lines = [f"value_{i} = compute({i})" for i in range(1, 40)]
    f.write_text("\n".join(lines) + "\n")
    text = edit_error(f, ("value_17 = compute(71)\nvalue_18 = compute(18)", "x"))
    assert "lines 17-18" in text
    assert "17 | value_17 = compute(17)" in text and "18 | value_18 = compute(18)" in text


def test_already_applied_edit_is_reported_not_repeated(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    edit(f, ("x = 1", "x = 10"))
    assert f.read_text() == "x = 10\n"
    result = edit(f, ("x = 1", "x = 10"))
    assert not result.is_error and "already applied" in result.text_content()
    assert f.read_text() == "x = 10\n"


def test_a_missing_old_text_is_not_already_applied_because_the_new_text_is_somewhere(tmp_path: Path) -> None:
    # pi 1.6 says it could not find the old text; the new text occurring elsewhere proves nothing
    f = tmp_path / "a.py"
    f.write_text("import os\nprint(os.getcwd())\n")
    assert "Could not find the old text" in edit_error(f, ("import sys", "os"))
    assert f.read_text() == "import os\nprint(os.getcwd())\n"
    with pytest.raises(EditError) as info:
        apply_edits("a = 1\nb = 2\n", [Edit("b = 3", "a = 1")])
    assert info.value.kind == "not_found"


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    assert "no such file" in run_tool_error(EDIT, {"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]},
                                            tmp_path)
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00abc")
    assert "UTF-8" in run_tool_error(EDIT, {"path": "bin", "edits": [{"oldText": "abc", "newText": "b"}]}, tmp_path)


def test_diff_details_for_distant_edits(tmp_path: Path) -> None:
    f = tmp_path / "far.txt"
    f.write_text("".join(f"l{i}\n" for i in range(1, 31)))
    result = edit(f, ("l3\n", "L3\n"), ("l25\n", "L25\n"))
    d = result.details
    assert d["firstChangedLine"] == 3
    assert d["diff"].split("\n")[:5] == ["  1 l1", "  2 l2", "- 3 l3", "+ 3 L3", "  4 l4"]
    assert "    ..." in d["diff"]
    assert d["patch"].count("@@ -") == 2 and "@@ -1,7 +1,7 @@" in d["patch"]


@pytest.mark.parametrize(("content", "old", "stage"), [
    ("a = 1\n", "a = 1", "exact"),
    ("a = 1   \nb\n", "a = 1\nb", "trailing-whitespace"),
    ("s = \u2018x\u2019\n", "s = 'x'", "unicode"),
    ("    a\n    b\n", "a\nb", "indentation"),
])
def test_cascade_reports_the_stage(content: str, old: str, stage: str) -> None:
    outcome = apply_edits(content, [Edit(old, "z")])
    assert outcome.stages() == {0: stage}


def test_matcher_api_errors_carry_kind_and_lines() -> None:
    with pytest.raises(EditError) as info:
        apply_edits("x\nx\n", [Edit("x", "y")])
    assert info.value.kind == "ambiguous" and info.value.lines == [1, 2]
    with pytest.raises(EditError) as info:
        apply_edits("hello world\n", [Edit("goodbye world", "y")])
    assert info.value.kind == "not_found" and info.value.candidate is not None
    assert closest_region("abc\n", "zzzzzzzzzzzzzzzz") is None
