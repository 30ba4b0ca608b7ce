"""Offering to install the packages that settings list but that are missing (interactive start only).

pi installs them silently at start-up; here the user is asked first, every time, and a project's
packages are only ever offered once the project is trusted (its settings are not read before).
"""

from __future__ import annotations

import sys
from typing import Any


def offer_missing(host: Any, ask: Any = input) -> bool:
    """Ask whether to install ``host.packages.missing`` now; install them on yes. True when installed."""
    from .install import InstallError, Installer

    missing = host.packages.missing
    names = ", ".join(f"{p.source.text} ({'project' if p.scope == 'project' else 'user'})" for p in missing)
    sys.stderr.write(f"pi: settings list {len(missing)} package(s) that are not installed: {names}\n"
                     "    Install them now into pi's environment?  y = yes   Enter = not now: ")
    sys.stderr.flush()
    try:
        answer = ask().strip().lower()
    except (EOFError, KeyboardInterrupt):
        return False
    if answer not in ("y", "yes"):
        sys.stderr.write("pi: not installed; `pi install` installs them later\n")
        return False
    installer = Installer(host.cwd, host.agent_dir, out=lambda text: print(text, file=sys.stderr))
    done = False
    for package in missing:
        try:
            installer.install(package.source, package.scope)
        except InstallError as exc:
            sys.stderr.write(f"pi: {exc}\n")
            continue
        sys.stderr.write(f"pi: installed {package.source.text}\n")
        done = True
    if done:
        from ..entry_points import clear_entry_point_cache

        clear_entry_point_cache()
    return done


__all__ = ["offer_missing"]
