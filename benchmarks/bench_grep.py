"""grep tool vs running ripgrep directly, over a generated 20,000-file tree.

    .venv/bin/python benchmarks/bench_grep.py [--files 20000] [--runs 7]

Prints the median wall time of each case and the ratio tool / rg. The target (docs/performance.md)
is a ratio within 1.5x. The Python fallback is timed too, for information.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_core import ToolContext, find_ripgrep  # noqa: E402
from plugins.tools.grep import make_grep_tool  # noqa: E402
from timing import median_ms  # noqa: E402

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def make_tree(root: Path, files: int) -> None:
    rng = random.Random(42)
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("*.tmp\nbuild/\n")
    per_dir = 100
    for i in range(files):
        d = root / f"pkg{i // (per_dir * 10)}" / f"mod{(i // per_dir) % 10}"
        d.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(40)]
        if i % 997 == 0:
            lines[rng.randrange(40)] += " needle_rare_token"
        (d / f"file{i}.py").write_text("\n".join(lines) + "\n")


def rg_direct(rg: str, root: Path, pattern: str) -> None:
    subprocess.run([rg, "--hidden", "--line-number", "--no-heading", "--with-filename", "-g", "!.git", "--",
                    pattern, "."], cwd=root, stdout=subprocess.DEVNULL, check=False)


def tool_run(root: Path, pattern: str, backend: str) -> None:
    os.environ["PI_SEARCH_BACKEND"] = backend
    tool = make_grep_tool()
    asyncio.run(tool.run({"pattern": pattern}, ToolContext(tool_call_id="bench", cwd=root)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        sys.exit("ripgrep is not installed (pip install ripgrep)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, args.files)
        print(f"tree: {args.files} files under {root}; rg: {rg}")
        for label, pattern in (("rare pattern (21 matches)", "needle_rare_token"),
                               ("common pattern (limit hit)", "alpha beta")):
            rg_direct(rg, root, pattern)  # warm the page cache
            t_rg = median_ms(lambda: rg_direct(rg, root, pattern), args.runs) / 1000
            t_tool = median_ms(lambda: tool_run(root, pattern, "ripgrep"), args.runs) / 1000
            print(f"{label:28s} rg {t_rg * 1000:7.1f} ms   grep tool {t_tool * 1000:7.1f} ms   "
                  f"ratio {t_tool / t_rg:4.2f}")
        t_py = median_ms(lambda: tool_run(root, "needle_rare_token", "python"), max(1, args.runs // 3)) / 1000
        print(f"{'python fallback (rare)':28s} {t_py * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
