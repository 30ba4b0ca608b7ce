"""A session as one self-contained HTML page (``pi --export``, RPC ``export_html``, ``/export``).

The page shows the session header, then the active branch in order: user messages, answers with
their thinking and tool calls (each call together with its result), shell commands run by the
user, summaries of compactions and branches, model and thinking-level changes. Long or secondary
parts (thinking, tool output, the system prompt) are collapsible ``<details>`` elements, so the page
needs no JavaScript. Every piece of session text is HTML-escaped; images are embedded only when
their type and data are well-formed.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_MIME = re.compile(r"image/[a-z0-9.+-]{1,40}\Z")
OPEN_LINES = 12  # tool output up to this many lines is shown open


def export_session_html(source: Path, target: Path) -> Path:
    """Render the session file ``source`` into ``target``; returns the path written.

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
    return export_manager_html(manager, target)


def export_manager_html(manager: Any, target: Path, *, system_prompt: str | None = None,
                        tools: list[Any] | None = None) -> Path:
    """Render an open session (a ``SessionManager``, persisted or in memory) into ``target``."""
    page = render_session_html(manager.get_header().to_json(), manager.raw_entries(), manager.get_raw_branch(),
                               name=manager.get_session_name(), system_prompt=system_prompt, tools=tools)
    return _write(Path(target).expanduser(), page)


def default_export_name(manager: Any) -> str:
    """pi's default file name: ``pi-session-<session file name>.html``."""
    file = manager.session_file
    return f"pi-session-{Path(file).stem if file else manager.session_id}.html"


def render_session_html(header: dict[str, Any], entries: list[dict[str, Any]], branch: list[dict[str, Any]], *,
                        name: str | None = None, system_prompt: str | None = None,
                        tools: list[Any] | None = None) -> str:
    """The page for a session: ``entries`` are all of its entries, ``branch`` the active path."""
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
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
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
        return _card("custom", _e(entry.get("customType") or "message"), _content(entry.get("content")))
    if kind == "compaction":
        summary = f"Compacted ({entry.get('tokensBefore')} tokens before)"
        return _details(summary, f"<pre>{_e(entry.get('summary'))}</pre>", "summary")
    if kind == "branch_summary":
        return _details("Summary of an abandoned branch", f"<pre>{_e(entry.get('summary'))}</pre>", "summary")
    if kind == "model_change":
        return _note(f"Model: {entry.get('provider')}/{entry.get('modelId')}")
    if kind == "thinking_level_change":
        return _note(f"Thinking level: {entry.get('thinkingLevel')}")
    return ""


def _message(message: dict[str, Any], results: dict[str, dict[str, Any]], shown: set[str]) -> str:
    role = message.get("role")
    if role == "user":
        return _card("user", "You", _content(message.get("content")))
    if role == "assistant":
        return _assistant(message, results, shown)
    if role == "toolResult":
        call_id = _s(message.get("toolCallId"))
        return "" if call_id in shown else _card("tool", "Tool result", _tool_result(message))
    if role == "bashExecution":
        return _bash(message)
    if role == "system":
        return _system_message(message)
    if role in ("custom", "compactionSummary", "branchSummary"):
        text = message.get("summary") if role != "custom" else None
        return _card("custom", _e(message.get("customType") or role), _content(text or message.get("content")))
    return ""


def _assistant(message: dict[str, Any], results: dict[str, dict[str, Any]], shown: set[str]) -> str:
    parts = []
    for block in _l(message.get("content")):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(_text(block.get("text")))
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
        body += _tool_result(result)
        css += " failed" if result.get("isError") else ""
    summary = f"{block.get('name')} {_argument_hint(arguments)}".strip()
    return _details(summary, body, css, open_=result is not None and _short(result))


def _tool_result(result: dict[str, Any]) -> str:
    label = "Error" if result.get("isError") else "Output"
    return f'<div class="result"><div class="label">{label}</div>{_content(result.get("content"))}</div>'


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

def _content(content: Any) -> str:
    if isinstance(content, str):
        return _text(content)
    parts = []
    for block in _l(content):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(_text(block.get("text")))
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


CSS = """
:root{--bg:#fafafa;--fg:#1d1d1f;--muted:#6e6e73;--card:#fff;--line:#e3e3e6;--user:#eef4ff;--tool:#f6f6f8;
--err:#b3261e;--accent:#3a5ccc}
@media (prefers-color-scheme:dark){:root{--bg:#161618;--fg:#e8e8ea;--muted:#9a9aa0;--card:#1f1f22;--line:#333338;
--user:#1d2536;--tool:#232326;--err:#ff8a80;--accent:#8ea8ff}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:920px;margin:0 auto;padding:24px 16px 48px}
header h1{font-size:22px;margin:0 0 8px}header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;
margin:0 0 24px;color:var(--muted);font-size:13px}header dt{font-weight:600}header dd{margin:0;word-break:break-all}
.msg{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin:10px 0}
.msg.user{background:var(--user)}.msg.bash .who{font-family:ui-monospace,monospace}
.who{font-weight:600;font-size:13px;color:var(--accent);margin-bottom:4px;display:flex;gap:12px;
justify-content:space-between}.meta{font-weight:400;color:var(--muted)}
.text{white-space:pre-wrap;word-wrap:break-word}
pre{white-space:pre-wrap;word-wrap:break-word;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;
background:var(--tool);border-radius:6px;padding:8px 10px;margin:6px 0;max-height:600px;overflow:auto}
details{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 10px;background:var(--tool)}
details>summary{cursor:pointer;font:13px ui-monospace,monospace;color:var(--muted)}
details.call>summary{color:var(--fg)}details.failed{border-color:var(--err)}
details.thinking .text{color:var(--muted);font-style:italic}
.result .text{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
.result .label{font-size:12px;color:var(--muted);margin-top:6px}details.failed .label{color:var(--err)}
.error{color:var(--err);margin-top:6px;white-space:pre-wrap}.note{color:var(--muted);font-size:13px}
.change{color:var(--muted);font-size:12px;text-align:center;margin:6px 0}
img{max-width:100%;border-radius:6px;margin:6px 0}
footer{color:var(--muted);font-size:12px;margin-top:32px;text-align:center}
"""

__all__ = ["default_export_name", "export_manager_html", "export_session_html", "render_session_html"]
