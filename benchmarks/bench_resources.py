"""What settings, resources and the system prompt cost at every session start.

    python benchmarks/bench_resources.py [--runs 30] [--skills 100]

Builds a realistic layout in a temporary directory (both settings files, context files along a
deep working directory, N skills in the agent dir and the project, 30 prompt templates) and measures,
as medians: importing the three modules in a fresh process; Settings.load; load_context_files;
load_skills; load_prompt_templates; build_system_prompt; and the whole start-up sequence together.
Results go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from timing import median_ms


@dataclass
class FakeTool:
    name: str
    prompt_snippet: str
    prompt_guidelines: list[str] = field(default_factory=list)


TOOLS = [FakeTool(n, f"{n} things", [f"Use {n} well."]) for n in ("read", "bash", "edit", "write")]


def make_layout(root: Path, skills: int) -> tuple[Path, Path]:
    agent, cwd = root / "agent", root / "repo" / "a" / "b" / "c"
    (root / "repo" / ".git").mkdir(parents=True)
    cwd.mkdir(parents=True)
    (agent / "settings.json").parent.mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({"defaultModel": "m", "compaction": {"reserveTokens": 9000},
                                                     "skills": ["extra"], "theme": "dark"}))
    (root / "repo" / ".pi").mkdir()
    (cwd / ".pi").mkdir()
    (cwd / ".pi" / "settings.json").write_text(json.dumps({"retry": {"maxRetries": 5}}))
    (agent / "AGENTS.md").write_text("global rules\n" * 20)
    (root / "repo" / "AGENTS.md").write_text("repo rules\n" * 50)
    for i in range(skills):
        base = agent / "skills" if i % 2 else cwd / ".pi" / "skills"
        skill = base / f"skill-{i}" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: skill-{i}\ndescription: Does thing {i} when asked.\n---\nBody {i}\n")
    (agent / "prompts").mkdir()
    for i in range(30):
        (agent / "prompts" / f"p{i}.md").write_text(f"---\ndescription: Prompt {i}\n---\nDo $1 then $@\n")
    return agent, cwd


def import_cost(runs: int) -> float:
    """Marginal import time of the three modules once pydantic and the message types are loaded,
    with bytecode cached (a pycache in a temporary directory, as an installed package has)."""
    code = ("import time, pi_core.ai.types, dataclasses, re, pathlib; t=time.perf_counter(); "
            "import pi_core.runtime.settings, pi_core.runtime.resources, pi_core.runtime.system_prompt; "
            "print(time.perf_counter()-t)")
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        run = [sys.executable, "-c", code]
        subprocess.run(run, check=True, capture_output=True, env=env)  # writes the bytecode
        out = [float(subprocess.run(run, check=True, capture_output=True, text=True, env=env).stdout)
               for _ in range(min(runs, 15))]
    return statistics.median(out) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--skills", type=int, default=100)
    args = parser.parse_args()
    from pi_core import (SystemPromptOptions, build_system_prompt, load_context_files, load_prompt_templates,
                         load_skills, Settings)

    with tempfile.TemporaryDirectory() as tmp:
        agent, cwd = make_layout(Path(tmp), args.skills)
        settings = Settings.load(cwd, agent, trusted=True)
        ctx = load_context_files(cwd, agent)
        skills = load_skills(cwd, agent, trusted=True, home=Path(tmp))
        assert len(skills) == args.skills and len(ctx) == 2, (len(skills), len(ctx))

        def prompt() -> object:
            return build_system_prompt(SystemPromptOptions(cwd=cwd, agent_dir=agent, tools=TOOLS, trusted=True,
                                                           context_files=ctx.files, skills=skills.skills))

        def everything() -> object:
            s = Settings.load(cwd, agent, trusted=True)
            c = load_context_files(cwd, agent)
            k = load_skills(cwd, agent, trusted=True, extra_paths=s.skill_paths(), home=Path(tmp))
            load_prompt_templates(cwd, agent, trusted=True, extra_paths=s.prompt_paths())
            return build_system_prompt(SystemPromptOptions(cwd=cwd, agent_dir=agent, tools=TOOLS, trusted=True,
                                                           context_files=c.files, skills=k.skills))

        rows = [
            ("import settings + resources + system_prompt (after pydantic), fresh process", import_cost(args.runs)),
            ("Settings.load (both files)",
             median_ms(lambda: Settings.load(cwd, agent, trusted=True), args.runs, warm=True)),
            ("load_context_files (cwd 5 levels deep)",
             median_ms(lambda: load_context_files(cwd, agent), args.runs, warm=True)),
            (f"load_skills ({args.skills} skills)",
             median_ms(lambda: load_skills(cwd, agent, trusted=True, home=Path(tmp)), args.runs, warm=True)),
            ("load_prompt_templates (30 templates)",
             median_ms(lambda: load_prompt_templates(cwd, agent, trusted=True), args.runs, warm=True)),
            (f"build_system_prompt ({args.skills} skills, 2 context files)",
             median_ms(prompt, args.runs, warm=True)),
            ("all of the above together", median_ms(everything, args.runs, warm=True)),
        ]
        del settings
    for name, ms in rows:
        print(f"| {name} | {ms:.2f} ms |")


if __name__ == "__main__":
    main()
