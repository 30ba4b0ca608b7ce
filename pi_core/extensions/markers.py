"""The marker plugin authors use: ``from pi_core import hookimpl``."""

from __future__ import annotations

import pluggy

#: Marks a function as the implementation of the hook of the same name.
#: Options: ``tryfirst=True`` / ``trylast=True`` move it to the front or back of the load order;
#: ``specname="context"`` implements a hook under another function name.
hookimpl = pluggy.HookimplMarker("pi")

__all__ = ["hookimpl"]
