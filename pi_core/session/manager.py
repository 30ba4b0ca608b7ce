"""``SessionManager``: a conversation as an append-only tree in a pi-compatible JSONL file.

Every entry has an ``id`` and a ``parentId``; appending makes a child of the current leaf and moves the
leaf to it. ``branch()`` moves the leaf back to an earlier entry so the next append starts a new branch;
nothing is ever rewritten. The model sees only the path from the leaf to the root
(:meth:`SessionManager.build_session_context`).

Files: nothing is written until the session holds a user or assistant message; then the header and
everything so far go out in one write, and every later entry in one write of its own. While a manager
has a file open for writing it holds ``<file>.lock``; a second writer gets :class:`SessionLockedError`.
"""

from __future__ import annotations

import builtins
import gc
import logging
import os
import re
import time
from pathlib import Path
from typing import Any

from pi_core.ai.types import PiModel
from pi_core.paths import expand_path, sessions_dir

from . import listing
from .entries import CURRENT_SESSION_VERSION, SessionHeader, entry_from_json, header_from_json
from .errors import (
    EntryNotFoundError,
    InvalidSessionError,
    SessionConflictError,
    SessionError,
    SessionReadOnlyError,
)
from .ids import check_session_id, iso_now, iso_to_ms, new_entry_id, uuid7
from .jsonfmt import dumps_line, loads
from .listing import SessionInfo
from .locations import default_session_dir, resolve_session_dir, session_file_name
from .messages import agent_message
from .migrate import migrate, needs_migration
from .index import ASSISTANT, CUSTOM, LABEL, ODD_MESSAGE, OTHER, SESSION_INFO, USER, TreeIndex
from .projection import SessionContext, current_system_message, project
from .scan import Diagnostic, FileReader, RecordStore, Scan, refuse_special, scan_session_file
from .store import (
    Appender,
    LoadResult,
    WriterLock,
    backup_file,
    read_session_file,
    repair_tail,
    rewrite_file,
)
from .tree import SessionTreeNode, build_tree

Raw = dict[str, Any]
log = logging.getLogger("pi_core.session")
_QUIET = (OTHER, CUSTOM, LABEL, SESSION_INFO)  # entries that change nothing the model sees
_CONVERSATION_ROLES = ("user", "assistant")
_EDITABLE_ROLES = ("user", "assistant", "toolResult")
_SYNTHESIZED_ROLES = ("branchSummary", "compactionSummary")
_UNSET: Any = object()


def _jsonable(value: Any) -> Any:
    """Pydantic models (also inside lists and dicts) as their pi JSON; everything else unchanged."""
    if isinstance(value, PiModel):
        return value.to_json()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _line(record: Raw) -> bytes:
    try:
        return dumps_line(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot store {record.get('type')} entry: not JSON data ({exc})") from exc


def _is_conversation(entry: Raw) -> bool:
    message = entry.get("message")
    return (entry.get("type") == "message" and message.__class__ is dict
            and message.get("role") in _CONVERSATION_ROLES)


def recent_session_file(cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The session file :meth:`SessionManager.continue_recent` opens for ``cwd`` (``None``: it would create one)."""
    directory = resolve_session_dir(cwd, session_dir)
    resolved = expand_path(cwd)
    custom = directory != default_session_dir(resolved)
    return listing.most_recent(directory, resolved if custom else None)


class SessionManager:
    """A session tree and its file. Make one with :meth:`create`, :meth:`open`, :meth:`in_memory`,
    :meth:`continue_recent` or :meth:`fork_from`; close it (or use ``with``) to release the file."""

    def __init__(self, cwd: Path, session_dir: Path | None, *, persist: bool,
                 read_only: bool = False, fsync: bool = False) -> None:
        self._cwd = cwd
        self._session_dir = session_dir
        self._persist = persist
        self._read_only = read_only
        self._fsync = fsync
        self._file: Path | None = None
        self._lock: WriterLock | None = None
        self._appender: Appender | None = None
        self._flushed = False
        self._closed = False
        self._written = 0  # the file's size as this manager last wrote it (for reopen)
        self.write_error: SessionConflictError | None = None
        """Set when another program truncated, removed or replaced the file while this manager had it
        open: nothing more is written to it (entries are kept in memory)."""
        self.diagnostics: list[Diagnostic] = []
        """What loading noticed and handled: skipped lines, a repaired tail."""
        self._reset({"type": "session", "version": CURRENT_SESSION_VERSION, "id": "",
                     "timestamp": iso_now(), "cwd": str(cwd)})

    # -----------------------------------------------------------------------------------------
    # making managers

    @classmethod
    def create(cls, cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None,
               *, id: str | None = None, parent_session: str | os.PathLike[str] | None = None,
               fsync: bool = False) -> SessionManager:
        """A new session for ``cwd``, stored in ``session_dir`` (default: pi's folder for ``cwd``).

        The file appears once the session holds a user or assistant message.
        """
        directory = resolve_session_dir(cwd, session_dir)
        directory.mkdir(parents=True, exist_ok=True)
        manager = cls(expand_path(cwd), directory, persist=True, fsync=fsync)
        manager.new_session(id=id, parent_session=parent_session)
        return manager

    @classmethod
    def open(cls, path: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None,
             cwd_override: str | os.PathLike[str] | None = None, *, read_only: bool = False,
             fsync: bool = False) -> SessionManager:
        """Open a session file; the leaf is its last entry, as pi restores it.

        Without ``read_only`` the file is locked for writing (:class:`SessionLockedError` if another
        writer has it), a torn last line is repaired and a version 1/2 file is migrated and rewritten
        once. With ``read_only`` nothing on disk is touched and appends raise.
        A missing file starts a new session that will be written to ``path``.
        """
        file = expand_path(path)
        refuse_special(file)  # a pipe would block the open, /dev/zero never end, a directory fail
        header = listing.read_header(file) if file.exists() else None
        stored = (header or {}).get("cwd")
        cwd = cwd_override or (stored if isinstance(stored, str) else None) or os.getcwd()
        directory = expand_path(session_dir) if session_dir else file.parent
        manager = cls(expand_path(cwd), directory, persist=True, read_only=read_only, fsync=fsync)
        manager._open_file(file)
        return manager

    @classmethod
    def in_memory(cls, cwd: str | os.PathLike[str] | None = None) -> SessionManager:
        """A session that is never written anywhere (``--no-session``)."""
        manager = cls(expand_path(cwd or os.getcwd()), None, persist=False)
        manager.new_session()
        return manager

    @classmethod
    def continue_recent(cls, cwd: str | os.PathLike[str],
                        session_dir: str | os.PathLike[str] | None = None, *,
                        read_only: bool = False) -> SessionManager:
        """Open the most recently modified session of ``cwd``, or create a new one if there is none."""
        directory = resolve_session_dir(cwd, session_dir)
        directory.mkdir(parents=True, exist_ok=True)
        resolved = expand_path(cwd)
        recent = recent_session_file(cwd, session_dir)
        if recent is None:
            return cls.create(resolved, directory)
        return cls.open(recent, directory, cwd_override=resolved, read_only=read_only)

    @classmethod
    def list(cls, cwd: str | os.PathLike[str],
             session_dir: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """The sessions of ``cwd``, newest first."""
        directory = resolve_session_dir(cwd, session_dir)
        resolved = expand_path(cwd)
        custom = directory != default_session_dir(resolved)
        return listing.list_infos(listing.list_files(directory), resolved if custom else None)

    @classmethod
    def list_all(cls, session_dir: str | os.PathLike[str] | None = None) -> builtins.list[SessionInfo]:
        """Every session of every working directory, newest first."""
        custom = session_dir or os.environ.get("PI_CODING_AGENT_SESSION_DIR")
        if custom:
            return listing.list_infos(listing.list_files(expand_path(custom)))
        root = sessions_dir()
        try:
            folders = [root / name for name in os.listdir(root) if (root / name).is_dir()]
        except OSError:
            return []
        return listing.list_infos(p for folder in folders for p in listing.list_files(folder))

    @classmethod
    def find_by_id(cls, cwd: str | os.PathLike[str], session_id: str,
                   session_dir: str | os.PathLike[str] | None = None) -> Path | None:
        """The file of the session with id ``session_id`` among ``cwd``'s sessions, if any."""
        directory = resolve_session_dir(cwd, session_dir)
        for path in listing.list_files(directory):
            header = listing.read_header(path)
            if header is not None and header.get("id") == session_id:
                return path
        return None

    @classmethod
    def fork_from(cls, source_path: str | os.PathLike[str], target_cwd: str | os.PathLike[str],
                  session_dir: str | os.PathLike[str] | None = None, *,
                  id: str | None = None) -> SessionManager:
        """Copy every entry of another session (all branches) into a new session of ``target_cwd``.

        The new header records the source in ``parentSession``; the source is not changed (a version
        1/2 source is migrated in the copy only).
        """
        source = expand_path(source_path)
        result = read_session_file(source)
        header, entries = _split(source, result)
        migrate(header, entries)
        directory = resolve_session_dir(target_cwd, session_dir)
        directory.mkdir(parents=True, exist_ok=True)
        manager = cls(expand_path(target_cwd), directory, persist=True)
        manager.new_session(id=id, parent_session=source)
        manager._load(manager._header, [e for e in entries if e.get("type") != "session"])
        manager._write_new_file()
        return manager

    # -----------------------------------------------------------------------------------------
    # file state

    def _reset(self, header: Raw, records: RecordStore | None = None) -> None:
        old = getattr(self, "_tree", None)
        if old is not None and old.records is not records:
            old.records.close()
        self._header = header
        self._tree = TreeIndex(records)
        self._labels: dict[str, tuple[str, str | None]] = {}
        self._name: str | None = None
        self._leaf: str | None = None
        self._children: dict[str | None, builtins.list[Raw]] | None = None
        self._has_conversation = False
        self._projected: tuple[Any, int, int, SessionContext] | None = None

    def _release(self) -> None:
        if self._appender is not None:
            self._written = self._appender.size
            self._appender.close()
            self._appender = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def new_session(self, *, id: str | None = None,
                    parent_session: str | os.PathLike[str] | None = None) -> Path | None:
        """Start an empty session (same cwd and folder); returns its future file path."""
        self._release()
        return self._start(id, parent_session)

    def _start(self, id: str | None, parent_session: str | os.PathLike[str] | None) -> Path | None:
        session_id = check_session_id(id) if id is not None else uuid7()
        header: Raw = {"type": "session", "version": CURRENT_SESSION_VERSION, "id": session_id,
                       "timestamp": iso_now(), "cwd": str(self._cwd)}
        if parent_session is not None:
            header["parentSession"] = str(parent_session)
        self._reset(header)
        self._flushed = False
        self.write_error = None
        if self._persist and self._session_dir is not None:
            self._file = self._session_dir / session_file_name(header["timestamp"], session_id)
        return self._file

    def _open_file(self, path: Path) -> None:
        self._file = path
        if not path.exists():
            self.new_session()
            self._file = path
            return
        if not self._read_only:
            self._lock = WriterLock(path)
            self._lock.acquire()
        try:
            self._load_file(path)
        except BaseException:
            self._release()
            raise

    def _load_file(self, path: Path) -> None:
        gc_was_enabled = gc.isenabled()
        gc.disable()  # indexing makes many small objects that can never form cycles
        try:
            self._load_path(path)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _load_path(self, path: Path) -> None:
        scan = scan_session_file(path, use_index=True)
        self.diagnostics = scan.diagnostics
        for diagnostic in scan.diagnostics:
            if diagnostic.kind == "malformed_line":
                log.warning("pi: session %s: %s", path, diagnostic.message)
        if scan.header is None and not len(scan) and (scan.size == 0 or _torn_header_only(scan)):
            self._start_in_empty_file(path, scan)
            return
        header = _header_of(path, scan)  # not a session: raise before touching the file
        for problem in header_problems(header):
            self.diagnostics.append(Diagnostic("invalid_header", f"line 1: {problem}", line=1))
            log.warning("pi: session %s: line 1: %s", path, problem)
        migrating = needs_migration(header)
        backup = backup_file(path) if migrating and not self._read_only else None  # before any change
        if not self._read_only:
            repair_tail(path, scan)
        if migrating:
            result = read_session_file(path)
            header, entries = _split(path, result)
            migrate(header, entries)
            self._load(header, entries)
            if backup is not None:
                self.diagnostics.append(Diagnostic(
                    "migrated", f"migrated to version {CURRENT_SESSION_VERSION}; the original is kept "
                    f"as {backup.name}", sidecar=backup))
                log.warning("session %s: %s", path, self.diagnostics[-1].message)
                self._rewrite()
        else:
            self._load_scan(header, scan, FileReader.for_scan(path, scan))
            if not self._read_only:
                self._appender = Appender.open_existing(path, scan.size, self._fsync)
        self._flushed = True

    def _start_in_empty_file(self, path: Path, result: LoadResult | Scan) -> None:
        """An empty file (or one holding only a torn header) starts a new session; pi writes its
        header at once."""
        self._start(None, None)
        self._file = path
        if not self._read_only:
            repair_tail(path, result)
            self._rewrite()

    def _load(self, header: Raw, entries: builtins.list[Raw]) -> None:
        self._reset(header)
        self._tree.load(entries)
        self._after_load()

    def _load_scan(self, header: Raw, scan: Scan, reader: FileReader) -> None:
        self._reset(header, RecordStore.of_scan(scan, reader))
        self._tree.load_scan(scan)
        self._after_load()

    def _after_load(self) -> None:
        tree = self._tree
        for at in sorted([*tree.positions_of(LABEL), *tree.positions_of(SESSION_INFO)]):
            entry = tree.entries[at]
            if entry.get("type") == "label":
                _apply_label(self._labels, entry)
            else:
                self._name = _clean_name(entry.get("name"))
        kinds = tree.kinds
        self._has_conversation = USER in kinds or ASSISTANT in kinds or any(
            _is_conversation(tree.entries[at]) for at in tree.positions_of(ODD_MESSAGE))
        self._leaf = tree.ids[-1] if len(tree) else None

    def _all_lines(self, *extra: Raw) -> bytes:
        return b"".join(_line(r) for r in (self._header, *self._tree.records, *extra))

    def _rewrite(self) -> None:
        """Write the whole file anew (after a migration); atomic, then keep appending to it."""
        assert self._file is not None
        if self._appender is not None:
            self._appender.close()
        data = self._all_lines()
        rewrite_file(self._file, data)
        self._appender = Appender.open_existing(self._file, len(data), self._fsync)
        self._flushed = True

    def _write_new_file(self, *extra: Raw) -> None:
        """Create the file with everything so far (and ``extra``) in one write (it must not exist yet)."""
        assert self._file is not None
        self._file.parent.mkdir(parents=True, exist_ok=True)
        lock = WriterLock(self._file)
        lock.acquire()
        try:
            self._appender = Appender.create(self._file, self._all_lines(*extra), self._fsync)
        except BaseException:
            lock.release()
            raise
        self._lock, self._flushed = lock, True

    def close(self) -> None:
        """Release the file and its lock. The tree stays readable; appends raise afterwards."""
        self._release()
        self._closed = True

    def reopen(self) -> None:
        """Undo :meth:`close`: take the file's lock again and go on appending where this manager left off
        (a host going back to a session it had left, as when switching to another one failed half-way).
        What another program appended meanwhile is merged as usual. Raises :class:`SessionLockedError`
        if another writer has the file now."""
        if not self._closed or self._read_only or self.write_error is not None:
            return
        if self._flushed and self._file is not None and self._persist:
            lock = WriterLock(self._file)
            lock.acquire()
            try:
                self._appender = Appender.open_existing(self._file, self._written, self._fsync)
            except BaseException:
                lock.release()
                raise
            self._lock = lock
        self._closed = False

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -----------------------------------------------------------------------------------------
    # appending

    def _check_writable(self) -> None:
        if self._read_only:
            raise SessionReadOnlyError(self._file)
        if self._closed:
            raise SessionError(f"session {self._file} is closed")

    def _new_entry(self, kind: str) -> Raw:
        return {"type": kind, "id": new_entry_id(self._tree), "parentId": self._leaf,
                "timestamp": iso_now()}

    def _append(self, entry: Raw) -> str:
        """Write ``entry`` (if this session is persisted), then make it the leaf."""
        self._check_writable()
        line = _line(entry)
        if self._persist and self.write_error is None:
            self._persist_line(entry, line)
        self._index(entry)
        return entry["id"]

    def _persist_line(self, entry: Raw, line: bytes) -> None:
        if self._flushed:
            assert self._appender is not None
            for _ in range(5):
                try:
                    prefix = self._merge_foreign(entry)
                except SessionConflictError as exc:  # truncated, removed or replaced by something else
                    self._stop_writing(exc)
                    return
                if prefix is not None:
                    line = prefix + _line(entry)
                try:
                    self._appender.append(line)
                    return
                except SessionConflictError:
                    continue  # another program wrote just now: merge that too
            self._appender.append(line)
        elif self._has_conversation or _is_conversation(entry):
            self._write_new_file(entry)

    def _stop_writing(self, error: SessionConflictError) -> None:
        """Another program truncated, removed or replaced the file: appending would write after something
        we never saw. Stop writing to it (the lock is released) and go on in memory, so the run in progress
        loses nothing of what it holds; ``write_error`` says what happened."""
        self.write_error = error
        self._release()
        log.warning("pi: %s; from now on this session is kept in memory only", error)

    def _merge_foreign(self, entry: Raw) -> bytes | None:
        """Take in what another program (the TypeScript pi takes no lock) appended since our last
        write, so nothing of it is lost and ``entry`` parents correctly; returns the bytes to write
        before ``entry``'s line if that changed (``None``: just the line).

        Their entries join the tree where they say. When they only continue our branch with entries
        that add nothing to the model's context (plugin state, labels, a name), the leaf follows
        them; otherwise our entry stays a child of our own leaf (what our model saw), and theirs
        form a branch of their own.
        """
        appender = self._appender
        assert appender is not None
        actual = appender.current_size()
        if actual == appender.size:
            return None
        data = appender.read_from(appender.size, actual)
        for _ in range(25):  # a write in progress: give it a moment to finish its line
            if data.endswith(b"\n"):
                break
            time.sleep(0.02)
            actual = appender.current_size()
            data = appender.read_from(appender.size, actual)
        torn = not data.endswith(b"\n")
        leaf, added = self._leaf, []
        for raw in data.split(b"\n")[:-1] if not torn else data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                record = loads(raw)
            except ValueError:
                record = None
            if record.__class__ is not dict:
                self.diagnostics.append(Diagnostic(
                    "malformed_line", "a line another program appended is not a JSON object; skipped"))
                continue
            if self._add_foreign(record):
                added.append(record)
        appender.size = actual
        kinds = self._tree.kinds
        quiet = all(kinds[self._tree.position[r["id"]]] in _QUIET for r in added)
        chained = all(r.get("parentId") == (added[n - 1]["id"] if n else leaf) for n, r in enumerate(added))
        if added and quiet and chained:
            self._leaf = added[-1]["id"]
            if entry.get("parentId") == leaf:
                entry["parentId"] = self._leaf
        if entry.get("id") in self._tree:
            entry["id"] = new_entry_id(self._tree)
        log.info("session %s: took in %d entries another program appended", self._file, len(added))
        if torn:
            self.diagnostics.append(Diagnostic(
                "torn_tail", "another program left an unfinished line; ours starts on a new line"))
            return b"\n"
        return b""

    def _add_foreign(self, record: Raw) -> bool:
        if record.get("id").__class__ is not str or record.get("type") == "session" \
                or record["id"] in self._tree:
            self._tree.records.append(record)
            return False
        self._tree.add(record)
        kind = record.get("type")
        if kind == "label":
            _apply_label(self._labels, record)
        elif kind == "session_info":
            self._name = _clean_name(record.get("name"))
        elif _is_conversation(record):
            self._has_conversation = True
        if self._children is not None:
            self._children.setdefault(record.get("parentId"), []).append(record)
        return True

    def _index(self, entry: Raw) -> None:
        self._tree.add(entry)
        self._leaf = entry["id"]
        kind = entry["type"]
        if kind == "label":
            _apply_label(self._labels, entry)
        elif kind == "session_info":
            self._name = _clean_name(entry.get("name"))
        elif _is_conversation(entry):
            self._has_conversation = True
        if self._children is not None:
            self._children.setdefault(entry.get("parentId"), []).append(entry)

    def append_message(self, message: Any) -> str:
        """Append a message (a pydantic message model or pi's JSON of one); returns the entry id.

        Summaries are not messages here: use :meth:`append_compaction` / :meth:`branch_with_summary`.
        """
        data = agent_message(message).to_json()
        if data.get("role") in _SYNTHESIZED_ROLES:
            raise ValueError(f"{data['role']} messages are made from entries; append the entry instead")
        entry = self._new_entry("message")
        entry["message"] = data
        return self._append(entry)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        entry = self._new_entry("thinking_level_change")
        entry["thinkingLevel"] = _text(thinking_level, "thinking_level")
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._new_entry("model_change")
        entry["provider"] = _text(provider, "provider")
        entry["modelId"] = _text(model_id, "model_id")
        return self._append(entry)

    def append_compaction(self, summary: str, first_kept_entry_id: str | None = None,
                          tokens_before: int = 0, details: Any = None, from_hook: bool | None = None,
                          usage: Any = None) -> str:
        """Append a compaction: everything before ``first_kept_entry_id`` is replaced by ``summary``.

        ``first_kept_entry_id=None`` keeps nothing before the compaction. The system prompt and tools
        in force are recorded in the entry (``systemMessage``), as pi 1.x does.
        """
        if first_kept_entry_id is not None and first_kept_entry_id not in self._branch_ids():
            raise EntryNotFoundError(first_kept_entry_id, "is not on the current branch")
        snapshot = current_system_message(self.build_session_context().raw_messages)
        entry = self._new_entry("compaction")
        entry["summary"] = _text(summary, "summary")
        entry["firstKeptEntryId"] = first_kept_entry_id or entry["id"]
        entry["tokensBefore"] = tokens_before
        _put_optional(entry, details=details, usage=usage, fromHook=from_hook)
        if snapshot is not None:
            entry["systemMessage"] = {**snapshot, "timestamp": iso_to_ms(entry["timestamp"])}
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Append plugin state (never part of the model's context)."""
        entry: Raw = {"type": "custom", "customType": _text(custom_type, "custom_type")}
        _put_optional(entry, data=data)
        entry.update(self._new_entry("custom"))
        return self._append(entry)

    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool = True,
                                    details: Any = None) -> str:
        """Append a plugin message that is part of the context (the model sees a user message)."""
        content = _jsonable(content)
        if not isinstance(content, (str, list)):
            raise ValueError("custom message content must be a string or a list of content blocks")
        entry: Raw = {"type": "custom_message", "customType": _text(custom_type, "custom_type"),
                      "content": content, "display": bool(display)}
        _put_optional(entry, details=details)
        entry.update(self._new_entry("custom_message"))
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        """Change what entry ``target_id`` contributes to the context from here on down this branch.

        ``replacement`` is ``{"content": ...}`` (replaces only the content) or ``None`` (omits the
        entry). The target must be on the current branch and be a user/assistant/toolResult message or
        a custom message.
        """
        replacement = _check_replacement(_jsonable(replacement))
        target = self._branch_target(target_id)
        role = target["message"].get("role") if target.get("type") == "message" else "custom"
        if replacement is not None and role in ("assistant", "toolResult") \
                and isinstance(replacement["content"], str):
            replacement = {"content": [{"type": "text", "text": replacement["content"]}]}
        entry = self._new_entry("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = replacement
        return self._append(entry)

    def _branch_target(self, target_id: str) -> Raw:
        target = self._tree.get(target_id)
        if target is None:
            raise EntryNotFoundError(target_id)
        if target_id not in self._branch_ids():
            raise EntryNotFoundError(target_id, "is not on the current branch")
        message = target.get("message")
        editable = target.get("type") == "custom_message" or (
            target.get("type") == "message" and message.__class__ is dict
            and message.get("role") in _EDITABLE_ROLES)
        if not editable:
            raise ValueError(f"entry {target_id} has no editable model content")
        return target

    def append_label_change(self, target_id: str, label: str | None = None) -> str:
        """Set (or with ``None``/``""`` clear) the label of an entry."""
        if target_id not in self._tree:
            raise EntryNotFoundError(target_id)
        entry = self._new_entry("label")
        entry["targetId"] = target_id
        _put_optional(entry, label=label)
        return self._append(entry)

    def append_session_info(self, name: str) -> str:
        """Set the session's display name (line breaks become spaces; empty clears it)."""
        entry = self._new_entry("session_info")
        entry["name"] = re.sub(r"[\r\n]+", " ", _text(name, "name")).strip()
        return self._append(entry)

    def append_usage(self, kind: str, provider: str, model: str, usage: Any,
                     note: str | None = None) -> str:
        """Record model usage outside the conversation (counted in cost totals only)."""
        entry = self._new_entry("usage")
        entry.update(kind=_text(kind, "kind"), provider=provider, model=model, usage=_jsonable(usage))
        if note:
            entry["note"] = note
        return self._append(entry)

    # -----------------------------------------------------------------------------------------
    # the tree

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a new branch there. Writes nothing."""
        if entry_id not in self._tree:
            raise EntryNotFoundError(entry_id)
        self._leaf = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append is a new root. Writes nothing."""
        self._leaf = None

    def branch_with_summary(self, branch_from_id: str | None, summary: str, details: Any = None,
                            from_hook: bool | None = None, usage: Any = None) -> str:
        """Move the leaf to ``branch_from_id`` and append a summary of the branch just left there."""
        if branch_from_id is not None and branch_from_id not in self._tree:
            raise EntryNotFoundError(branch_from_id)
        from_id = self._leaf or "root"
        previous, self._leaf = self._leaf, branch_from_id
        try:
            entry = self._new_entry("branch_summary")
            entry["fromId"] = from_id
            entry["summary"] = _text(summary, "summary")
            _put_optional(entry, details=details, usage=usage, fromHook=from_hook)
            return self._append(entry)
        except BaseException:
            self._leaf = previous
            raise

    def get_leaf_id(self) -> str | None:
        return self._leaf

    def get_leaf_entry(self) -> Any:
        return self.get_entry(self._leaf) if self._leaf is not None else None

    def get_entry(self, entry_id: str) -> Any:
        """The typed entry (:data:`~pi_core.session.entries.SessionEntry`) or None."""
        raw = self._tree.get(entry_id)
        return entry_from_json(raw) if raw is not None else None

    def get_raw_entry(self, entry_id: str) -> Raw | None:
        """The entry as stored (pi's JSON dict); read-only by convention."""
        return self._tree.get(entry_id)

    def get_entries(self) -> builtins.list[Any]:
        """Every entry in file order, typed (each is validated now: use :meth:`raw_entries` in bulk)."""
        return [entry_from_json(raw) for raw in self.raw_entries()]

    def entry_count(self) -> int:
        """How many entries the session holds (without reading any of them)."""
        return len(self._tree)

    def raw_entries(self) -> builtins.list[Raw]:
        """Every entry in file order as stored (header excluded)."""
        return [e for e in self._tree.records if e.get("type") != "session"]

    def get_header(self) -> SessionHeader:
        """The header, typed; a field of the wrong type in the file (reported when it was opened) reads
        as this session's value for it (``cwd``, ``timestamp``) or as absent."""
        return header_from_json(_typed_header(self._header, self._cwd))

    def get_tree(self) -> builtins.list[SessionTreeNode]:
        """Roots of the tree (several after :meth:`reset_leaf`; orphans count as roots)."""
        return build_tree(list(self._tree.unique()), self._labels)

    def get_children(self, parent_id: str | None) -> builtins.list[Any]:
        """The typed entries whose parent is ``parent_id`` (``None``: the roots), in file order."""
        if self._children is None:
            children: dict[str | None, builtins.list[Raw]] = {}
            for entry in self._tree.unique():
                children.setdefault(entry.get("parentId"), []).append(entry)
            self._children = children
        return [entry_from_json(raw) for raw in self._children.get(parent_id, [])]

    def get_branch(self, from_id: str | None = None) -> builtins.list[Any]:
        """The typed entries from the root to ``from_id`` (default: the leaf)."""
        return [entry_from_json(raw) for raw in self.get_raw_branch(from_id)]

    def get_custom_entries(self, custom_type: str | None = None, *, branch: bool = True) -> builtins.list[Raw]:
        """Plugin state: the ``custom`` entries (of ``custom_type``, if given) on the current branch (or,
        with ``branch=False``, in the whole file), oldest first, as stored.

        Cheap on a long session — only these entries are read — where filtering :meth:`get_branch`
        types every entry of the branch first.
        """
        tree = self._tree
        kinds = tree.kinds
        if branch:
            leaf = tree.position.get(self._leaf) if self._leaf is not None else None
            positions = [at for at in tree.path(leaf) if kinds[at] == CUSTOM]
        else:
            positions = list(tree.positions_of(CUSTOM))
        entries = [tree.entries[at] for at in positions]
        return [e for e in entries if custom_type is None or e.get("customType") == custom_type]

    def get_raw_branch(self, from_id: str | None = None) -> builtins.list[Raw]:
        start = from_id if from_id is not None else self._leaf
        tree = self._tree
        return [tree.entries[at] for at in tree.path(tree.position.get(start))] \
            if start is not None else []

    def _branch_ids(self) -> set[str]:
        tree = self._tree
        leaf = self._leaf
        return {tree.ids[at] for at in tree.path(tree.position.get(leaf))} if leaf is not None else set()

    def get_label(self, entry_id: str) -> str | None:
        label = self._labels.get(entry_id) if entry_id.__class__ is str else None
        return label[0] if label else None

    def get_session_name(self) -> str | None:
        return self._name

    def build_session_context(self, leaf_id: str | None = _UNSET) -> SessionContext:
        """What the model sees at the leaf (or at ``leaf_id``): messages, thinking level, model.

        Runs over the stored dicts (no validation); ``context.messages`` are typed lazily.
        """
        leaf = self._leaf if leaf_id is _UNSET else leaf_id
        tree = self._tree
        if leaf is None or not len(tree):
            return project(tree, [])
        at = tree.position.get(leaf, len(tree) - 1)  # pi: an unknown leaf means the last entry
        # Start-up asks several times for the same context (model, tools, thinking level, the agent);
        # the tree only grows, so its length and the leaf say whether the projection still holds.
        cached = self._projected
        if cached is None or cached[0] is not tree or cached[1] != len(tree) or cached[2] != at:
            cached = self._projected = (tree, len(tree), at, project(tree, tree.path(at)))
        context = cached[3].copy()
        context.messages.on_invalid = lambda index, exc: self._report_invalid(context, index, exc)
        return context

    def _report_invalid(self, context: SessionContext, index: int, exc: Exception) -> None:
        source = context.source_ids[index]
        at = self._tree.position.get(source)
        line = self._tree.line(at) if at is not None else None
        where = f"line {line}" if line else f"entry {source}"
        reason = str(exc).splitlines()
        summary = " ".join(reason[:3]) if reason else type(exc).__name__
        message = (f"{where}: message skipped (it does not fit pi's message format: {summary}); "
                   "it stays in the file")
        if any(d.message == message for d in self.diagnostics):
            return
        self.diagnostics.append(Diagnostic("bad_entry", message, line=line))
        log.warning("pi: session %s: %s", self._file, message)

    # -----------------------------------------------------------------------------------------
    # new files from this one

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Make this manager a new session holding only the path root → ``leaf_id``.

        As pi 1.x: labels on the path are dropped and re-created (one per labelled entry) after the
        path's last entry; entries are re-parented to skip them. The header's ``parentSession`` is the
        old file. Returns the new file's path (None in memory); the file is written now if the path
        holds a conversation, else on the first user or assistant message.
        """
        if self._persist:
            self._check_writable()  # a read-only view writes no file, not even a new one
        path = self.get_raw_branch(leaf_id)
        if not path:
            raise EntryNotFoundError(leaf_id)
        kept = _without_labels(path)
        taken = {e["id"] for e in kept}
        labels = [(target, *value) for target, value in self._labels.items() if target in taken]
        previous = self._file if self._persist else None
        self.new_session(parent_session=previous)
        parent = kept[-1]["id"] if kept else None
        for target, label, stamp in labels:
            label_id = new_entry_id(taken)
            taken.add(label_id)
            kept.append({"type": "label", "id": label_id, "parentId": parent, "timestamp": stamp,
                         "targetId": target, "label": label})
            parent = label_id
        self._load(self._header, kept)
        if self._persist and self._has_conversation:
            self._write_new_file()
        return self._file

    def clone(self) -> Path | None:
        """:meth:`create_branched_session` at the current leaf: the active branch in a new file."""
        if self._leaf is None:
            raise SessionError("nothing to clone: the session has no entries on its current branch")
        return self.create_branched_session(self._leaf)

    # -----------------------------------------------------------------------------------------
    # properties

    @property
    def session_file(self) -> Path | None:
        """The session's file (which may not exist yet); None for in-memory sessions."""
        return self._file if self._persist else None

    @property
    def session_id(self) -> str:
        return self._header.get("id", "")

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    @property
    def cwd(self) -> Path:
        return self._cwd

    @property
    def is_persisted(self) -> bool:
        return self._persist

    @property
    def read_only(self) -> bool:
        return self._read_only

    def __repr__(self) -> str:
        where = self.session_file or "in memory"
        return f"SessionManager({where}, {len(self._tree)} entries, leaf={self._leaf})"


def _header_of(path: Path, scan: Scan) -> Raw:
    header = scan.header
    if header is None and not len(scan):
        raise InvalidSessionError(path, "it holds no JSON records")
    if header is None or not isinstance(header.get("id"), str):
        raise InvalidSessionError(path, "the first record is not a session header")
    return header


_HEADER_TEXT = ("cwd", "timestamp", "parentSession")


def header_problems(header: Raw) -> builtins.list[str]:
    """What is wrong with a session header's fields that a reader can work around (the ``id`` is checked
    apart: without it the file is refused). The file is never changed for these."""
    problems = []
    for key in _HEADER_TEXT:
        value = header.get(key)
        if value is not None and not isinstance(value, str):
            use = {"cwd": "the session runs in the directory pi was started in",
                   "timestamp": "the session's creation time is unknown"}.get(key, "it is ignored")
            problems.append(f"the header's {key} is {_kind(value)}, not a string; {use}")
    version = header.get("version")
    if version is not None and not isinstance(version, (int, float, str)):
        problems.append(f"the header's version is {_kind(version)}; the file is read as version 3 and not "
                        "migrated")
    return problems


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    return {int: "a number", float: "a number", list: "a list", dict: "an object"}.get(type(value), "not text")


def _typed_header(header: Raw, cwd: Path) -> Raw:
    """``header`` with the fields :func:`header_problems` names replaced or dropped, for the typed view."""
    fixed = dict(header)
    if "cwd" in fixed and not isinstance(fixed["cwd"], str):
        fixed["cwd"] = str(cwd)
    if not isinstance(fixed.get("timestamp"), str):
        fixed["timestamp"] = "1970-01-01T00:00:00.000Z"
    if fixed.get("parentSession") is not None and not isinstance(fixed["parentSession"], str):
        del fixed["parentSession"]
    version = fixed.get("version")
    if version is not None and (version.__class__ is not int):
        try:
            fixed["version"] = int(float(version)) if isinstance(version, (str, float)) else CURRENT_SESSION_VERSION
        except (ValueError, OverflowError):
            fixed["version"] = CURRENT_SESSION_VERSION
    return fixed


def _split(path: Path, result: LoadResult) -> tuple[Raw, list[Raw]]:
    records = result.records
    if not records:
        raise InvalidSessionError(path, "it holds no JSON records")
    header = records[0]
    if header.get("type") != "session" or not isinstance(header.get("id"), str):
        raise InvalidSessionError(path, "the first record is not a session header")
    return header, records[1:]


def _apply_label(labels: dict[str, tuple[str, str | None]], entry: Raw) -> None:
    target, label = entry.get("targetId"), entry.get("label")
    if target.__class__ is not str:
        return
    if label:
        labels[target] = (label, entry.get("timestamp"))
    else:
        labels.pop(target, None)


def _clean_name(name: Any) -> str | None:
    return name.strip() or None if isinstance(name, str) else None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, not {type(value).__name__}")
    return value


def _put_optional(entry: Raw, **fields: Any) -> None:
    """Add the fields that are set, in order (pi leaves out ``undefined``)."""
    for key, value in fields.items():
        if value is not None:
            entry[key] = _jsonable(value)


def _check_replacement(replacement: Any) -> Raw | None:
    if replacement is None:
        return None
    if not isinstance(replacement, dict) or not isinstance(replacement.get("content"), (str, list)):
        raise ValueError("a context edit replacement must be None or {'content': str | list}")
    return {"content": replacement["content"]}


def _without_labels(path: list[Raw]) -> list[Raw]:
    """Copies of ``path``'s entries minus labels, re-parented into one chain (pi 1.x)."""
    kept: list[Raw] = []
    pending: list[str] = []
    moved: dict[str, str] = {}
    parent: str | None = None
    for entry in path:
        if entry.get("type") == "label":
            pending.append(entry["id"])
            continue
        moved.update((label_id, entry["id"]) for label_id in pending)
        pending.clear()
        copy = {**entry, "parentId": parent}
        if entry.get("type") == "compaction" and entry.get("firstKeptEntryId") != entry["id"]:
            first = entry.get("firstKeptEntryId")
            copy["firstKeptEntryId"] = moved.get(first, first)  # type: ignore[arg-type]
        kept.append(copy)
        parent = entry["id"]
    return kept


def _torn_header_only(result: LoadResult | Scan) -> bool:
    """The file holds nothing but the start of a header: a crash during the very first write."""
    return not result.tail_parsed and result.tail_offset == 0 \
        and result.tail.startswith(b'{"type":"session"')


__all__ = ["SessionManager", "recent_session_file"]
