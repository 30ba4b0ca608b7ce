"""Compiled dataclass methods kept between runs, as ``.pyc`` files keep compiled modules.

``@dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__`` ... for every class and compiles it
with ``exec`` while the class is made. pi's start-up makes a few hundred dataclasses (its hook events,
results, and those of the libraries it uses), and compiling their methods is about a fifth of a ``pi -p``
run on CPython 3.11. The compiled code depends only on that source text and the interpreter, so the ``pi``
process keeps it in a marshal file beside its bytecode (``pi_core/__pycache__``) and gives ``dataclasses``
an ``exec`` that looks the text up there first. The methods are the ones the standard library would make:
the same text, compiled the same way (no inherited compiler flags, file name ``<string>``).

Installed only by the ``pi`` command (:func:`pi_core.cli.main`); library users of pi_core keep
``dataclasses`` as it is. Like bytecode, nothing is written when ``sys.dont_write_bytecode`` is set, and a
missing, unreadable or foreign file only means compiling as usual.
"""

import atexit
import dataclasses
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

_LIMIT = 20_000
"""Entries kept at most (texts differ by field names only, so this bounds plugins' classes too)."""
_cache: dict[str, CodeType] = {}
_added = 0


def cache_file() -> Path:
    tag = importlib.util.MAGIC_NUMBER.hex()
    return Path(__file__).with_name("__pycache__") / f"dataclass-code.{sys.implementation.cache_tag}-{tag}.marshal"


def install(file: Path | None = None) -> None:
    """Route ``dataclasses``' ``exec`` through the cache kept in ``file`` (default :func:`cache_file`);
    once per process."""
    if "exec" in vars(dataclasses):
        return
    file = file or cache_file()
    try:
        loaded = marshal.loads(file.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        loaded = None
    if isinstance(loaded, dict):
        _cache.update((k, v) for k, v in loaded.items() if isinstance(k, str) and isinstance(v, CodeType))
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # a module global shadows the builtin for it alone
    atexit.register(_save, file)


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    global _added
    if isinstance(source, str):
        code = _cache.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_cache) < _LIMIT:
                _cache[source] = code
                _added += 1
        source = code
    exec(source, globals, locals)


def _save(file: Path) -> None:
    if not _added or sys.dont_write_bytecode:
        return
    temporary = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(exist_ok=True)
        temporary.write_bytes(marshal.dumps(_cache))
        os.replace(temporary, file)
    except OSError:  # a read-only installation: compile each time, as without the cache
        temporary.unlink(missing_ok=True)


def compiled_this_run() -> int:
    """Methods compiled in this process because the cache did not have them."""
    return _added


__all__ = ["cache_file", "compiled_this_run", "install"]
