"""``pi --help``: grouped as pi 1.6 groups it (usage, commands, options, examples, environment, tools).

The options table is the one place a run option is described; a test checks that every option the
``run`` command accepts is in it, so the help cannot fall behind the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .extensions.manager import PluginHost

USAGE = "pi [options] [--] [@files...] [messages...]"

#: (option as shown, description); a description line starting with "\n" continues the one above.
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--provider <name>", "Provider to look the --model up in"),
    ("--model <pattern>", 'Model id or pattern ("provider/id", fuzzy, optional ":<thinking>")'),
    ("--models <patterns>", "Comma-separated model patterns for start-up and model cycling\n"
                            "(globs such as anthropic/* or *sonnet*, fuzzy names, :<thinking>)"),
    ("--api-key <key>", "API key for this run only (default: auth.json, environment)"),
    ("--system-prompt <text|file>", "Replace the system prompt's preamble"),
    ("--append-system-prompt <text|file>", "Append text or a file to the system prompt (repeatable)"),
    ("--mode <mode>", "Output: text (default), json (every event as a line) or rpc"),
    ("--print, -p", "Run the prompts, print the final answer, exit"),
    ("--continue, -c", "Continue the most recent session of this directory"),
    ("--resume, -r", "Choose a session to resume"),
    ("--session <path|id>", "Open a session by file path or full/partial id"),
    ("--session-id <id>", "Open this directory's session with that id, or start one with it"),
    ("--fork <path|id>", "Copy a session (file path or full/partial id) into a new one here"),
    ("--session-dir <dir>", "Where sessions are stored and looked up"),
    ("--no-session", "Keep the session in memory only"),
    ("--name, -n <name>", "Name the session"),
    ("--tools, -t <tools>", "Comma-separated tool names or * patterns to enable (replaces the defaults);\n"
                            "a list of only +name/-name entries edits the defaults instead"),
    ("--exclude-tools, -xt <tools>", "Comma-separated tool names or * patterns to disable (applied last)"),
    ("--no-tools, -nt", "Start with no tools at all (built-in and plugin)"),
    ("--no-builtin-tools, -nbt", "Start without the built-in tools; tools of plugins stay"),
    ("--toolset <name>", "A named tool set: default, readonly, all, or one a plugin registers"),
    ("--thinking <level>", "Thinking level: off, minimal, low, medium, high, xhigh, max"),
    ("--extension, -e <path|source>", "Load a plugin file, a package (dir, pypi:NAME, git URL) for this run, or builtin:<name> (repeatable)"),
    ("--no-extensions, -ne", "Do not discover extension files (global, project, settings); -e still loads"),
    ("--no-plugins", "Do not load pip-installed plugins"),
    ("--skill <path>", "Load a skill file or directory (repeatable)"),
    ("--no-skills, -ns", "No discovered or configured skills (--skill paths still load)"),
    ("--prompt-template <path>", "Load a prompt template file or directory (repeatable)"),
    ("--no-prompt-templates, -np", "No discovered or configured prompt templates (--prompt-template still loads)"),
    ("--no-context-files, -nc", "Do not load AGENTS.md / CLAUDE.md files"),
    ("--export <file> [output]", "Write a session file as HTML and exit"),
    ("--list-models [search]", "List the models you can use (optionally fuzzy-filtered) and exit"),
    ("--tui-mode <mode>", "Terminal mode: regular (the only one here; pi's fullscreen is refused)"),
    ("--verbose", "Full start-up information in the terminal (overrides quietStartup)"),
    ("--theme <path>", "Load a theme file or directory (repeatable; a value that is no file names a theme)"),
    ("--use-theme <name>", "Terminal theme for this run: dark, light, system, a theme name, light/dark"),
    ("--no-themes", "No discovered or configured themes (--theme paths still load)"),
    ("--approve, -a", "Trust this project's .pi/ files for this run"),
    ("--no-approve, -na", "Ignore this project's trust-gated .pi/ files for this run"),
    ("--offline", "Make no start-up network requests (no model-list refresh; sets PI_OFFLINE)"),
    ("--", "End of options: what follows is messages and @files"),
    ("--help, -h", "Show this help"),
    ("--version, -v", "Show the version"),
)

COMMANDS: tuple[tuple[str, str], ...] = (
    ("pi install <source...> [-l] [-e]", "Install packages (PyPI, git, path) and record them; none: the missing ones"),
    ("pi remove <source...> [-l]", "Uninstall packages and drop them from settings"),
    ("pi uninstall <source...> [-l]", "Same as remove"),
    ("pi list [--json]", "Packages of the user and the project, what they contribute, what is missing"),
    ("pi update [--extensions|--all|<source>]", "Update pi, all packages, or one (pins stay)"),
    ("pi config [enable|disable <source> <resource...>] [-l]", "Which package resources load"),
    ("pi plugin new <name> [dir]", "Write a plugin package skeleton (tool, hook, skill, tests, CI)"),
    ("pi plugins [--json] | doctor", "What is loaded and what it registered; explain failures"),
    ("pi trust [--no|--forget] [dir]", "Remember whether a project's .pi/ files may run"),
)

EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Start the terminal interface", "pi"),
    ("Start with a first prompt", 'pi "List the Python files under src/"'),
    ("Put files into the first message", 'pi @notes.md @screenshot.png "What is wrong here?"'),
    ("Answer once and exit", 'pi -p "Summarise README.md"'),
    ("Feed text on stdin", 'git diff | pi -p "Review this change"'),
    ("A prompt that starts with a dash", 'pi -p -- "- check the list above"'),
    ("Continue the last session of this directory", 'pi -c "And the tests?"'),
    ("Pick a model, with a thinking level", 'pi --model openai/gpt-4o-mini:high "Refactor utils.py"'),
    ("Cycle between a few models", "pi --models 'claude-sonnet*,gpt-4o'"),
    ("Read-only tools", 'pi --tools read,grep,find,ls -p "Review src/"'),
    ("Add a tool to the defaults, drop another", "pi --tools +grep,-write"),
    ("Every event as JSON lines", 'pi --mode json "Fix the failing test" > events.jsonl'),
    ("Render a session as HTML", "pi --export session.jsonl session.html"),
)

ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("PI_CODING_AGENT_DIR", "Agent directory (default ~/.pi/agent)"),
    ("PI_CODING_AGENT_SESSION_DIR", "Session directory (--session-dir wins)"),
    ("PI_OFFLINE", "No start-up network requests: model lists are not refreshed"),
    ("PI_SHELL", "Shell for the bash tool when the shellPath setting is unset"),
    ("PI_SELF_UPDATE_COMMAND", "Command `pi update` runs to update pi itself ({packageName}, {version}, {installSpec})"),
    ("PI_BASH_TIMEOUT, PI_BASH_MAX_TIMEOUT", "bash tool default / maximum timeout in seconds"),
    ("PI_STRICT_PLUGINS", "1: a plugin that fails to load stops pi"),
    ("PI_DISABLE_PLUGINS", "Comma-separated plugin names not to load"),
    ("PI_DISABLE_PLUGIN_AUTOLOAD", "1: do not load pip-installed plugins"),
    ("HTTP_PROXY, HTTPS_PROXY", "Proxy for provider requests"),
)


def _rows(rows: tuple[tuple[str, str], ...] | list[tuple[str, str]], width: int | None = None,
          sep: str = "  ") -> list[str]:
    width = width or max(len(left) for left, _ in rows)
    lines = []
    for left, right in rows:
        first, *more = right.split("\n")
        lines.append(f"  {left.ljust(width)}{sep}{first}".rstrip())
        lines.extend(f"  {' ' * width}{sep}{line}" for line in more)
    return lines


def _provider_variables(host: PluginHost) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for provider in host.providers:
        for variable in provider.env_vars():
            seen.setdefault(variable, f"Credentials for {provider.name}")
    return sorted(seen.items())


def _builtin_tools(host: PluginHost) -> list[tuple[str, str]]:
    rows = []
    defaults = ("read", "bash", "edit", "write")
    ordered = sorted(host.tools.entries.items(), key=lambda item: (item[0] not in defaults,
                                                                   defaults.index(item[0]) if item[0] in defaults else 0))
    for name, registered in ordered:
        record = host.records.get(registered.plugin)
        if record is None or record.source != "builtin":
            continue
        tool = registered.item
        text = tool.prompt_snippet or tool.description.split(". ")[0]
        default = "" if name in defaults else " (off by default)"
        rows.append((name, f"{text}{default}"))
    return rows


def render_help(host: PluginHost) -> str:
    """The whole ``pi --help`` text, including what the loaded plugins add."""
    lines = ["pi - a coding agent with read, bash, edit and write tools (pi for Python)", "",
             "Usage:", f"  {USAGE}", "", "Commands:"]
    commands = list(COMMANDS)
    for registered in host.cli_commands.entries.values():
        command = registered.item
        commands.append((f"pi {command.name}", f"{command.help or ''} (plugin {registered.plugin})".strip()))
    commands.append(("pi <command> --help", "Options of one command"))
    lines += _rows(commands)
    lines += ["", "Options:", *_rows(OPTIONS)]
    flags = [(f"--{r.item.name}{' <value>' if r.item.type is str else ''}",
              f"{r.item.help or ''} (plugin flag from {r.plugin})".strip()) for r in host.flags.entries.values()]
    if flags:
        lines += ["", "Plugin flags:", *_rows(flags)]
    else:
        lines += ["", "Plugins can add more long options (shown here when loaded)."]
    lines += ["", "Examples:"]
    for title, command in EXAMPLES:
        lines += [f"  # {title}", f"  {command}", ""]
    lines += ["Environment Variables:", *_rows([*_provider_variables(host), *ENVIRONMENT], sep=" - ")]
    tools = _builtin_tools(host)
    if tools:
        lines += ["", "Built-in Tool Names:", *_rows(tools, sep=" - ")]
    return "\n".join(lines) + "\n"


def option_names() -> set[str]:
    """Every option spelling the table documents (``--tools``, ``-t``, ...)."""
    names: set[str] = set()
    for shown, _ in OPTIONS:
        for part in shown.split(","):
            word = part.strip().split(" ")[0]
            if word.startswith("-"):
                names.add(word)
    return names


__all__ = ["OPTIONS", "USAGE", "option_names", "render_help"]
