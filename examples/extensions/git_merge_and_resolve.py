"""Port of pi's ``git-merge-and-resolve`` example: after each run, merge the branch's upstream; when the
merge conflicts, queue a follow-up listing each conflict block (file, lines, ours/theirs) so the agent
resolves them. An unfinished merge found later is reported the same way."""

from __future__ import annotations

from dataclasses import dataclass

from pi_core import AgentEndEvent, ExtensionContext, hookimpl


@dataclass
class ConflictBlock:
    file: str
    start_line: int
    separator_line: int
    end_line: int


async def find_conflicts(ctx: ExtensionContext) -> list[ConflictBlock]:
    listed = await ctx.exec("git", ["diff", "--name-only", "--diff-filter=U"])
    if listed.exit_code != 0 or not listed.stdout.strip():
        return []
    blocks: list[ConflictBlock] = []
    for name in listed.stdout.strip().splitlines():
        try:
            lines = (ctx.cwd / name).read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        start: int | None = None
        separator: int | None = None
        for number, line in enumerate(lines, 1):
            if line.startswith("<<<<<<<"):
                start, separator = number, None
            elif line.startswith("=======") and start is not None:
                separator = number
            elif line.startswith(">>>>>>>") and start is not None and separator is not None:
                blocks.append(ConflictBlock(name, start, separator, number))
                start = separator = None
    return blocks


def _range(start: int, end: int) -> str:
    return "empty" if start > end else str(start) if start == end else f"{start}-{end}"


def format_conflicts(ref: str, blocks: list[ConflictBlock]) -> str:
    lines = [f"Merged {ref} with conflicts:", ""]
    for b in blocks:
        ours, theirs = _range(b.start_line + 1, b.separator_line - 1), _range(b.separator_line + 1, b.end_line - 1)
        lines.append(f"  {b.file}:{b.start_line}-{b.end_line} (ours {ours}, theirs {theirs})")
    return "\n".join([*lines, "", "Resolve these conflicts."])


@hookimpl
async def agent_end(event: AgentEndEvent, ctx: ExtensionContext) -> None:
    if (await ctx.exec("git", ["rev-parse", "--git-dir"])).exit_code != 0:
        return
    ref = "MERGE_HEAD"
    if (await ctx.exec("git", ["rev-parse", "MERGE_HEAD"])).exit_code != 0:  # not in a merge: start one
        if (await ctx.exec("git", ["status", "--porcelain"])).stdout.strip():
            return  # only merge into a clean working tree
        upstream = await ctx.exec("git", ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"])
        if upstream.exit_code != 0:
            return
        ref = upstream.stdout.strip()
        remote = ref.split("/")[0]
        await ctx.ui.notify(f"git-merge-and-resolve: fetching {remote}, merging {ref}", "info")
        fetched = await ctx.exec("git", ["fetch", remote])
        if fetched.exit_code != 0:
            await ctx.ui.notify(f"git-merge-and-resolve: fetch failed: {fetched.stderr.strip()}", "warning")
            return
        if (await ctx.exec("git", ["merge", "--no-ff", ref])).exit_code == 0:
            return
    conflicts = await find_conflicts(ctx)
    if conflicts:
        ctx.send_user_message(format_conflicts(ref, conflicts), deliver_as="followUp")
