"""Garbage collection around start-up (see :func:`pi_core.cli.main`)."""

from __future__ import annotations

import gc


def startup_done() -> None:
    """Start-up is over: move everything made so far out of the collector's way and resume collecting.

    Objects alive now (modules, schemas, plugins, the session) live until exit; freezing them keeps
    every later collection, during a long session too, from rescanning them.
    """
    gc.freeze()
    gc.enable()
