"""What packages cost at start-up: resolving the settings' packages and the environment's pi resources.

    python benchmarks/bench_packages.py [--runs 50]

Scenarios (each in a throw-away agent dir): no packages; 10 directory packages with 5 skills,
5 prompt templates and 1 theme each; 10 installed distributions (real dist-info folders on sys.path)
declaring a plugin-less skills directory each. Reports the median time of ``resolve_packages`` in
the running process (entry points already scanned, as at a real start-up where the plugin scan comes
first), and ``pi list`` cold (a fresh process) for the first two. Results go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import median_ms


def skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody\n")


def directory_packages(base: Path, count: int) -> list[str]:
    sources = []
    for n in range(count):
        root = base / f"pkg{n}"
        for s in range(5):
            skill(root / "skills", f"p{n}-s{s}")
            (root / "prompts").mkdir(parents=True, exist_ok=True)
            (root / "prompts" / f"p{n}-t{s}.md").write_text("Do $1\n")
        (root / "themes").mkdir()
        (root / "themes" / f"t{n}.json").write_text(json.dumps({"name": f"t{n}", "colors": {}}))
        sources.append(str(root))
    return sources


def installed_dists(site: Path, count: int) -> None:
    for n in range(count):
        module = site / f"bench_pkg{n}"
        skill(module / "skills", f"d{n}")
        (module / "__init__.py").write_text("")
        info = site / f"bench_pkg{n}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: bench-pkg{n}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pi.skills]\nskills = bench_pkg{n}:skills\n")


def cold_ms(args: list[str], env: dict[str, str], cwd: Path, runs: int) -> float:
    return median_ms(lambda: subprocess.run([sys.executable, "-m", "pi_core", *args], env=env, cwd=cwd, check=True,
                                            capture_output=True), runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    from pi_core.entry_points import clear_entry_point_cache, scan_entry_points
    from pi_core.packages.resolve import resolve_packages

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        empty, full = base / "agent-empty", base / "agent-full"
        empty.mkdir()
        full.mkdir()
        (full / "settings.json").write_text(json.dumps({"packages": directory_packages(base / "pkgs", 10)}))
        scan_entry_points()
        rows = [("no packages", median_ms(lambda: resolve_packages(base, empty, trusted=False), runs)),
                ("10 directory packages (50 skills, 50 prompts, 10 themes)",
                 median_ms(lambda: resolve_packages(base, full, trusted=False), runs))]
        site = base / "site"
        installed_dists(site, 10)
        sys.path.insert(0, str(site))
        clear_entry_point_cache()
        scan_entry_points()
        rows.append(("10 installed distributions with pi.skills",
                     median_ms(lambda: resolve_packages(base, empty, trusted=False), runs)))
        sys.path.remove(str(site))
        cold_runs = max(3, runs // 10)
        for label, agent in (("no packages", empty), ("10 directory packages", full)):
            env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(base)}
            rows.append((f"`pi list` cold, {label}", cold_ms(["list"], env, base, cold_runs)))
    for label, value in rows:
        print(f"| {label} | {value:.1f} ms |")


if __name__ == "__main__":
    main()
