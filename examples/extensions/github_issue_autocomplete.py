"""Port of pi's ``github-issue-autocomplete`` example: ``#...`` in the editor completes the repository's open
GitHub issues (``ctx.ui.add_autocomplete_provider``), loaded once per session with the GitHub CLI
(``gh issue list``) and filtered locally (by number, else fuzzily by number and title).

Needs ``gh`` and a checkout whose remote is on github.com; anything else is left to pi's own completion.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from pi_core import ExtensionContext, hookimpl
from pi_core.tui import (
    AppliedCompletion,
    AutocompleteItem,
    AutocompleteOptions,
    AutocompleteProvider,
    AutocompleteSuggestions,
    fuzzy_filter,
)

MAX_ISSUES = 100
MAX_SUGGESTIONS = 20
_TOKEN = re.compile(r"(?:^|[ \t])#([^\s#]*)$")
_SSH = re.compile(r"^git@github\.com:([^/]+/[^/]+?)(?:\.git)?$")
_HTTPS = re.compile(r"^https?://github\.com/([^/]+/[^/]+?)(?:\.git)?$")


def extract_issue_token(before_cursor: str) -> str | None:
    match = _TOKEN.search(before_cursor)
    return match.group(1) if match else None


def parse_github_repo(remote_url: str) -> str | None:
    match = _SSH.match(remote_url) or _HTTPS.match(remote_url)
    return match.group(1) if match else None


async def resolve_github_repo(ctx: ExtensionContext) -> tuple[str | None, str]:
    result = await ctx.exec("git", ["remote", "-v"], cwd=ctx.cwd, timeout=5)
    if result.exit_code != 0:
        return None, "github-issue-autocomplete: cwd is not a git repository"
    for line in result.stdout.splitlines():
        columns = line.split()
        repo = parse_github_repo(columns[1]) if len(columns) > 1 else None
        if repo:
            return repo, ""
    return None, "github-issue-autocomplete: cwd is not a GitHub repository"


def format_issue(issue: dict[str, Any]) -> AutocompleteItem:
    return AutocompleteItem(value=f"#{issue['number']}", label=f"#{issue['number']}",
                            description=f"[{str(issue.get('state', '')).lower()}] {issue.get('title', '')}")


def filter_issues(issues: list[dict[str, Any]], query: str) -> list[AutocompleteItem]:
    if not query.strip():
        return [format_issue(i) for i in issues[:MAX_SUGGESTIONS]]
    if query.isdigit():
        numeric = [format_issue(i) for i in issues if str(i["number"]).startswith(query)][:MAX_SUGGESTIONS]
        if numeric:
            return numeric
    matches = fuzzy_filter(issues, query, lambda i: f"{i['number']} {i.get('title', '')}")
    return [format_issue(i) for i in matches[:MAX_SUGGESTIONS]]


class IssueProvider:
    trigger_characters = ["#"]

    def __init__(self, current: AutocompleteProvider, issues: Any) -> None:
        self.current = current
        self.issues = issues  # async () -> list of issues or None

    async def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                              options: AutocompleteOptions) -> Any:
        before = (lines[cursor_line] if cursor_line < len(lines) else "")[:cursor_col]
        token = extract_issue_token(before)
        if token is not None:
            issues = await self.issues()
            suggestions = filter_issues(issues, token) if issues and not options.signal.aborted else []
            if suggestions:
                return AutocompleteSuggestions(items=suggestions, prefix=f"#{token}")
        return await _maybe(self.current.get_suggestions(lines, cursor_line, cursor_col, options))

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: AutocompleteItem,
                         prefix: str) -> AppliedCompletion:
        return self.current.apply_completion(lines, cursor_line, cursor_col, item, prefix)


async def _maybe(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future) else value


@hookimpl
async def session_start(event: Any, ctx: ExtensionContext) -> None:
    repo, error = await resolve_github_repo(ctx)
    if repo is None:
        await ctx.ui.notify(error, "error")
        return
    loaded: dict[str, Any] = {}

    async def load() -> list[dict[str, Any]] | None:
        result = await ctx.exec("gh", ["issue", "list", "--repo", repo, "--state", "open", "--limit",
                                       str(MAX_ISSUES), "--json", "number,title,state"], cwd=ctx.cwd, timeout=5)
        if result.exit_code != 0:
            details = result.stderr.strip() or f"exit code {result.exit_code}"
            await ctx.ui.notify(f"github-issue-autocomplete: failed to load issues: {details}", "error")
            return None
        try:
            issues = json.loads(result.stdout)
        except ValueError:
            await ctx.ui.notify("github-issue-autocomplete: failed to parse gh issue list output", "error")
            return None
        return issues if isinstance(issues, list) else None

    async def get_issues() -> list[dict[str, Any]] | None:
        if "task" not in loaded:  # once per session, shared by every request
            loaded["task"] = asyncio.ensure_future(load())
        result: list[dict[str, Any]] | None = await asyncio.shield(loaded["task"])
        return result

    asyncio.ensure_future(get_issues())
    await ctx.ui.add_autocomplete_provider(lambda current: IssueProvider(current, get_issues))
