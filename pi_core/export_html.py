"""A session as one self-contained HTML page (``pi --export``, RPC ``export_html``, ``/export``).

The page shows the session header, then the active branch in order: user messages, answers with
their thinking and tool calls (each call together with its result and the calls it made to other tools,
``nestedCalls``), shell commands run by the user, summaries of compactions and branches, model and
thinking-level changes. Long or secondary parts (thinking, tool output, the system prompt) are collapsible
``<details>`` elements, so the page needs no JavaScript.

Messages and answers are markdown, rendered with markdown-it-py (raw HTML in them is shown as text, links
keep only pi's schemes, code blocks are highlighted by pygments); everything else is HTML-escaped text.
Colours are the theme's: its ``export`` colours for the page and cards, its tokens (``mdHeading``,
``syntaxKeyword``, ``toolSuccessBg``...) for the rest. A Content-Security-Policy keeps the page from
running scripts or loading anything: images are embedded only when their type and data are well-formed.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

    from .modes.interactive.theme import Colour, Theme

_MIME = re.compile(r"image/[a-z0-9.+-]{1,40}\Z")
OPEN_LINES = 12  # tool output up to this many lines is shown open


def export_session_html(source: Path, target: Path, *, theme: Theme | None = None) -> Path:
    """Render the session file ``source`` into ``target`` in ``theme``'s colours (``system`` when not
    given); returns the path written.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that is not a session.
    """
    from .session import SessionManager
    from .session.errors import SessionError

    source = Path(source).expanduser()
    if not source.exists():
        raise FileNotFoundError(f"no session file at {source}")
    try:
        manager = SessionManager.open(source, read_only=True)
    except SessionError as exc:
        raise ValueError(str(exc)) from exc
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{source} is not a pi session file: {exc}") from exc
    return export_manager_html(manager, target, theme=theme)


def export_manager_html(manager: Any, target: Path, *, system_prompt: str | None = None,
                        tools: list[Any] | None = None, theme: Theme | None = None) -> Path:
    """Render an open session (a ``SessionManager``, persisted or in memory) into ``target``."""
    page = render_session_html(manager.get_header().to_json(), manager.raw_entries(), manager.get_raw_branch(),
                               name=manager.get_session_name(), system_prompt=system_prompt, tools=tools,
                               theme=theme)
    return _write(Path(target).expanduser(), page)


def default_export_name(manager: Any) -> str:
    """pi's default file name: ``pi-session-<session file name>.html``."""
    file = manager.session_file
    return f"pi-session-{Path(file).stem if file else manager.session_id}.html"


def render_session_html(header: dict[str, Any], entries: list[dict[str, Any]], branch: list[dict[str, Any]], *,
                        name: str | None = None, system_prompt: str | None = None,
                        tools: list[Any] | None = None, theme: Theme | None = None) -> str:
    """The page for a session: ``entries`` are all of its entries, ``branch`` the active path; colours
    from ``theme`` (pi's ``system`` theme when not given)."""
    results = {_s(e["message"].get("toolCallId")): e["message"] for e in branch if _role(e) == "toolResult"}
    # Entries are the stored dicts, as another program may have written them: every field is checked
    # for its type before use (a wrong one shows as nothing, never an error).
    shown_results: set[str] = set()
    body = [_header(header, entries, branch, name)]
    if system_prompt or tools:
        body.append(_system_block(system_prompt, tools))
    for entry in branch:
        body.append(_entry(entry, results, shown_results))
    body.append(_footer())
    title = name or f"pi session {header.get('id', '')}"
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{theme_css(theme)}{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(part for part in body if part) + "\n</main>\n</body>\n</html>\n")


# -- page parts ------------------------------------------------------------------------------

def _header(header: dict[str, Any], entries: list[dict[str, Any]], branch: list[dict[str, Any]],
            name: str | None) -> str:
    models = sorted({f"{e.get('provider')}/{e.get('modelId')}" for e in entries if e.get("type") == "model_change"})
    messages = [e for e in branch if e.get("type") == "message"]
    rows = [("Session", header.get("id")), ("Started", header.get("timestamp")), ("Directory", header.get("cwd")),
            ("Forked from", header.get("parentSession")), ("Models", ", ".join(models) or None),
            ("Messages", f"{len(messages)} on this branch, {len(entries)} entries in the file")]
    leaves = _leaf_count(entries)
    if leaves > 1:
        rows.append(("Branches", f"{leaves} (this page shows the active one)"))
    cells = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows if v)
    return f'<header><h1>{_e(name or "pi session")}</h1><dl>{cells}</dl></header>'


def _leaf_count(entries: list[dict[str, Any]]) -> int:
    parents = {p for e in entries if isinstance(p := e.get("parentId"), str)}
    return sum(1 for e in entries if isinstance(e.get("id"), str) and e["id"] not in parents)


def _system_block(system_prompt: str | None, tools: list[Any] | None) -> str:
    parts = []
    if system_prompt:
        parts.append(_details("System prompt", f"<pre>{_e(system_prompt)}</pre>", "system"))
    if tools:
        items = "".join(f"<li><b>{_e(getattr(t, 'name', '?'))}</b> — {_e(getattr(t, 'description', ''))}</li>"
                        for t in tools)
        parts.append(_details(f"Tools ({len(tools)})", f"<ul>{items}</ul>", "system"))
    return "".join(parts)


def _footer() -> str:
    from ._version import __version__

    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<footer>Exported by pi_core {_e(__version__)} on {_e(when)}</footer>"


# -- entries ---------------------------------------------------------------------------------

def _entry(entry: dict[str, Any], results: dict[str, dict[str, Any]], shown: set[str]) -> str:
    kind = entry.get("type")
    if kind == "message":
        return _message(_d(entry.get("message")), results, shown)
    if kind == "custom_message" and entry.get("display", True):
        return _card("custom", _e(entry.get("customType") or "message"), _content(entry.get("content"), markdown=True))
    if kind == "compaction":
        summary = f"Compacted ({entry.get('tokensBefore')} tokens before)"
        return _details(summary, f"<pre>{_e(entry.get('summary'))}</pre>", "summary")
    if kind == "branch_summary":
        return _details("Summary of an abandoned branch", _markdown(entry.get("summary")), "summary")
    if kind == "model_change":
        return _note(f"Model: {entry.get('provider')}/{entry.get('modelId')}")
    if kind == "thinking_level_change":
        return _note(f"Thinking level: {entry.get('thinkingLevel')}")
    return ""


def _message(message: dict[str, Any], results: dict[str, dict[str, Any]], shown: set[str]) -> str:
    role = message.get("role")
    if role == "user":
        return _card("user", "You", _content(message.get("content"), markdown=True))
    if role == "assistant":
        return _assistant(message, results, shown)
    if role == "toolResult":
        call_id = _s(message.get("toolCallId"))
        return "" if call_id in shown else _card("tool", "Tool result", _tool_result(message)
                                                 + _nested_calls(message.get("nestedCalls")))
    if role == "bashExecution":
        return _bash(message)
    if role == "system":
        return _system_message(message)
    if role in ("custom", "compactionSummary", "branchSummary"):
        text = message.get("summary") if role != "custom" else None
        return _card("custom", _e(message.get("customType") or role),
                     _content(text or message.get("content"), markdown=True))
    return ""


def _assistant(message: dict[str, Any], results: dict[str, dict[str, Any]], shown: set[str]) -> str:
    parts = []
    for block in _l(message.get("content")):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(_markdown(block.get("text")))
        elif kind == "thinking":
            label = "Thinking (redacted)" if block.get("redacted") else "Thinking"
            parts.append(_details(label, _text(block.get("thinking")), "thinking"))
        elif kind == "toolCall":
            call_id = _s(block.get("id"))
            shown.add(call_id)
            parts.append(_tool_call(block, results.get(call_id)))
    if message.get("stopReason") in ("error", "aborted"):
        reason = message.get("errorMessage") or f"Request {message.get('stopReason')}"
        parts.append(f'<div class="error">{_e(reason)}</div>')
    meta = _usage_line(message)
    return _card("assistant", _e(message.get("model") or "Assistant"), "".join(parts), meta)


def _tool_call(block: dict[str, Any], result: dict[str, Any] | None) -> str:
    arguments = block.get("arguments")
    args_text = json.dumps(arguments, ensure_ascii=False, indent=2) if arguments is not None else ""
    body = f'<pre class="args">{_e(args_text)}</pre>'
    css = "call"
    if result is None:
        body += '<div class="note">No result recorded.</div>'
    else:
        body += _tool_result(result) + _nested_calls(result.get("nestedCalls"))
        css += " failed" if result.get("isError") else ""
    summary = f"{block.get('name')} {_argument_hint(arguments)}".strip()
    return _details(summary, body, css, open_=result is not None and _short(result))


def _tool_result(result: dict[str, Any]) -> str:
    label = "Error" if result.get("isError") else "Output"
    return f'<div class="result"><div class="label">{label}</div>{_content(result.get("content"))}</div>'


NESTED_STATUS = {"ok": "✓", "error": "✗", "unfinished": "…"}


def _nested_calls(record: Any) -> str:
    """The calls a tool made to other tools (a codemode script's ``tools.x()``), as pi's export lists them:
    a status mark, the name, the arguments as JSON (or their size when the record left them out), the
    duration, and an error's text indented beneath; results are not recorded."""
    calls = [c for c in _l(_d(record).get("calls")) if isinstance(c, dict)]
    if not calls:
        return ""
    lines = []
    for call in calls:
        arguments = call.get("arguments")
        shown = (json.dumps(arguments, ensure_ascii=False, separators=(",", ":")) if isinstance(arguments, dict)
                 else f"[arguments omitted, {call.get('argumentsBytes')} bytes]")
        duration = f" {call['durationMs']}ms" if isinstance(call.get("durationMs"), int) else ""
        line = f"{NESTED_STATUS.get(_s(call.get('status')), '?')} {_s(call.get('name'))} {shown}{duration}"
        error = call.get("error")
        if isinstance(error, str) and error:
            line += "".join(f"\n    {part}" for part in error.split("\n"))
        lines.append(line)
    title = f"Nested calls: {len(calls)}" + ("" if _d(record).get("complete") is True else " (incomplete record)")
    return _details(title, f"<pre>{_e(chr(10).join(lines))}</pre>", "nested")


def _bash(message: dict[str, Any]) -> str:
    code = message.get("exitCode")
    status = "cancelled" if message.get("cancelled") else f"exit code {code}"
    extra = " · not sent to the model" if message.get("excludeFromContext") else ""
    body = f'<pre>{_e(message.get("output"))}</pre>'
    return _card("bash", f"$ {_e(message.get('command'))}", body, f"{status}{extra}")


def _system_message(message: dict[str, Any]) -> str:
    sections = _d(message.get("sections"))
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    parts = [f"<h3>{_e(key)}</h3><pre>{_e(value)}</pre>" for key, value in sections.items()]
    if text:
        parts.insert(0, f"<pre>{_e(text)}</pre>")
    return _details("System prompt", "".join(parts) or "<pre></pre>", "system")


# -- content blocks --------------------------------------------------------------------------

def _content(content: Any, *, markdown: bool = False) -> str:
    as_html = _markdown if markdown else _text
    if isinstance(content, str):
        return as_html(content)
    parts = []
    for block in _l(content):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(as_html(block.get("text")))
        elif block.get("type") == "image":
            parts.append(_image(block))
    return "".join(parts)


def _image(block: dict[str, Any]) -> str:
    mime, data = _s(block.get("mimeType")), block.get("data")
    if not _MIME.match(mime) or not isinstance(data, str) or not _is_base64(data):
        return f'<div class="note">[image omitted: {_e(mime or "unknown type")}]</div>'
    return f'<img alt="attached image" src="data:{mime};base64,{data}">'


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _text(text: Any) -> str:
    return f'<div class="text">{_e(text)}</div>' if text else ""


# -- markdown --------------------------------------------------------------------------------

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
LINK_SCHEMES = frozenset({"http", "https", "mailto", "tel", "ftp"})
"""The schemes a link may have (pi's list); links without a scheme (``#x``, ``docs/a.md``) stay too."""
_LANGUAGE = re.compile(r"[\w+#.-]{1,40}")


def _markdown(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        return ""
    return f'<div class="md">{_parser().render(text)}</div>'


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """CommonMark with tables and strikethrough, line breaks kept as pi's export keeps them, and raw HTML
    shown as text (``html`` off), as pi's terminal shows it."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
    parser.validateLink = _link_allowed  # type: ignore[method-assign]
    parser.add_render_rule("fence", _render_fence)
    parser.add_render_rule("code_block", _render_fence)
    parser.add_render_rule("image", _render_image)
    parser.add_render_rule("link_open", _render_link_open)
    return parser


def _link_allowed(url: str) -> bool:
    scheme = _SCHEME.match(url.strip())
    return scheme is None or scheme.group(1).lower() in LINK_SCHEMES


def _render_fence(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    words = token.info.split() if token.info else []
    language = words[0] if words and _LANGUAGE.fullmatch(words[0]) else None
    css = f' class="language-{_e(language)}"' if language else ""
    return f'<pre class="code"><code{css}>{highlight_html(token.content, language)}</code></pre>\n'


def _render_image(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # a link, not an <img>: the page loads nothing (the address passed the link check already)
    token = tokens[idx]
    source = _s(token.attrGet("src"))
    alt = renderer.renderInlineAsText(token.children or [], options, env) or source
    return f'<a class="md-image" href="{_e(source)}">[image: {_e(alt)}]</a>'


def _render_link_open(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return str(renderer.renderToken(tokens, idx, options, env))


def highlight_html(code: str, language: str | None) -> str:
    """``code`` as escaped HTML, its pieces in ``<span class="syntax...">`` by the theme's syntax tokens
    (pygments, as the terminal highlights); plain when no lexer knows ``language``."""
    from .modes.interactive.highlight import highlight_tokens

    pieces = highlight_tokens(code, language=language)
    if pieces is None:
        return _e(code)
    runs: list[tuple[str | None, str]] = []
    for style, text in pieces:  # one span for a run of one style (a string is many pygments tokens)
        if runs and runs[-1][0] == style:
            runs[-1] = (style, runs[-1][1] + text)
        else:
            runs.append((style, text))
    return "".join(f'<span class="{style}">{_e(text)}</span>' if style else _e(text) for style, text in runs)


# -- colours ---------------------------------------------------------------------------------

_ANSI = ("000000", "800000", "008000", "808000", "000080", "800080", "008080", "c0c0c0",
         "808080", "ff0000", "00ff00", "ffff00", "0000ff", "ff00ff", "00ffff", "ffffff")
"""The 16 ANSI colours as xterm draws them by default: an HTML page cannot know the terminal's."""
_CUBE = (0, 95, 135, 175, 215, 255)
DEFAULT_TEXT = {"dark": "#e5e5e7", "light": "#1d1d1f"}
"""The text colour of a theme that leaves ``text`` to the terminal (``""``, as ``system`` does)."""
FALLBACK_PAGE = ("#18181e", "#1e1e24", "#3c3728")
"""Page, card and info backgrounds when the theme has neither ``export`` colours nor a ``userMessageBg``."""


def theme_css(theme: Theme | None) -> str:
    """A ``:root`` rule with every theme token as a CSS variable (``--mdHeading``...) and the page
    colours as ``--pageBg``, ``--cardBg`` and ``--infoBg``."""
    from .modes.interactive.theme import BG_TOKENS, TOKENS, builtin_theme

    theme = theme or builtin_theme("system", colour=False)
    text = _hex(theme.colors.get("text")) or DEFAULT_TEXT.get(theme.appearance, DEFAULT_TEXT["dark"])
    values = {"text": text}
    for token in TOKENS:
        if token != "text":
            values[token] = _hex(theme.colors.get(token)) or ("transparent" if token in BG_TOKENS else text)
    page, card, info = export_colours(theme)
    values.update(pageBg=page, cardBg=card, infoBg=info)
    return ":root{" + ";".join(f"--{name}:{value}" for name, value in values.items()) + "}\n"


def export_colours(theme: Theme) -> tuple[str, str, str]:
    """The page, card and info backgrounds: the theme's ``export`` section, else (each one missing)
    derived from its ``userMessageBg`` as pi derives them — darker page and cards for a dark colour, a
    slightly darker page for a light one, a warmer shade for notes."""
    derived = _derived_backgrounds(_rgb(theme.colors.get("userMessageBg")))
    given = [_hex(theme.export.get(key)) for key in ("pageBg", "cardBg", "infoBg")]
    page, card, info = (value or fallback for value, fallback in zip(given, derived, strict=True))
    return page, card, info


def _derived_backgrounds(base: tuple[int, int, int] | None) -> tuple[str, str, str]:
    if base is None:
        return FALLBACK_PAGE
    r, g, b = base
    if _luminance(base) > 0.5:
        return _scaled(base, 0.96), _rgb_hex(base), _rgb_hex((min(255, r + 10), min(255, g + 5), max(0, b - 20)))
    return _scaled(base, 0.7), _scaled(base, 0.85), _rgb_hex((min(255, r + 20), min(255, g + 15), b))


def _luminance(rgb: tuple[int, int, int]) -> float:
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _scaled(rgb: tuple[int, int, int], factor: float) -> str:
    r, g, b = (max(0, min(255, round(c * factor))) for c in rgb)
    return _rgb_hex((r, g, b))


def _rgb(colour: Colour) -> tuple[int, int, int] | None:
    if isinstance(colour, tuple):
        return colour
    if not isinstance(colour, int) or isinstance(colour, bool) or not 0 <= colour <= 255:
        return None
    if colour < 16:
        digits = _ANSI[colour]
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    if colour < 232:
        index = colour - 16
        return _CUBE[index // 36], _CUBE[index // 6 % 6], _CUBE[index % 6]
    grey = 8 + (colour - 232) * 10
    return grey, grey, grey


def _hex(colour: Colour) -> str | None:
    rgb = _rgb(colour)
    return _rgb_hex(rgb) if rgb is not None else None


def _rgb_hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


# -- small helpers ---------------------------------------------------------------------------

def _card(css: str, title: str, body: str, meta: str = "") -> str:
    meta_html = f'<span class="meta">{_e(meta)}</span>' if meta else ""
    return f'<section class="msg {css}"><div class="who">{title}{meta_html}</div>{body}</section>'


def _details(summary: str, body: str, css: str, *, open_: bool = False) -> str:
    return (f'<details class="{css}"{" open" if open_ else ""}><summary>{_e(summary)}</summary>'
            f"{body}</details>")


def _note(text: str) -> str:
    return f'<div class="change">{_e(text)}</div>'


def _usage_line(message: dict[str, Any]) -> str:
    usage = _d(message.get("usage"))
    if not usage:
        return ""
    cost = _d(usage.get("cost")).get("total")
    line = f"{usage.get('input', 0)} in · {usage.get('output', 0)} out"
    return line + (f" · ${cost:.4f}" if isinstance(cost, (int, float)) and cost else "")


def _argument_hint(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return ""
    for key in ("path", "command", "pattern", "file_path"):
        if isinstance(arguments.get(key), str):
            value = arguments[key].splitlines()[0] if arguments[key] else ""
            return value if len(value) <= 80 else value[:77] + "..."
    return ""


def _short(result: dict[str, Any]) -> bool:
    text = "".join(b["text"] for b in _l(result.get("content")) if isinstance(b, dict) and isinstance(b.get("text"), str))
    return text.count("\n") < OPEN_LINES


def _role(entry: dict[str, Any]) -> Any:
    return _d(entry.get("message")).get("role") if entry.get("type") == "message" else None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _write(target: Path, page: str) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(page)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target.resolve()


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
"""No scripts, no fetches: only the page's own styles and embedded (``data:``) images."""

CSS = """
*{box-sizing:border-box}body{margin:0;background:var(--pageBg);color:var(--text);
font:14px/1.55 ui-monospace,"Cascadia Code","Source Code Pro",Menlo,Consolas,"DejaVu Sans Mono",monospace}
main{max-width:960px;margin:0 auto;padding:24px 16px 48px}
header h1{font-size:20px;margin:0 0 8px;color:var(--accent)}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0 0 24px;color:var(--muted);
font-size:12px}header dt{font-weight:600}header dd{margin:0;word-break:break-all}
.msg{background:var(--cardBg);border:1px solid var(--borderMuted);border-radius:6px;padding:10px 14px;
margin:10px 0}
.msg.user{background:var(--userMessageBg);color:var(--userMessageText)}
.msg.custom{background:var(--customMessageBg);color:var(--customMessageText)}
.msg.custom .who{color:var(--customMessageLabel)}
.msg.bash .who{color:var(--bashMode)}
.who{font-weight:600;font-size:12px;color:var(--accent);margin-bottom:4px;display:flex;gap:12px;
justify-content:space-between}.meta{font-weight:400;color:var(--dim)}
.text{white-space:pre-wrap;word-wrap:break-word}
pre{white-space:pre-wrap;word-wrap:break-word;font-family:inherit;font-size:13px;line-height:1.45;
background:var(--pageBg);color:var(--toolOutput);border-radius:4px;padding:8px 10px;margin:6px 0;
max-height:600px;overflow:auto}
details{border:1px solid var(--borderMuted);border-radius:4px;margin:6px 0;padding:4px 10px;
background:var(--toolPendingBg)}
details>summary{cursor:pointer;color:var(--muted)}
details.call{background:var(--toolSuccessBg)}details.call>summary{color:var(--toolTitle);font-weight:600}
details.failed{background:var(--toolErrorBg);border-color:var(--error)}
details.thinking{background:transparent}details.thinking .text{color:var(--thinkingText);font-style:italic}
details.summary{background:var(--infoBg)}details.system{background:var(--cardBg)}
details.nested{background:transparent}details.nested>summary{color:var(--dim)}
.result .text{color:var(--toolOutput)}
.result .label{font-size:12px;color:var(--muted);margin-top:6px}details.failed .label{color:var(--error)}
.error{color:var(--error);margin-top:6px;white-space:pre-wrap}.note{color:var(--dim);font-size:12px}
.change{color:var(--dim);font-size:12px;text-align:center;margin:6px 0}
img{max-width:100%;border-radius:4px;margin:6px 0}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}.md p{margin:.5em 0}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{color:var(--mdHeading);margin:.8em 0 .4em;line-height:1.3}
.md h1{font-size:1.3em}.md h2{font-size:1.2em}.md h3{font-size:1.1em}.md h4,.md h5,.md h6{font-size:1em}
.md a{color:var(--mdLink)}.md a.md-image{color:var(--mdLinkUrl)}
.md code{color:var(--mdCode)}
.md pre.code{background:var(--pageBg);border:1px solid var(--mdCodeBlockBorder);color:var(--mdCodeBlock)}
.md pre.code code{color:inherit}
.md blockquote{margin:.5em 0;padding:0 0 0 12px;border-left:3px solid var(--mdQuoteBorder);color:var(--mdQuote)}
.md hr{border:0;border-top:1px solid var(--mdHr);margin:1em 0}
.md ul,.md ol{margin:.4em 0;padding-left:1.6em}.md li::marker{color:var(--mdListBullet)}
.md table{border-collapse:collapse;margin:.6em 0}.md th,.md td{border:1px solid var(--borderMuted);
padding:3px 8px;text-align:left}.md th{color:var(--mdHeading)}
.syntaxComment{color:var(--syntaxComment);font-style:italic}.syntaxKeyword{color:var(--syntaxKeyword)}
.syntaxFunction{color:var(--syntaxFunction)}.syntaxVariable{color:var(--syntaxVariable)}
.syntaxString{color:var(--syntaxString)}.syntaxNumber{color:var(--syntaxNumber)}
.syntaxType{color:var(--syntaxType)}.syntaxOperator{color:var(--syntaxOperator)}
.syntaxPunctuation{color:var(--syntaxPunctuation)}.toolDiffAdded{color:var(--toolDiffAdded)}
.toolDiffRemoved{color:var(--toolDiffRemoved)}.mdHeading{color:var(--mdHeading)}
footer{color:var(--dim);font-size:12px;margin-top:32px;text-align:center}
"""

__all__ = ["default_export_name", "export_colours", "export_manager_html", "export_session_html", "highlight_html",
           "render_session_html", "theme_css"]
