"""grep, find and ls: pi's result formats, .gitignore semantics, and ripgrep vs the Python fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import load_tool, recorded_results, run_tool, run_tool_error

from pi_core import find_ripgrep, grep, list_files

GREP, FIND, LS = load_tool("grep"), load_tool("find"), load_tool("ls")
BACKENDS = [True, False]


def test_ripgrep_is_installed_for_these_tests() -> None:
    assert find_ripgrep() is not None


def test_schemas_are_pi_16s() -> None:
    assert list(GREP.parameters["properties"]) == ["pattern", "path", "glob", "ignoreCase", "literal", "context",
                                                   "limit"]
    assert [p["type"] for p in GREP.parameters["properties"].values()] == [
        "string", "string", "string", "boolean", "boolean", "number", "number"]
    assert GREP.parameters["required"] == ["pattern"]
    assert list(FIND.parameters["properties"]) == ["pattern", "path", "limit"]
    assert FIND.parameters["required"] == ["pattern"]
    assert list(LS.parameters) == ["type", "properties"]  # ls has no "required" key at all
    assert list(LS.parameters["properties"]) == ["path", "limit"]
    for tool in (GREP, FIND, LS):
        assert tool.capabilities.reads and tool.capabilities.concurrency_safe and not tool.capabilities.writes


@pytest.mark.parametrize("backend", ["ripgrep", "python"])
def test_recorded_results_match_pi(workspace, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    monkeypatch.setenv("PI_SEARCH_BACKEND", backend)
    ws = workspace("b2_all_tools")
    (ws / ".git").mkdir()
    for name, tool in (("grep", GREP), ("find", FIND), ("ls", LS)):
        (rec,) = recorded_results("b2_all_tools", name)
        result = run_tool(tool, rec["arguments"], ws)
        assert [c.model_dump(by_alias=True, exclude_none=True) for c in result.content] == rec["content"]
    (ws / "out").mkdir()
    (ws / "out" / "gen.py").write_text("def generated(): pass\n")
    assert "out/" not in run_tool(FIND, {"pattern": "*.py"}, ws).text_content()
    assert "generated" not in run_tool(GREP, {"pattern": "def "}, ws).text_content()


def build_tree(root: Path) -> list[str]:
    """A tree exercising ignore semantics; returns the files both backends must list."""
    files = {
        ".gitignore": "*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/*.tmp\n\\#hash.txt\nignored_dir/\n"
                      "!ignored_dir/keep.txt\n# a comment\n\n  \n",
        ".ignore": "secret.txt\n",
        ".env": "TOKEN=1\n", "a.py": "print('a')\n", "keep.log": "kept\n", "x.log": "gone\n", "top.txt": "top\n",
        "secret.txt": "s\n", "#hash.txt": "h\n", "excluded.txt": "e\n",
        "build/out.py": "built\n", "src/build": "a file named build\n", "src/top.txt": "not anchored here\n",
        "src/.gitignore": "*.gen.py\n!important.gen.py\n", "src/a.gen.py": "g\n", "src/important.gen.py": "i\n",
        "src/x.log": "gone\n", "src/keep.log": "kept\n", "docs/a/b.tmp": "t\n", "docs/c.tmp": "t\n",
        "docs/readme.md": "r\n", "ignored_dir/keep.txt": "k\n", "sub/x.log": "other repo\n",
        "sub/secret.txt": "s\n", ".git/config": "[core]\n", ".git/info/exclude": "excluded.txt\n",
        "sub/.git/HEAD": "ref\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "link.py").symlink_to(root / "a.py")
    return [".env", ".gitignore", ".ignore", "a.py", "docs/readme.md", "keep.log", "src/.gitignore", "src/build",
            "src/important.gen.py", "src/keep.log", "src/top.txt", "sub/x.log"]


@pytest.mark.parametrize("ripgrep", BACKENDS)
def test_gitignore_semantics(tmp_path: Path, ripgrep: bool) -> None:
    expected = build_tree(tmp_path)
    assert asyncio.run(list_files(tmp_path, ripgrep=ripgrep)) == expected


def test_parent_gitignore_applies_to_a_subdirectory_search(tmp_path: Path) -> None:
    build_tree(tmp_path)
    for rg in BACKENDS:
        assert asyncio.run(list_files(tmp_path / "src", ripgrep=rg)) == [
            ".gitignore", "build", "important.gen.py", "keep.log", "top.txt"]


def _grep(root: Path, pattern: str, rg: bool, **kw):
    result = asyncio.run(grep(root, pattern, ripgrep=rg, **kw))
    return [(ln.path, ln.line, ln.text, ln.is_match) for ln in result.lines], result.limit_reached


@pytest.mark.parametrize("kw", [
    {}, {"glob": "*.log"}, {"glob": "src/**"}, {"glob": "!*.py"}, {"ignore_case": True}, {"context": 1},
    {"limit": 3}, {"limit": 3, "context": 2}, {"literal": True},
])
def test_grep_backends_agree(tmp_path: Path, kw: dict) -> None:
    build_tree(tmp_path)
    (tmp_path / "many.txt").write_text("".join(f"{'K' if i % 3 else 'k'}ept line {i}\n" for i in range(12)))
    pattern = "ept l" if kw.get("literal") else "[Kk]ept|e"
    with_rg, without = _grep(tmp_path, pattern, True, **kw), _grep(tmp_path, pattern, False, **kw)
    assert with_rg == without
    assert with_rg[0]  # something was found


def test_grep_limit_is_deterministic_path_order(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"d{i % 5}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 5}" / f"f{i}.txt").write_text("hit\n" * 3)
    lines, reached = _grep(tmp_path, "hit", True, limit=10)
    assert reached and len(lines) == 10
    assert [ln[0] for ln in lines][:3] == ["d0/f0.txt"] * 3
    assert (lines, reached) == _grep(tmp_path, "hit", False, limit=10)


def test_grep_tool_formats(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n" + "x" * 600 + "\n")
    text = run_tool(GREP, {"pattern": "two", "context": 1}, tmp_path).text_content()
    assert text == "a.txt-1- one\na.txt:2: two\na.txt-3- three"
    result = run_tool(GREP, {"pattern": "x{10}"}, tmp_path)
    assert result.text_content().startswith("a.txt:4: " + "x" * 500 + "... [truncated]")
    assert result.details == {"linesTruncated": True}
    assert run_tool(GREP, {"pattern": "TWO", "ignoreCase": True, "path": "a.txt"}, tmp_path).text_content() \
        == "a.txt:2: two"
    assert run_tool(GREP, {"pattern": "nothing here"}, tmp_path).text_content() == "No matches found"
    result = run_tool(GREP, {"pattern": "o", "limit": 1}, tmp_path)
    assert result.text_content().startswith("a.txt:1: one\n\n[Stopped at 1 matches; pass limit=2")
    assert result.details["matchLimitReached"] == 1


@pytest.mark.parametrize("backend", ["ripgrep", "python"])
def test_grep_tool_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    monkeypatch.setenv("PI_SEARCH_BACKEND", backend)
    (tmp_path / "a.txt").write_text("x\n")
    assert "Path not found" in run_tool_error(GREP, {"pattern": "x", "path": "nope"}, tmp_path)
    assert "(" in run_tool_error(GREP, {"pattern": "(unclosed"}, tmp_path)


def test_grep_output_is_capped_at_50kb(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(("y" * 400 + "\n") * 300)
    result = run_tool(GREP, {"pattern": "y", "limit": 1000}, tmp_path)
    assert len(result.text_content().encode()) < 51200 + 200
    assert "50.0KB" in result.text_content() and "truncation" in result.details


def test_find_tool(tmp_path: Path) -> None:
    build_tree(tmp_path)
    (tmp_path / "src" / "Mixed.PY").write_text("")
    assert run_tool(FIND, {"pattern": "*.log"}, tmp_path).text_content() == "keep.log\nsrc/keep.log\nsub/x.log"
    assert run_tool(FIND, {"pattern": "src/*.py"}, tmp_path).text_content() == "src/Mixed.PY\nsrc/important.gen.py"
    assert run_tool(FIND, {"pattern": "*.PY"}, tmp_path).text_content() == "src/Mixed.PY"
    assert run_tool(FIND, {"pattern": "**/docs"}, tmp_path).text_content() == "docs/"
    assert run_tool(FIND, {"pattern": "./src/*.log"}, tmp_path).text_content() == "src/keep.log"
    assert run_tool(FIND, {"pattern": "*.md", "path": "docs"}, tmp_path).text_content() == "readme.md"
    assert run_tool(FIND, {"pattern": "*.zzz"}, tmp_path).text_content() == "No files found matching pattern"
    result = run_tool(FIND, {"pattern": "*", "limit": 2}, tmp_path)
    assert result.text_content().startswith(".env\n.gitignore\n\n[Stopped at 2 results; pass limit=4")
    assert result.details["resultLimitReached"] == 2
    assert "Path not found" in run_tool_error(FIND, {"pattern": "*", "path": "missing"}, tmp_path)
    assert "Not a directory" in run_tool_error(FIND, {"pattern": "*", "path": "a.py"}, tmp_path)


def test_find_backends_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_tree(tmp_path)
    outputs = []
    for backend in ("ripgrep", "python"):
        monkeypatch.setenv("PI_SEARCH_BACKEND", backend)
        outputs.append([run_tool(FIND, {"pattern": p}, tmp_path).text_content() for p in ("*", "**/*.py", "s*")])
    assert outputs[0] == outputs[1]


def test_ls_tool(tmp_path: Path) -> None:
    for name in ["b.txt", "A.txt", ".hidden", "_under", "-dash", "10.txt"]:
        (tmp_path / name).write_text("")
    (tmp_path / "Dir").mkdir()
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    text = run_tool(LS, {}, tmp_path).text_content()
    assert text == "_under\n-dash\n.hidden\n10.txt\nA.txt\nb.txt\nDir/"
    result = run_tool(LS, {"path": ".", "limit": 2}, tmp_path)
    assert result.text_content() == "_under\n-dash\n\n[Stopped at 2 entries; pass limit=4 for more]"
    assert result.details == {"entryLimitReached": 2}
    (tmp_path / "Dir" / "empty").mkdir()
    assert run_tool(LS, {"path": "Dir/empty"}, tmp_path).text_content() == "(empty directory)"
    assert "Path not found" in run_tool_error(LS, {"path": "nope"}, tmp_path)
    assert "Not a directory" in run_tool_error(LS, {"path": "b.txt"}, tmp_path)


@pytest.mark.parametrize("ripgrep", BACKENDS)
def test_gitignore_outside_a_repository(tmp_path: Path, ripgrep: bool) -> None:
    root = tmp_path / "plain"
    (root / "sub" / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n")
    for rel in ("a.log", "b.txt", "sub/c.log", "sub/d.txt"):
        (root / rel).write_text("x\n")
    assert asyncio.run(list_files(root, ripgrep=ripgrep)) == [".gitignore", "b.txt", "sub/d.txt"]
