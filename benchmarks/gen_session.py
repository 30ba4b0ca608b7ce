"""Generate realistic pi session files for the benchmarks.

    python benchmarks/gen_session.py OUT.jsonl --entries 100000 [--seed 3] [--linear]
    python benchmarks/gen_session.py OUT_DIR --files 1000          # a folder of sessions for listing

The default shape is what weeks of use leave behind: a system message with seven tools, user turns,
assistant turns with tool calls, usage and (30 %) signed thinking, tool results of very different sizes
(mostly a few hundred bytes, now and then tens of kilobytes), model and thinking-level changes, plugin
state, labels, a session name, abandoned branches (the conversation went back a few entries, a
``branch_summary`` records what was left), context edits hiding a failed answer, and a compaction every
``--compaction-every`` entries that keeps the most recent ~``--keep`` entries. The leaf (the last line)
is the end of the main branch, as pi leaves it.

``--linear`` writes the older shape of ``bench_session.py``: one branch, no compaction, so the whole file
is in the model's context (the hardest case for opening and for the first request).

Everything is deterministic for a seed. Lines are written as pi writes them (``JSON.stringify``).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WORDS = ("the of and to in is that it for on are as with be this have from or one had by word but "
         "not what all were when your can said there use an each which she do how their if will up "
         "other about out many then them these so some would make like into time has look two more "
         "write go see number no way could people my than first water been call who its now find").split()
TOOLS = ("read", "bash", "edit", "write", "grep", "find", "ls")


def prose(rng: random.Random, n: int) -> str:
    words = []
    size = 0
    while size < n:
        word = rng.choice(WORDS)
        words.append(word + ("\n" if rng.random() < 0.06 else ""))
        size += len(word) + 1
    return " ".join(words)


def code(rng: random.Random, n: int) -> str:
    lines, size = [], 0
    while size < n:
        indent = "    " * rng.randint(0, 3)
        line = f"{indent}def {rng.choice(WORDS)}_{rng.randint(0, 99)}(x, y):  # {rng.choice(WORDS)} é"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def usage(rng: random.Random) -> dict[str, Any]:
    i, o = rng.randint(1_000, 150_000), rng.randint(5, 2_000)
    return {"input": i, "output": o, "cacheRead": rng.randint(0, i), "cacheWrite": 0, "reasoning": 0,
            "totalTokens": i + o, "cost": {"input": i * 3e-6, "output": o * 1.5e-5, "cacheRead": 0,
                                           "cacheWrite": 0, "total": i * 3e-6 + o * 1.5e-5,
                                           "totalFromProvider": False}}


def system_message(ts: int) -> dict[str, Any]:
    tools = [{"name": n, "description": prose(random.Random(n), 300),
              "parameters": {"type": "object", "required": ["path"],
                             "properties": {"path": {"type": "string", "description": "file"}}}}
             for n in TOOLS]
    return {"role": "system", "content": "", "sections": {"preamble": prose(random.Random(1), 2000),
                                                          "tools": "tools", "cwd": "/home/user/p"},
            "timestamp": ts, "toolsAdded": tools}


def user_message(rng: random.Random, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": prose(rng, rng.randint(20, 600))}],
            "timestamp": ts}


def assistant_message(rng: random.Random, ts: int, call_id: str, *, error: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if rng.random() < 0.3:
        content.append({"type": "thinking", "thinking": prose(rng, rng.randint(50, 400)),
                        "thinkingSignature": os.urandom(rng.randint(100, 300)).hex()})
    if rng.random() < 0.5:
        content.append({"type": "text", "text": prose(rng, rng.randint(20, 300))})
    message: dict[str, Any] = {"role": "assistant", "content": content, "api": "anthropic-messages",
                               "provider": "anthropic", "model": "claude-sonnet-4-5"}
    if error:
        message.update(usage=usage(rng), stopReason="error", errorMessage="overloaded_error: Overloaded",
                       timestamp=ts)
        return message
    content.append({"type": "toolCall", "id": call_id, "name": rng.choice(["read", "bash", "edit", "write"]),
                    "arguments": {"path": f"src/{rng.choice(WORDS)}.py",
                                  "oldText": code(rng, rng.randint(0, 160)),
                                  "newText": code(rng, rng.randint(0, 160))}})
    message.update(usage=usage(rng), stopReason="toolUse", timestamp=ts,
                   responseId=f"msg_{rng.getrandbits(64):x}", durationMs=rng.randint(300, 9_000))
    return message


def result_size(rng: random.Random) -> int:
    if rng.random() < 0.02:
        return rng.randint(5_000, 30_000)  # a whole file or a long build log
    return int(rng.expovariate(1 / 700))


def tool_result(rng: random.Random, ts: int, call_id: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
            "content": [{"type": "text", "text": code(rng, result_size(rng))}],
            "isError": rng.random() < 0.05, "durationMs": rng.randint(1, 900), "timestamp": ts}


class Writer:
    """Appends entries, tracking the leaf, the ids and the clock."""

    def __init__(self, out: Any, rng: random.Random, ms: int) -> None:
        self.out, self.rng, self.ms = out, rng, ms
        self.count = 0
        self.leaf: str | None = None
        self.main: list[str] = []  # ids on the current branch, oldest first
        self.pending_call: str | None = None
        self.starts: set[str] = set()  # user and assistant messages: where a kept part may begin

    def entry(self, kind: str, **fields: Any) -> str:
        from pi_core.session.ids import iso_from_ms
        from pi_core.session.jsonfmt import dumps

        self.ms += self.rng.randint(5, 3_000)
        entry_id = f"{self.count:08x}"
        self.count += 1
        record = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso_from_ms(self.ms),
                  **fields}
        self.out.write(dumps(record) + "\n")
        self.leaf = entry_id
        self.main.append(entry_id)
        return entry_id

    def message(self, message: dict[str, Any]) -> str:
        return self.entry("message", message=message)

    def turn(self) -> None:
        """The next entry of an ordinary conversation: user, then assistant/toolResult pairs."""
        rng, ms = self.rng, self.ms
        if self.pending_call is not None:
            call, self.pending_call = self.pending_call, None
            self.message(tool_result(rng, ms, call))
        elif self.count % 40 == 1:
            self.starts.add(self.message(user_message(rng, ms)))
        else:
            self.pending_call = f"call_{rng.getrandbits(64):016x}"
            self.starts.add(self.message(assistant_message(rng, ms, self.pending_call)))

    def go_back(self, steps: int) -> None:
        """Abandon the last ``steps`` entries: the next entry is a branch summary at the earlier point."""
        from_id = self.leaf
        self.main = self.main[:-steps]
        self.leaf = self.main[-1]
        self.pending_call = None
        self.entry("branch_summary", fromId=from_id, summary=prose(self.rng, 400))


def generate(path: Path, entries: int, seed: int = 3, *, linear: bool = False,
             compaction_every: int = 800, keep: int = 80) -> None:
    """Write a session of about ``entries`` entries (header excluded) to ``path``."""
    if linear:
        _generate_linear(path, entries, seed)
        return
    rng = random.Random(seed)
    from pi_core.session.ids import iso_from_ms
    from pi_core.session.jsonfmt import dumps

    ms = 1_790_000_000_000
    header = {"type": "session", "version": 3, "id": f"01a20000-0000-7000-8000-{seed:012d}",
              "timestamp": iso_from_ms(ms), "cwd": "/home/user/project"}
    with open(path, "w", encoding="utf-8") as out:
        out.write(dumps(header) + "\n")
        w = Writer(out, rng, ms)
        w.message(system_message(w.ms))
        w.entry("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
        w.entry("thinking_level_change", thinkingLevel="medium")
        compactions = 0
        while w.count < entries:
            n = w.count
            due = n // compaction_every > compactions
            if due and len(w.main) > keep and w.pending_call is None:
                compactions += 1
                first_kept = next(i for i in w.main[-keep:] if i in w.starts)  # never a lone tool result
                w.entry("compaction", summary=prose(rng, 3_000), firstKeptEntryId=first_kept,
                        tokensBefore=rng.randint(150_000, 190_000),
                        details={"readFiles": [f"src/{x}.py" for x in rng.sample(WORDS, 8)],
                                 "modifiedFiles": [f"src/{x}.py" for x in rng.sample(WORDS, 3)]},
                        systemMessage=system_message(w.ms))
            elif due:
                w.turn()  # finish the tool call first
            elif n % 2_503 == 0 and len(w.main) > 20 and w.pending_call is None:
                for _ in range(rng.randint(4, 12)):  # a branch that will be abandoned
                    w.turn()
                if w.pending_call is not None:
                    w.turn()
                w.go_back(rng.randint(4, 12))
            elif n % 1_499 == 0 and w.pending_call is None:
                failed = w.message(assistant_message(rng, w.ms, "", error=True))
                w.entry("context_edit", targetId=failed, replacement=None)
            elif n % 997 == 0:
                w.entry("label", targetId=w.leaf, label=f"checkpoint {n // 997}")
            elif n % 499 == 0:
                w.entry("custom", customType="plugin.state", data={"k": n, "files": rng.sample(WORDS, 4)})
            elif n % 5_003 == 0:
                w.entry("custom_message", customType="plugin.note", content=prose(rng, 200), display=True)
            elif n % 7_001 == 0:
                w.entry("session_info", name=f"refactor {rng.choice(WORDS)} module")
            elif n % 12_007 == 0:
                w.entry("thinking_level_change", thinkingLevel=rng.choice(["low", "medium", "high"]))
            else:
                w.turn()
        if w.pending_call is not None:
            w.turn()
        w.message({"role": "assistant", "content": [{"type": "text", "text": prose(rng, 200)}],
                   "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                   "usage": usage(rng), "stopReason": "stop", "timestamp": w.ms})


def _generate_linear(path: Path, entries: int, seed: int) -> None:
    """A linear session (the whole file is on the path) with a few labels and plugin entries."""
    from pi_core.session.ids import iso_from_ms
    from pi_core.session.jsonfmt import dumps

    rng = random.Random(seed)
    ms = 1_790_000_000_000
    header = {"type": "session", "version": 3, "id": "01a20000-0000-7000-8000-000000000000",
              "timestamp": iso_from_ms(ms), "cwd": "/home/user/project"}
    with open(path, "w", encoding="utf-8") as out:
        out.write(dumps(header) + "\n")
        parent = None
        for k in range(entries):
            ms += rng.randint(5, 3_000)
            entry: dict[str, Any] = {"type": "message", "id": f"{k:08x}", "parentId": parent,
                                     "timestamp": iso_from_ms(ms)}
            if k == 0:
                entry["message"] = system_message(ms)
            elif k % 997 == 0:
                entry = {**entry, "type": "label", "targetId": parent, "label": "checkpoint"}
            elif k % 499 == 0:
                entry = {"type": "custom", "customType": "plugin.state", "data": {"k": k},
                         **{x: entry[x] for x in ("id", "parentId", "timestamp")}}
            else:
                entry["message"] = _linear_message(rng, k, ms)
            out.write(dumps(entry) + "\n")
            parent = entry["id"]


def _linear_message(rng: random.Random, k: int, ts: int) -> dict[str, Any]:
    if k % 40 == 1:
        return user_message(rng, ts)
    if k % 2 == 0:
        return assistant_message(rng, ts, f"call_{rng.getrandbits(64):016x}")
    call = f"call_{rng.getrandbits(64):016x}"
    return {"role": "toolResult", "toolCallId": call, "toolName": "read",
            "content": [{"type": "text", "text": code(rng, int(rng.expovariate(1 / 1_000)))}],
            "isError": rng.random() < 0.05, "durationMs": rng.randint(1, 900), "timestamp": ts}


def generate_folder(folder: Path, files: int, seed: int = 9, cwd: str = "/home/user/project") -> int:
    """``files`` sessions of 20 to 600 entries in ``folder`` (kept if already there); total bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        path = folder / f"2026-01-01T00-00-00-000Z_{n:08d}.jsonl"
        if not path.exists():
            generate(path, rng.choice([20, 60, 200, 600]), seed=n, compaction_every=250, keep=60)
        total += path.stat().st_size
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--files", type=int, help="write a folder of this many sessions instead")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--linear", action="store_true")
    parser.add_argument("--compaction-every", type=int, default=800)
    parser.add_argument("--keep", type=int, default=80)
    args = parser.parse_args()
    if args.files:
        total = generate_folder(args.out, args.files)
        print(f"{args.files} sessions, {total / 1e6:.1f} MB in {args.out}")
        return
    generate(args.out, args.entries, args.seed, linear=args.linear,
             compaction_every=args.compaction_every, keep=args.keep)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
