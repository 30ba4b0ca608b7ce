"""Importing extension files (``.pi/extensions/*.py``, ``-e path``) the way pytest imports conftests.

Each file gets a unique module name derived from its absolute path, so ``json.py`` or ``plugins.py``
in a repository never shadows (or is shadowed by) a real module. The module is put in
``sys.modules`` before it executes (dataclasses and pickling need that), and ``sys.path`` is left
alone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType


class ExtensionImportError(Exception):
    """An extension file failed to import; ``__cause__`` holds the original exception."""

    def __init__(self, path: Path, cause: BaseException) -> None:
        super().__init__(f"{path}: {type(cause).__name__}: {cause}")
        self.path = path


def module_name_for(path: Path) -> str:
    path = path.resolve()
    stem = path.parent.name if path.name == "__init__.py" else path.stem
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    return f"pi_ext_{digest}_{re.sub(r'[^0-9a-zA-Z_]', '_', stem)}"


def import_extension(path: Path) -> ModuleType:
    """Import one extension file (or package ``__init__.py``) and return its module.

    Raises :class:`ExtensionImportError` for any failure, ``SystemExit`` included; the half-imported
    module is removed from ``sys.modules`` again.
    """
    path = path.resolve()
    name = module_name_for(path)
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == str(path):
        return existing
    is_package = path.name == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if is_package else None
    )
    if spec is None or spec.loader is None:
        raise ExtensionImportError(path, ImportError("not a Python module"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise ExtensionImportError(path, exc) from exc
    return module


__all__ = ["ExtensionImportError", "import_extension", "module_name_for"]
